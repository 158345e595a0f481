/* Matrix fused multiply-add (mfma.py): the layout tables come from the numpy semantics' own Plan (lowered into
 * the program's aux table by pyhip/emu/native/lower_mfma.py):
 *   aux[a0 + 0..5] = M, K, blocks, kpl, output registers, width (2 for f64)
 *   then M*K*blocks words: lane << 4 | item of A[b][i][k] (B[b][j][k] uses the same pattern with j)
 *   then registers*64 words: (b * M + i) * M + j, the D element register r of lane l holds
 *   then 64 words of the A lane broadcast (CBSZ/ABID) and 64 of the B lane pattern (BLGP), -1 when none,
 *   then v_smfmac's compression index register and the bit its set of indices starts at (-1, 0: dense).
 * x = kind of A | kind of B << 4 (MK_*); imm bits: 1 integer, 2 f64, 4/8/16 NEG of A/B/C (f64), 32 C constant,
 * 64 sparse A (v_smfmac, gfx942: kpl / 2 stored values per lane, two per group of four k).
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
    if (in->imm & 64) {               /* mfma._sparse_a: index nibble g (index1 << 2 | index0) places pair g */
        const int32_t* sp = b_src + LANES;
        double comp[LANES][16];
        mfma_inputs(w, in, 0, in->x & 15, kpl / 2, comp);
        const uint32_t* idx = vreg(w, sp[0]);
        for (int l = 0; l < LANES; l++) {
            uint32_t x = idx[l] >> sp[1];
            for (int e = 0; e < kpl; e++) av[l][e] = 0;
            for (int g = 0; g < kpl / 4; g++) {
                uint32_t nib = x >> (4 * g) & 0xF;
                av[l][4 * g + (nib & 3)] = comp[l][2 * g];
                av[l][4 * g + (nib >> 2)] = comp[l][2 * g + 1];
            }
        }
    } else {
        mfma_inputs(w, in, 0, in->x & 15, kpl, av);
    }
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
            } else {                  /* D + C rounded once to float; lanes whose sum is NaN take addd's payload */
                double dv[LANES], cv[LANES], cs = (double)u2f(in->k[2]);
                uint32_t res[LANES], nan = 0;
                for (int l = 0; l < LANES; l++) dv[l] = D[ix[l]];
                for (int l = 0; l < LANES; l++) cv[l] = C ? (double)u2f(C[l]) : cs;
                for (int l = 0; l < LANES; l++) {
                    double x = dv[l] + cv[l];
                    nan |= x != x;
                    res[l] = f2u((float)x);
                }
                if (UNLIKELY(nan))
                    for (int l = 0; l < LANES; l++) res[l] = f2u((float)addd(dv[l], cv[l]));
                memcpy(o, res, sizeof res);
            }
        }
    }
    if (!direct)
        for (int r = 0; r < nregs * width; r++) memcpy(vreg(w, in->d + r), outw[r], 256);
    return ST_CONT;
}

/* RDNA3 WMMA (semantics/wmma.py): D = A·B + C on 16x16 matrices, wave32 or wave64.  A[i][k] in lane i's
 * registers (lanes 0-15 are read: the replicas must hold the same data), element k % per of register k / per;
 * B[k][j] the same in lane j; C/D element [i][j] in register i / per, lane 16 * (i % per) + j (per = wave / 16),
 * a full dword or, for 16-bit results, the half OP_SEL[2] picks (the other half kept).  Products exact in
 * binary64, summed in k order from +0 then C added, each step with numpy's NaN choice (the reference does the
 * same); one rounding to the result format.  EXEC is ignored.
 * x = input kind | result kind << 4; imm: bits 0-2 NEG, 3-5 NEG_HI, 6 CLAMP, 7 OP_SEL[2], 8 C is k[2]. */
enum { WK_F16 = 0, WK_BF16, WK_IU8, WK_IU4 };
enum { WO_F32 = 0, WO_F16, WO_BF16, WO_I32 };

/* one operand: X[lane][k] (floats; NEG flips the sign of the even-k / odd-k halves) or XI (integers, signed
 * when sgn) */
static void wmma_operand(const Wave* w, int reg, int kind, int sgn, int neg_lo, int neg_hi, double (*X)[16],
                         int64_t (*XI)[16]) {
    int bits = kind <= WK_BF16 ? 16 : kind == WK_IU8 ? 8 : 4, per = 32 / bits;
    uint32_t fmask = (1u << bits) - 1;
    for (int k = 0; k < 16; k++) {
        const uint32_t* R = vreg(w, reg + k / per);
        int sh = (k % per) * bits;
        for (int l = 0; l < 16; l++) {
            uint32_t e = (R[l] >> sh) & fmask;
            if (kind == WK_F16 || kind == WK_BF16) {
                if ((k & 1) ? neg_hi : neg_lo) e ^= 0x8000;
                X[l][k] = kind == WK_F16 ? h2d(e) : (double)u2f(e << 16);
            } else {
                XI[l][k] = (sgn && (e >> (bits - 1))) ? (int64_t)e - (1LL << bits) : (int64_t)e;
            }
        }
    }
}

INLINE uint32_t wmma_bf16(double x) {
    if (x != x) return 0x7FC0;
    uint32_t u = f2u((float)x);
    return (uint32_t)(((uint64_t)u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF;
}

H(v_wmma) {
    int kin = in->x & 15, kout = in->x >> 4, lanes = wave_lanes(w), per = lanes / 16, ncd = 16 / per;
    int neg = in->imm & 7, neg_hi = (in->imm >> 3) & 7, clamp = (in->imm >> 6) & 1, hi = (in->imm >> 7) & 1;
    int integer = kin == WK_IU8 || kin == WK_IU4;
    double A[16][16], B[16][16];
    int64_t AI[16][16], BI[16][16];
    wmma_operand(w, in->s[0], kin, neg & 1, !integer && (neg & 1), !integer && (neg_hi & 1), A, AI);
    wmma_operand(w, in->s[1], kin, neg >> 1 & 1, !integer && (neg >> 1 & 1), !integer && (neg_hi >> 1 & 1), B, BI);
    uint32_t out[8][LANES];
    for (int r = 0; r < ncd; r++) {
        const uint32_t* C = (in->imm & 256) ? NULL : vreg(w, in->s[2] + r);
        const uint32_t* old = vreg(w, in->d + r);
        for (int l = 0; l < lanes; l++) {
            int i = per * r + l / 16, j = l % 16;
            uint32_t craw = C ? C[l] : in->k[2];
            if (integer) {
                int64_t acc = 0;
                for (int k = 0; k < 16; k++) acc += AI[i][k] * BI[j][k];
                acc += (int64_t)(int32_t)craw;
                if (clamp) acc = acc < INT32_MIN ? INT32_MIN : acc > INT32_MAX ? INT32_MAX : acc;
                out[r][l] = (uint32_t)acc;
                continue;
            }
            uint32_t c16 = (hi ? craw >> 16 : craw) & 0xFFFF;
            double cv = kout == WO_F16 ? h2d(c16) : kout == WO_BF16 ? (double)u2f(c16 << 16) : (double)u2f(craw);
            if (neg_hi & 4) cv = u2d(d2u(cv) & 0x7FFFFFFFFFFFFFFFULL);
            if (neg & 4) cv = u2d(d2u(cv) ^ 0x8000000000000000ULL);
            double acc = 0.0;
            for (int k = 0; k < 16; k++) acc = addd(acc, nan2d(A[i][k], B[j][k], A[i][k] * B[j][k]));
            double d = addd(acc, cv);
            if (kout == WO_F32) {
                out[r][l] = f2u((float)d);
                continue;
            }
            uint32_t h = kout == WO_F16 ? f64_to_f16(d2u(d)) : wmma_bf16(d);
            out[r][l] = hi ? (old[l] & 0xFFFFu) | h << 16 : (old[l] & 0xFFFF0000u) | h;
        }
    }
    for (int r = 0; r < ncd; r++) memcpy(vreg(w, in->d + r), out[r], sizeof(uint32_t) * lanes);
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
