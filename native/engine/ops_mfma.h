/* Matrix fused multiply-add (mfma.py): the layout tables come from the numpy semantics' own Plan (lowered into
 * the program's aux table by pyhip/emu/native/lower_mfma.py):
 *   aux[a0 + 0..5] = M, K, blocks, kpl, output registers, width (2 for f64)
 *   then M*K*blocks words: lane << 4 | item of A[b][i][k] (B[b][j][k] uses the same pattern with j)
 *   then registers*64 words: (b * M + i) * M + j, the D element register r of lane l holds
 *   then 64 words of the A lane broadcast (CBSZ/ABID) and 64 of the B lane pattern (BLGP), -1 when none.
 * x = kind of A | kind of B << 4 (MK_*); imm bits: 1 integer, 2 f64, 4/8/16 NEG of A/B/C (f64), 32 C constant.
 * MFMA ignores EXEC: every lane takes part and is written. */

enum { MK_F32 = 0, MK_XF32, MK_F16, MK_BF16, MK_I8, MK_FP8, MK_BF8, MK_F64 };

/* the 256 values of the FNUZ 8-bit floats (Python supplies them: mfma.FP8_VALUES / BF8_VALUES) */
static double g_fp8[256], g_bf8[256];

/* fp.fma64 with numpy's NaN propagation (the first NaN operand, quieted): the f64 products' accumulation */
INLINE double fma64n(double a, double b, double c) {
    if (UNLIKELY(a != a || b != b || c != c)) return qd(a != a ? a : b != b ? b : c);
    return fma64(a, b, c);
}


/* one operand's kpl values per lane (mfma._inputs), as doubles (or exact integers for i8): value e of a lane
 * is the BITS-wide field at bit (e * BITS) % 32 of register (e * BITS) / 32 */
static void mfma_inputs(const Wave* w, const NInst* in, int i, int kind, int kpl, double (*out)[16]) {
    static const uint8_t BITS[8] = {32, 32, 16, 16, 8, 8, 8, 64};
    int bits = BITS[kind];
    int nregs = kpl * bits / 32;
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
    if (kind == MK_F64) {
        for (int l = 0; l < LANES; l++) out[l][0] = u2d((uint64_t)regs[0][l] | (uint64_t)regs[1][l] << 32);
        return;
    }
    for (int e = 0; e < kpl; e++) {
        const uint32_t* R = regs[e * bits / 32];
        int sh = e * bits % 32;
        switch (kind) {
        case MK_F32: for (int l = 0; l < LANES; l++) out[l][e] = (double)u2f(R[l]); break;
        case MK_XF32:
            for (int l = 0; l < LANES; l++) {
                uint32_t u = R[l];
                if (isfinite(u2f(u))) {
                    uint64_t x = u;
                    u = (uint32_t)((x + 0xFFF + ((x >> 13) & 1)) & 0xFFFFE000ULL);
                }
                out[l][e] = (double)u2f(u);
            }
            break;
        case MK_F16: for (int l = 0; l < LANES; l++) out[l][e] = h2d((uint16_t)(R[l] >> sh)); break;
        case MK_BF16: for (int l = 0; l < LANES; l++) out[l][e] = (double)u2f((R[l] >> sh & 0xFFFF) << 16); break;
        case MK_I8: for (int l = 0; l < LANES; l++) out[l][e] = (double)(int8_t)(R[l] >> sh); break;
        case MK_FP8: for (int l = 0; l < LANES; l++) out[l][e] = g_fp8[R[l] >> sh & 0xFF]; break;
        default: for (int l = 0; l < LANES; l++) out[l][e] = g_bf8[R[l] >> sh & 0xFF]; break;
        }
    }
}

/* The products run on dense copies of the operands, A[b][i][k] and B[b][k][j], into a dense D[b][i][j]
 * (aux's output table holds each (register, lane)'s index (b * M + i) * M + j into it).  Every output sums
 * its k terms one after another in k order from +0 (float and integer: products exact in binary64, the
 * integer sums exact) or fuses them into C (f64), as the numpy reference does; the loop over j is the
 * innermost, so the compiler vectorises across outputs, never across the k order. */
#define MFMA_MAX_AK 1024      /* M * K * blocks of every dense shape (at most 512) */
#define MFMA_MAX_D 2048       /* M * M * blocks = output registers * 64 */

INLINE void mfma_dot(const double* A, const double* B, double* D, int blocks, int K, const int M) {
    for (int bi = 0; bi < blocks * M; bi++) {
        const double* Ai = A + (size_t)bi * K;
        const double* Bb = B + (size_t)(bi / M) * K * M;
        double acc[32];
        for (int j = 0; j < M; j++) acc[j] = 0;
        for (int k = 0; k < K; k++) {
            double x = Ai[k];
            const double* Bk = Bb + (size_t)k * M;
            for (int j = 0; j < M; j++) acc[j] += x * Bk[j];
        }
        memcpy(D + (size_t)bi * M, acc, sizeof(double) * M);
    }
}

H(v_mfma) {
    const int32_t* t = c->d->aux + in->a0;
    int M = t[0], K = t[1], blocks = t[2], kpl = t[3], nregs = t[4], width = t[5];
    const int32_t* a_idx = t + 6;
    const int32_t* outidx = a_idx + M * K * blocks;
    const int32_t* a_src = outidx + nregs * LANES;
    const int32_t* b_src = a_src + LANES;
    int integer = in->imm & 1, f64 = in->imm & 2;
    if (M > 32 || M * K * blocks > MFMA_MAX_AK || M * M * blocks > MFMA_MAX_D || nregs * LANES > MFMA_MAX_D)
        return raise_fault(c, w, FK_INTERNAL, -1, 0, 0, 0, 2);
    double av[LANES][16], bv[LANES][16];
    mfma_inputs(w, in, 0, in->x & 15, kpl, av);
    mfma_inputs(w, in, 1, in->x >> 4, kpl, bv);
    const int32_t* asrc = a_src[0] >= 0 ? a_src : NULL;
    const int32_t* bsrc = b_src[0] >= 0 ? b_src : NULL;
    double A[MFMA_MAX_AK], B[MFMA_MAX_AK], D[MFMA_MAX_D];
    double sa = (in->imm & 4) ? -1.0 : 1.0, sb = (in->imm & 8) ? -1.0 : 1.0;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) {
                int p = a_idx[(i * K + k) * blocks + b], la = p >> 4, lb = p >> 4;
                if (asrc) la = asrc[la];
                if (bsrc) lb = bsrc[lb];
                double x = av[la][p & 15], y = bv[lb][p & 15];
                if (f64) {
                    if (in->imm & 4) x = -x;
                    if (in->imm & 8) y = -y;
                } else {
                    x = sa * x;
                    y = sb * y;
                }
                A[(b * M + i) * K + k] = x;
                B[(b * K + k) * M + i] = y;
            }
    uint32_t outw[32][LANES];
    /* C (read before D is written: D may overlap it) */
    int direct = (in->imm & 32) || in->d == in->s[2];
    if (f64) {
        for (int r = 0; r < nregs; r++) {
            const int32_t* ix = outidx + r * LANES;
            if (in->imm & 32) {
                double d = u2d((uint64_t)in->k[2] | (uint64_t)in->khi[2] << 32);
                if (in->imm & 16) d = -d;
                for (int l = 0; l < LANES; l++) D[ix[l]] = d;
            } else {
                const uint32_t* lo = vreg(w, in->s[2] + 2 * r);
                const uint32_t* hi = vreg(w, in->s[2] + 2 * r + 1);
                for (int l = 0; l < LANES; l++) {
                    double d = u2d((uint64_t)lo[l] | (uint64_t)hi[l] << 32);
                    D[ix[l]] = (in->imm & 16) ? -d : d;
                }
            }
        }
        for (int b = 0; b < blocks; b++)
            for (int i = 0; i < M; i++) {
                double* Di = D + (b * M + i) * M;
                for (int k = 0; k < K; k++) {
                    double x = A[(b * M + i) * K + k];
                    const double* Bk = B + (b * K + k) * M;
                    for (int j = 0; j < M; j++) Di[j] = fma64n(x, Bk[j], Di[j]);
                }
            }
        for (int r = 0; r < nregs; r++) {
            const int32_t* ix = outidx + r * LANES;
            uint32_t* lo = direct ? vreg(w, in->d + 2 * r) : outw[2 * r];
            uint32_t* hi = direct ? vreg(w, in->d + 2 * r + 1) : outw[2 * r + 1];
            for (int l = 0; l < LANES; l++) {
                uint64_t u = d2u(D[ix[l]]);
                lo[l] = (uint32_t)u;
                hi[l] = (uint32_t)(u >> 32);
            }
        }
    } else {
        switch (M) {
        case 4: mfma_dot(A, B, D, blocks, K, 4); break;
        case 16: mfma_dot(A, B, D, blocks, K, 16); break;
        case 32: mfma_dot(A, B, D, blocks, K, 32); break;
        default: mfma_dot(A, B, D, blocks, K, M); break;
        }
        for (int r = 0; r < nregs; r++) {
            const int32_t* ix = outidx + r * LANES;
            uint32_t* o = direct ? vreg(w, in->d + r) : outw[r];
            const uint32_t* C = (in->imm & 32) ? NULL : vreg(w, in->s[2] + r);
            if (integer) {
                if (C) for (int l = 0; l < LANES; l++) o[l] = (uint32_t)((int64_t)D[ix[l]] + (int64_t)(int32_t)C[l]);
                else {
                    int64_t cv = (int64_t)(int32_t)in->k[2];
                    for (int l = 0; l < LANES; l++) o[l] = (uint32_t)((int64_t)D[ix[l]] + cv);
                }
            } else {
                if (C) for (int l = 0; l < LANES; l++) o[l] = f2u((float)addd(D[ix[l]], (double)u2f(C[l])));
                else {
                    double cv = (double)u2f(in->k[2]);
                    for (int l = 0; l < LANES; l++) o[l] = f2u((float)addd(D[ix[l]], cv));
                }
            }
        }
    }
    if (!direct)
        for (int r = 0; r < nregs * width; r++) memcpy(vreg(w, in->d + r), outw[r], 256);
    return ST_CONT;
}

/* v_accvgpr_read / write / mov (mfma.py): one row copied under EXEC between the architectural and the
 * accumulation VGPRs (the lowering adds accum_offset to the accumulation side; s[0] may be an SGPR or a
 * constant for v_accvgpr_write) */
H(v_accvgpr_mov) {
    uint32_t t[LANES];
    wv(w, in->d, src32(w, in, 0, t), exec_of(w));
    return ST_CONT;
}
