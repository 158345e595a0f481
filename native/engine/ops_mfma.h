/* Matrix fused multiply-add (mfma.py): the layout tables come from the numpy semantics' own Plan (lowered into
 * the program's aux table by pyhip/emu/native/lower_mfma.py):
 *   aux[a0 + 0..5] = M, K, blocks, kpl, output registers, width (2 for f64)
 *   then M*K*blocks words: lane << 4 | item of A[b][i][k] (B[b][j][k] uses the same pattern with j)
 *   then registers*64 words: i | j << 8 | b << 16 of the D element register r of lane l holds
 *   then 64 words of the A lane broadcast (CBSZ/ABID) and 64 of the B lane pattern (BLGP), -1 when none.
 * x = kind of A | kind of B << 4 (MK_*); imm bits: 1 integer, 2 f64, 4/8/16 NEG of A/B/C (f64), 32 C constant.
 * MFMA ignores EXEC: every lane takes part and is written. */

enum { MK_F32 = 0, MK_XF32, MK_F16, MK_BF16, MK_I8, MK_FP8, MK_BF8, MK_F64 };


/* one operand's kpl values per lane (mfma._inputs), as doubles (or exact integers for i8) */
static void mfma_inputs(const Wave* w, const NInst* in, int i, int kind, int kpl, double (*out)[16]) {
    static const uint8_t BITS[8] = {32, 32, 16, 16, 8, 8, 8, 64};
    int nregs = kpl * BITS[kind] / 32;
    if (nregs < 1) nregs = 1;
    uint32_t regs[8][LANES];
    uint16_t s = in->s[i];
    for (int r = 0; r < nregs; r++) {
        if (SRC_KIND(s) == SRC_V) memcpy(regs[r], vreg(w, s + r), 256);
        else {
            uint32_t v = ssrc(w, in, i);
            for (int l = 0; l < LANES; l++) regs[r][l] = v;
        }
    }
    for (int l = 0; l < LANES; l++) {
        uint8_t bytes[32];
        for (int r = 0; r < nregs; r++) memcpy(bytes + 4 * r, &regs[r][l], 4);
        for (int e = 0; e < kpl; e++) {
            double v;
            switch (kind) {
            case MK_F32: { uint32_t u; memcpy(&u, bytes + 4 * e, 4); v = (double)u2f(u); } break;
            case MK_XF32: {
                uint32_t u;
                memcpy(&u, bytes + 4 * e, 4);
                float f = u2f(u);
                if (isfinite(f)) {
                    uint64_t x = u;
                    u = (uint32_t)((x + 0xFFF + ((x >> 13) & 1)) & 0xFFFFE000ULL);
                }
                v = (double)u2f(u);
            } break;
            case MK_F16: { uint16_t h; memcpy(&h, bytes + 2 * e, 2); v = h2d(h); } break;
            case MK_BF16: { uint16_t h; memcpy(&h, bytes + 2 * e, 2); v = (double)u2f((uint32_t)h << 16); } break;
            case MK_I8: v = (double)(int8_t)bytes[e]; break;
            case MK_FP8: v = g_fp8[bytes[e]]; break;
            case MK_BF8: v = g_bf8[bytes[e]]; break;
            default: { uint64_t u; memcpy(&u, bytes + 8 * e, 8); v = u2d(u); } break;
            }
            out[l][e] = v;
        }
    }
}

H(v_mfma) {
    const int32_t* t = c->d->aux + in->a0;
    int M = t[0], K = t[1], blocks = t[2], kpl = t[3], nregs = t[4], width = t[5];
    const int32_t* a_idx = t + 6;
    const int32_t* outmap = a_idx + M * K * blocks;
    const int32_t* a_src = outmap + nregs * LANES;
    const int32_t* b_src = a_src + LANES;
    int integer = in->imm & 1, f64 = in->imm & 2;
    double (*av)[16] = malloc(sizeof(double[LANES][16]) * 2);
    double (*bv)[16] = av + LANES;
    if (!av) return raise_fault(c, w, FK_INTERNAL, -1, 0, 0, 0, 2);
    mfma_inputs(w, in, 0, in->x & 15, kpl, av);
    mfma_inputs(w, in, 1, in->x >> 4, kpl, bv);
    if (a_src[0] >= 0) {
        double tmp[LANES][16];
        for (int l = 0; l < LANES; l++) memcpy(tmp[l], av[a_src[l]], sizeof tmp[l]);
        memcpy(av, tmp, sizeof tmp);
    }
    if (b_src[0] >= 0) {
        double tmp[LANES][16];
        for (int l = 0; l < LANES; l++) memcpy(tmp[l], bv[b_src[l]], sizeof tmp[l]);
        memcpy(bv, tmp, sizeof tmp);
    }
    double sa = (in->imm & 4) ? -1.0 : 1.0, sb = (in->imm & 8) ? -1.0 : 1.0;
    uint32_t outw[32][LANES];
    for (int r = 0; r < nregs; r++) {
        for (int l = 0; l < LANES; l++) {
            int32_t ijb = outmap[r * LANES + l];
            int i = ijb & 0xFF, j = (ijb >> 8) & 0xFF, b = ijb >> 16;
            const int32_t* ai = a_idx + (size_t)i * K * blocks + b;
            const int32_t* bj = a_idx + (size_t)j * K * blocks + b;
            if (f64) {
                uint64_t cbits;
                if (in->imm & 32) cbits = (uint64_t)in->k[2] | (uint64_t)in->khi[2] << 32;
                else cbits = (uint64_t)vreg(w, in->s[2] + 2 * r)[l] | (uint64_t)vreg(w, in->s[2] + 2 * r + 1)[l] << 32;
                double d = u2d(cbits);
                if (in->imm & 16) d = -d;
                for (int k = 0; k < K; k++) {
                    int pa = ai[k * blocks], pb = bj[k * blocks];
                    double x = av[pa >> 4][pa & 15], y = bv[pb >> 4][pb & 15];
                    if (in->imm & 4) x = -x;
                    if (in->imm & 8) y = -y;
                    d = fma64n(x, y, d);
                }
                uint64_t u = d2u(d);
                outw[2 * r][l] = (uint32_t)u;
                outw[2 * r + 1][l] = (uint32_t)(u >> 32);
            } else if (integer) {
                int64_t acc = 0;
                for (int k = 0; k < K; k++) {
                    int pa = ai[k * blocks], pb = bj[k * blocks];
                    acc += (int64_t)av[pa >> 4][pa & 15] * (int64_t)bv[pb >> 4][pb & 15];
                }
                int64_t cv = (in->imm & 32) ? (int64_t)(int32_t)in->k[2] : (int64_t)(int32_t)vreg(w, in->s[2] + r)[l];
                outw[r][l] = (uint32_t)(acc + cv);
            } else {
                double acc = 0;
                for (int k = 0; k < K; k++) {
                    int pa = ai[k * blocks], pb = bj[k * blocks];
                    acc += (sa * av[pa >> 4][pa & 15]) * (sb * bv[pb >> 4][pb & 15]);
                }
                float cv = u2f((in->imm & 32) ? in->k[2] : vreg(w, in->s[2] + r)[l]);
                outw[r][l] = f2u((float)addd(acc, (double)cv));
            }
        }
    }
    free(av);
    for (int r = 0; r < nregs * width; r++) memcpy(vreg(w, in->d + r), outw[r], 256);
    return ST_CONT;
}
