/* Packed math (packed.py: VOP3P v_pk_*, dot products, v_fma_mix*, v_mac_f16 & co.; valu.py: v_pk_*_f32) and
 * vector compares (vcmp.py).  Handlers.
 *
 * VOP3P modifier bits in NInst.a0: opsel[2:0] | opsel_hi[5:3] | neg[8:6] | neg_hi[11:9] | clamp[12]. */
#define P_OPSEL(i) ((in->a0 >> (i)) & 1)
#define P_OPSELHI(i) ((in->a0 >> (3 + (i))) & 1)
#define P_NEG(i) ((in->a0 >> (6 + (i))) & 1)
#define P_NEGHI(i) ((in->a0 >> (9 + (i))) & 1)
#define P_CLAMP ((in->a0 >> 12) & 1)

H(v_pk16) {
    /* x: the operation; s[i]: sources read as b32 (f16 inline constants for f16 ops) */
    uint32_t ALIGN64 t[3][LANES], R[LANES];
    const uint32_t* S[3];
    int n = pk16_nsrc(in->x), f16 = pk16_is_f16(in->x);
    for (int i = 0; i < n; i++) S[i] = src32(w, in, i, t[i]);
    LOOP {
        uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            uint32_t v = S[i][l];
            lo[i] = (P_OPSEL(i) ? v >> 16 : v) & 0xFFFF;
            hi[i] = (P_OPSELHI(i) ? v >> 16 : v) & 0xFFFF;
            if (f16 && P_NEG(i)) lo[i] ^= 0x8000;
            if (f16 && P_NEGHI(i)) hi[i] ^= 0x8000;
        }
        uint32_t rl = pk16_op(in->x, lo[0], lo[1], lo[2]), rh = pk16_op(in->x, hi[0], hi[1], hi[2]);
        if (f16 && P_CLAMP) { rl = hclamp(rl); rh = hclamp(rh); }
        R[l] = (rl & 0xFFFF) | (rh << 16);
    }
    wv(w, in->d, R, exec_of(w));
    return ST_CONT;
}
H(v_pk_f32) {
    /* x: 0 mul, 1 add, 2 fma (valu._pk): OP_SEL / OP_SEL_HI pick register r or r+1 of each source */
    float ALIGN64 lo[3][LANES], hi[3][LANES];
    uint32_t ALIGN64 t[LANES], R0[LANES], R1[LANES];
    int n = in->x == 2 ? 3 : 2;
    for (int i = 0; i < n; i++) {
        const uint32_t* a = src32(w, in, i, t);
        uint32_t ta[LANES];
        memcpy(ta, a, 256);
        uint32_t th[LANES];
        const uint32_t* b = src32_next(w, in, i, th);
        for (int l = 0; l < LANES; l++) {
            uint32_t vl = P_OPSEL(i) ? b[l] : ta[l], vh = P_OPSELHI(i) ? b[l] : ta[l];
            if (P_NEG(i)) vl ^= 0x80000000u;
            if (P_NEGHI(i)) vh ^= 0x80000000u;
            lo[i][l] = u2f(vl);
            hi[i][l] = u2f(vh);
        }
    }
    switch (in->x) {
    case 0: LOOP { R0[l] = f2u(mulf(lo[0][l], lo[1][l])); R1[l] = f2u(mulf(hi[0][l], hi[1][l])); } break;
    case 1: LOOP { R0[l] = f2u(addf(lo[0][l], lo[1][l])); R1[l] = f2u(addf(hi[0][l], hi[1][l])); } break;
    default: LOOP { R0[l] = f2u(fma32n(lo[0][l], lo[1][l], lo[2][l])); R1[l] = f2u(fma32n(hi[0][l], hi[1][l], hi[2][l])); } break;
    }
    uint64_t m = exec_of(w);
    wv(w, in->d, R0, m);
    wv(w, in->d + 1, R1, m);
    return ST_CONT;
}
H(v_pk_mov_b32) {
    /* the lowering picked the codes: s[0] -> D, s[1] -> D + 1 */
    uint32_t ALIGN64 ta[LANES], tb[LANES], A[LANES], B[LANES];
    memcpy(A, src32(w, in, 0, ta), 256);
    memcpy(B, src32(w, in, 1, tb), 256);
    uint64_t m = exec_of(w);
    wv(w, in->d, A, m);
    wv(w, in->d + 1, B, m);
    return ST_CONT;
}
H(v_dot) {
    /* x: 0 f32_f16, 1 i32_i16, 2 u32_u16, 3 i32_i8, 4 u32_u8, 5 i32_i4, 6 u32_u4; imm bit 0: accumulate into
     * D (v_dot*c); imm bits 6..8 / 9..11: NEG / NEG_HI of each source (VOP3P v_dot2_f32_f16) */
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* C_ = (in->imm & 1) ? vreg(w, in->d) : G32(2);
    uint32_t neg = ((uint32_t)in->imm >> 6) & 7, neghi = ((uint32_t)in->imm >> 9) & 7;
    LOOP {
        uint32_t a = A[l], b = B[l], cc = C_[l];
        if (in->x == 0 && (neg | neghi)) {
            a ^= (neg & 1 ? 0x8000u : 0) | (neghi & 1 ? 0x80000000u : 0);
            b ^= (neg & 2 ? 0x8000u : 0) | (neghi & 2 ? 0x80000000u : 0);
            cc ^= (neg & 4 ? 0x8000u : 0) | (neghi & 4 ? 0x80000000u : 0);
        }
        R[l] = dot_op(in->x, a, b, cc);
    }
    if (!gen) wv(w, in->d, R, exec_of(w)); else vstore_gen(c, w, in, R);
    return ST_CONT;
}
H(v_fma_mix) {
    /* x: 0 f32 result, 1 mixlo (f16 into the low half), 2 mixhi */
    uint32_t ALIGN64 t[3][LANES], R[LANES];
    const uint32_t* S[3];
    for (int i = 0; i < 3; i++) S[i] = src32(w, in, i, t[i]);
    const uint32_t* old = vreg(w, in->d);
    LOOP {
        double v[3];
        for (int i = 0; i < 3; i++) {
            uint32_t u = S[i][l];
            double x = P_OPSELHI(i) ? h2d((P_OPSEL(i) ? u >> 16 : u) & 0xFFFF) : (double)u2f(u);
            if (P_NEGHI(i)) x = fabs(x);
            v[i] = P_NEG(i) ? -x : x;
        }
        double r = fma_nudged(v[0], v[1], v[2]);
        if (in->x) {
            uint32_t h = d2h(r);
            if (P_CLAMP) h = hclamp(h);
            R[l] = in->x == 2 ? ((old[l] & 0xFFFFu) | (h << 16)) : ((old[l] & 0xFFFF0000u) | h);
        } else {
            float f = (float)r;
            if (P_CLAMP) f = f != f ? 0.0f : (f < 0 ? 0.0f : f > 1 ? 1.0f : f);
            R[l] = f2u(f);
        }
    }
    wv(w, in->d, R, exec_of(w));
    return ST_CONT;
}
H(v_mac16) {
    /* x: 0 v_mac_f16 (D = S0 * S1 + D), 1 madmk (S0 * K + S1), 2 madak (S0 * S1 + K); K = imm */
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* D = vreg(w, in->d);
    uint32_t k = (uint32_t)in->imm & 0xFFFF;
    LOOP {
        uint32_t a = A[l] & 0xFFFF, b = B[l] & 0xFFFF;
        R[l] = in->x == 0 ? mad16(a, b, D[l] & 0xFFFF, w->mode) : in->x == 1 ? mad16(a, k, b, w->mode) : mad16(a, b, k, w->mode);
    }
    if (!gen) wv(w, in->d, R, exec_of(w)); else vstore_gen(c, w, in, R);
    return ST_CONT;
}
H(v_pk_fmac_f16) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* D = vreg(w, in->d);
    LOOP {
        uint32_t out = 0;
        for (int sh = 0; sh < 32; sh += 16)
            out |= d2h(addd(muld(h2d((A[l] >> sh) & 0xFFFF), h2d((B[l] >> sh) & 0xFFFF)), h2d((D[l] >> sh) & 0xFFFF))) << sh;
        R[l] = out;
    }
    if (!gen) wv(w, in->d, R, exec_of(w)); else vstore_gen(c, w, in, R);
    return ST_CONT;
}

/* ---- compares: x = condition | 16 (v_cmpx: also EXEC); sd = the mask destination --------------------------- */
/* one loop per condition (so the compiler vectorizes it), results packed into a lane mask */
#define FCMP_LOOPS(T, X)                                                                              \
    switch (in->x & 15) {                                                                             \
    case 0: LOOP B_[l] = 0; break;                                                                    \
    case 1: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a < b; } break;                                \
    case 2: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a == b; } break;                               \
    case 3: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a <= b; } break;                               \
    case 4: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a > b; } break;                                \
    case 5: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = (a < b) | (a > b); } break;                    \
    case 6: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a >= b; } break;                               \
    case 7: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = (a == a) & (b == b); } break;                  \
    case 8: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !((a == a) & (b == b)); } break;               \
    case 9: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !(a >= b); } break;                            \
    case 10: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !((a < b) | (a > b)); } break;                \
    case 11: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !(a > b); } break;                            \
    case 12: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !(a <= b); } break;                           \
    case 13: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !(a == b); } break;                           \
    case 14: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = !(a < b); } break;                            \
    default: LOOP B_[l] = 1; break;                                                                   \
    }
#define ICMP_LOOPS(T, X)                                                                              \
    switch (in->x & 15) {                                                                             \
    case 0: LOOP B_[l] = 0; break;                                                                    \
    case 1: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a < b; } break;                                \
    case 2: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a == b; } break;                               \
    case 3: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a <= b; } break;                               \
    case 4: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a > b; } break;                                \
    case 5: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a != b; } break;                               \
    case 6: LOOP { T a = X(A[l]), b = X(B[l]); B_[l] = a >= b; } break;                               \
    default: LOOP B_[l] = 1; break;                                                                   \
    }
#define CMP32(NAME, T, X, LOOPS)                                                                      \
    H(NAME) {                                                                                         \
        VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);                                \
        uint32_t B_[LANES];                                                                           \
        LOOPS(T, X)                                                                                   \
        cmp_result(c, w, in, pack_mask(B_));                                                          \
        return ST_CONT;                                                                               \
    }
#define CMP64(NAME, T, X, LOOPS)                                                                      \
    H(NAME) {                                                                                         \
        VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1);                                \
        uint32_t B_[LANES];                                                                           \
        LOOPS(T, X)                                                                                   \
        cmp_result(c, w, in, pack_mask(B_));                                                          \
        return ST_CONT;                                                                               \
    }
#define X_F32(v) u2f(v)
#define X_F16(v) h2f((v) & 0xFFFF)
#define X_F64(v) u2d(v)
#define X_I32(v) ((int32_t)(v))
#define X_U32(v) (v)
#define X_I16(v) ((int32_t)(int16_t)(v))
#define X_U16(v) ((v) & 0xFFFF)
#define X_I64(v) ((int64_t)(v))
#define X_U64(v) (v)
CMP32(vcmp_f32, float, X_F32, FCMP_LOOPS)
CMP32(vcmp_f16, float, X_F16, FCMP_LOOPS)
CMP64(vcmp_f64, double, X_F64, FCMP_LOOPS)
CMP32(vcmp_i32, int32_t, X_I32, ICMP_LOOPS)
CMP32(vcmp_u32, uint32_t, X_U32, ICMP_LOOPS)
CMP32(vcmp_i16, int32_t, X_I16, ICMP_LOOPS)
CMP32(vcmp_u16, uint32_t, X_U16, ICMP_LOOPS)
CMP64(vcmp_i64, int64_t, X_I64, ICMP_LOOPS)
CMP64(vcmp_u64, uint64_t, X_U64, ICMP_LOOPS)
H(vcmp_class_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    uint32_t B_[LANES];
    LOOP B_[l] = (B[l] >> class32(A[l])) & 1;
    cmp_result(c, w, in, pack_mask(B_));
    return ST_CONT;
}
H(vcmp_class_f64) {
    VSETUP const uint64_t* A = G64(0); const uint32_t* B = G32(1);
    uint32_t B_[LANES];
    LOOP B_[l] = (B[l] >> class64(A[l])) & 1;
    cmp_result(c, w, in, pack_mask(B_));
    return ST_CONT;
}
