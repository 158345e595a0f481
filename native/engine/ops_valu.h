/* Vector ALU (valu.py, valu16.py, valu_div.py, packed.py): handlers.
 * Every expression is the numpy reference's, operation for operation (see the .py files). */
#include "rows64.h"

/* ---- 32-bit float --------------------------------------------------------------------------------------- */
H(v_add_f32) { F2(addf(a, b)); return ST_CONT; }
H(v_sub_f32) { F2(subf(a, b)); return ST_CONT; }
H(v_subrev_f32) { F2(subf(b, a)); return ST_CONT; }
H(v_mul_f32) { F2(mulf(a, b)); return ST_CONT; }
H(v_max_f32) { F2(ieee_f(a, b, fmaxn_f(a, b), w->mode)); return ST_CONT; }
H(v_min_f32) { F2(ieee_f(a, b, fminn_f(a, b), w->mode)); return ST_CONT; }
H(v_fma_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2);
    fma32_rows(A, B, C_, R, exec_of(w));
    END32();
    return ST_CONT;
}
H(v_mad_f32) { F3(mad32(a, b, cc, w->mode)); return ST_CONT; }
H(v_ldexp_f32) {
    { VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    LOOP { int32_t e = (int32_t)B[l]; e = e < -300 ? -300 : e > 300 ? 300 : e; R[l] = f2u(ldexp32(u2f(A[l]), e)); }
    END32(); }
    return ST_CONT;
}
H(v_max3_f32) { F3(fmaxn_f(fmaxn_f(a, b), cc)); return ST_CONT; }
H(v_min3_f32) { F3(fminn_f(fminn_f(a, b), cc)); return ST_CONT; }
H(v_med3_f32) { F3(fmaxn_f(fminn_f(a, b), fminn_f(fmaxn_f(a, b), cc))); return ST_CONT; }
H(v_rcp_f32) { F1(divf(1.0f, u2f(a))); return ST_CONT; }
H(v_rsq_f32) { F1((float)(1.0 / sqrt((double)u2f(a)))); return ST_CONT; }
H(v_sqrt_f32) { F1(sqrtf(u2f(a))); return ST_CONT; }
H(v_exp_f32) { F1((float)exp2((double)u2f(a))); return ST_CONT; }
H(v_log_f32) { F1((float)log2((double)u2f(a))); return ST_CONT; }
H(v_trunc_f32) { F1(truncf(u2f(a))); return ST_CONT; }
H(v_floor_f32) { F1(floorf(u2f(a))); return ST_CONT; }
H(v_ceil_f32) { F1(ceilf(u2f(a))); return ST_CONT; }
H(v_rndne_f32) { F1(rintf(u2f(a))); return ST_CONT; }
H(v_fract_f32) { F1(fract32(u2f(a))); return ST_CONT; }
H(v_sin_f32) { F1((float)sin((double)u2f(a) * 6.283185307179586)); return ST_CONT; }
H(v_cos_f32) { F1((float)cos((double)u2f(a) * 6.283185307179586)); return ST_CONT; }
H(v_frexp_mant_f32) { F1(isfinite(u2f(a)) ? frexpf_m(u2f(a)) : u2f(a)); return ST_CONT; }
H(v_frexp_exp_i32_f32) { V1(isfinite(u2f(a)) ? (uint32_t)frexp_e((double)u2f(a)) : 0u); return ST_CONT; }
H(v_cvt_f32_u32) { F1((float)a); return ST_CONT; }
H(v_cvt_f32_i32) { F1((float)(int32_t)a); return ST_CONT; }
H(v_cvt_u32_f32) { V1(cvt_u32_d((double)u2f(a))); return ST_CONT; }
H(v_cvt_i32_f32) { V1((uint32_t)cvt_i32_d((double)u2f(a))); return ST_CONT; }
H(v_cvt_f64_f32) {
    { VSETUP const uint32_t* A = G32(0); LOOP Q[l] = d2u((double)u2f(A[l])); END64(); }
    return ST_CONT;
}
H(v_cvt_f32_f64) {
    { VSETUP const uint64_t* A = G64(0); LOOP R[l] = f2u((float)u2d(A[l])); END32(); }
    return ST_CONT;
}
H(v_cvt_f64_i32) {
    { VSETUP const uint32_t* A = G32(0); LOOP Q[l] = d2u((double)(int32_t)A[l]); END64(); }
    return ST_CONT;
}
H(v_cvt_f64_u32) {
    { VSETUP const uint32_t* A = G32(0); LOOP Q[l] = d2u((double)A[l]); END64(); }
    return ST_CONT;
}
H(v_cvt_i32_f64) {
    { VSETUP const uint64_t* A = G64(0); LOOP R[l] = (uint32_t)cvt_i32_d(u2d(A[l])); END32(); }
    return ST_CONT;
}
H(v_cvt_u32_f64) {
    { VSETUP const uint64_t* A = G64(0); LOOP R[l] = cvt_u32_d(u2d(A[l])); END32(); }
    return ST_CONT;
}
H(v_cvt_f16_f32) { V1(f32_to_f16(a)); return ST_CONT; }
H(v_cvt_f32_f16) { V1(f16_to_f32((uint16_t)a)); return ST_CONT; }
H(v_cvt_pkrtz_f16_f32) { V2(f32_to_f16(a) | ((uint32_t)f32_to_f16(b) << 16)); return ST_CONT; }
H(v_mul_legacy_f32) { F2((a == 0 || b == 0) ? 0.0f : mulf(a, b)); return ST_CONT; }
H(v_mad_legacy_f32) { F3(addf((a == 0 || b == 0) ? 0.0f : mulf(a, b), cc)); return ST_CONT; }
H(v_cvt_f32_ubyte0) { F1((float)(a & 0xFF)); return ST_CONT; }
H(v_cvt_f32_ubyte1) { F1((float)((a >> 8) & 0xFF)); return ST_CONT; }
H(v_cvt_f32_ubyte2) { F1((float)((a >> 16) & 0xFF)); return ST_CONT; }
H(v_cvt_f32_ubyte3) { F1((float)(a >> 24)); return ST_CONT; }
H(v_cvt_flr_i32_f32) { V1((uint32_t)(int32_t)clip_i64(floor((double)u2f(a)), -2147483648.0, 2147483647.0)); return ST_CONT; }
H(v_cvt_rpi_i32_f32) { V1((uint32_t)(int32_t)clip_i64(floor((double)u2f(a) + 0.5), -2147483648.0, 2147483647.0)); return ST_CONT; }
H(v_cvt_off_f32_i4) { F1((float)((int32_t)((a & 0xF) ^ 8) - 8) / 16.0f); return ST_CONT; }
H(v_cubeid_f32) { F3(cube(a, b, cc, 0)); return ST_CONT; }
H(v_cubesc_f32) { F3(cube(a, b, cc, 1)); return ST_CONT; }
H(v_cubetc_f32) { F3(cube(a, b, cc, 2)); return ST_CONT; }
H(v_cubema_f32) { F3(cube(a, b, cc, 3)); return ST_CONT; }

/* ---- 64-bit float ---------------------------------------------------------------------------------------- */
/* f64 arithmetic on the rows (rows64.h) when the modifiers allow, else the general form */
#if ROWS64
#define ROWS64_TRY(OP, N, CROWS)                                                                 \
    do {                                                                                         \
        Op64 o_[3];                                                                              \
        Rows64Buf b_;                                                                            \
        int mods_;                                                                               \
        if (op64_init(c, w, in, N, o_, &b_, &mods_)) {                                           \
            if (CROWS) { o_[2].lo = vreg(w, in->d); o_[2].hi = vreg(w, in->d + 1); o_[2].am = o_[2].nm = 0; } \
            uint32_t *dl_ = vreg(w, in->d), *dh_ = vreg(w, in->d + 1);                           \
            if (mods_) rows64_op(OP, 1, &o_[0], &o_[1], &o_[2], dl_, dh_, exec_of(w));           \
            else rows64_op(OP, 0, &o_[0], &o_[1], &o_[2], dl_, dh_, exec_of(w));                 \
            return ST_CONT;                                                                      \
        }                                                                                        \
    } while (0)
#else
#define ROWS64_TRY(OP, N, CROWS) do { } while (0)
#endif
H(v_add_f64) { ROWS64_TRY(R64_ADD, 2, 0); D2(addd(a, b)); return ST_CONT; }
H(v_mul_f64) { ROWS64_TRY(R64_MUL, 2, 0); D2(muld(a, b)); return ST_CONT; }
H(v_max_f64) { D2(ieee_d(a, b, fmaxn_d(a, b), w->mode)); return ST_CONT; }
H(v_min_f64) { D2(ieee_d(a, b, fminn_d(a, b), w->mode)); return ST_CONT; }
H(v_fma_f64) {
    ROWS64_TRY(R64_FMA, 3, 0);
    VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1); const uint64_t* C_ = G64(2);
    fma64_rows(A, B, C_, Q, exec_of(w));
    END64();
    return ST_CONT;
}
H(v_ldexp_f64) {
    { VSETUP const uint64_t* A = G64(0); const uint32_t* B = G32(1);
    LOOP { int32_t e = (int32_t)B[l]; e = e < -3000 ? -3000 : e > 3000 ? 3000 : e; Q[l] = d2u(ldexp64(u2d(A[l]), e)); }
    END64(); }
    return ST_CONT;
}
H(v_rcp_f64) { D1(divd(1.0, a)); return ST_CONT; }
H(v_rsq_f64) { D1(1.0 / sqrt(a)); return ST_CONT; }
H(v_sqrt_f64) { D1(sqrt(a)); return ST_CONT; }
H(v_trunc_f64) { D1(trunc(a)); return ST_CONT; }
H(v_floor_f64) { D1(floor(a)); return ST_CONT; }
H(v_ceil_f64) { D1(ceil(a)); return ST_CONT; }
H(v_rndne_f64) { D1(rint(a)); return ST_CONT; }
H(v_fract_f64) { D1(fract64(a)); return ST_CONT; }
H(v_frexp_mant_f64) { D1(frexp_m(a)); return ST_CONT; }
H(v_frexp_exp_i32_f64) {
    { VSETUP const uint64_t* A = G64(0); LOOP R[l] = (uint32_t)frexp_e(u2d(A[l])); END32(); }
    return ST_CONT;
}
H(v_trig_preop_f64) {
    { VSETUP const uint64_t* A = G64(0); const uint32_t* B = G32(1);
    LOOP Q[l] = d2u(trig_preop(A[l], B[l])); END64(); }
    return ST_CONT;
}

/* ---- 32-bit integer --------------------------------------------------------------------------------------- */
H(v_add_u32) { V2(a + b); return ST_CONT; }
H(v_sub_u32) { V2(a - b); return ST_CONT; }
H(v_subrev_u32) { V2(b - a); return ST_CONT; }
H(v_and_b32) { V2(a & b); return ST_CONT; }
H(v_or_b32) { V2(a | b); return ST_CONT; }
H(v_xor_b32) { V2(a ^ b); return ST_CONT; }
H(v_xnor_b32) { V2(~(a ^ b)); return ST_CONT; }
H(v_lshlrev_b32) { V2(b << (a & 31)); return ST_CONT; }
H(v_lshrrev_b32) { V2(b >> (a & 31)); return ST_CONT; }
H(v_ashrrev_i32) { V2((uint32_t)((int32_t)b >> (a & 31))); return ST_CONT; }
H(v_lshl_b32) { V2(a << (b & 31)); return ST_CONT; }
H(v_max_u32) { V2(a > b ? a : b); return ST_CONT; }
H(v_min_u32) { V2(a < b ? a : b); return ST_CONT; }
H(v_max_i32) { V2((int32_t)a > (int32_t)b ? a : b); return ST_CONT; }
H(v_min_i32) { V2((int32_t)a < (int32_t)b ? a : b); return ST_CONT; }
H(v_mul_lo_u32) { V2(a * b); return ST_CONT; }
H(v_mul_hi_u32) { V2((uint32_t)(((uint64_t)a * b) >> 32)); return ST_CONT; }
H(v_mul_hi_i32) { V2((uint32_t)(((int64_t)(int32_t)a * (int32_t)b) >> 32)); return ST_CONT; }
H(v_mul_u32_u24) { V2((a & 0xFFFFFF) * (b & 0xFFFFFF)); return ST_CONT; }
H(v_mul_i32_i24) { V2((uint32_t)(int32_t)((int64_t)i24(a) * i24(b))); return ST_CONT; }
H(v_mul_hi_u32_u24) { V2((uint32_t)(((uint64_t)(a & 0xFFFFFF) * (b & 0xFFFFFF)) >> 32)); return ST_CONT; }
H(v_mul_hi_i32_i24) { V2((uint32_t)(((int64_t)i24(a) * i24(b)) >> 32)); return ST_CONT; }
H(v_mad_u32_u24) { V3((a & 0xFFFFFF) * (b & 0xFFFFFF) + cc); return ST_CONT; }
H(v_mad_i32_i24) { V3((uint32_t)(int32_t)((int64_t)i24(a) * i24(b) + (int32_t)cc)); return ST_CONT; }
H(v_add_i32) { V2(a + b); return ST_CONT; }
H(v_sub_i32) { V2(a - b); return ST_CONT; }
H(v_bfm_b32) { V2((uint32_t)((1ull << (a & 31)) - 1) << (b & 31)); return ST_CONT; }
H(v_mov_b32) {
    if (SRC_KIND(in->s[0]) != SRC_V && !general(w, in) && exec_of(w) == ~0ULL) {
        uint32_t a = ssrc(w, in, 0), *R = vreg(w, in->d);    /* a scalar into a whole row */
        LOOP R[l] = a;
        return ST_CONT;
    }
    V1(a);
    return ST_CONT;
}
H(v_not_b32) { V1(~a); return ST_CONT; }
H(v_bfrev_b32) { V1(brev32(a)); return ST_CONT; }
H(v_ffbh_u32) { V1(a ? (uint32_t)__builtin_clz(a) : 0xFFFFFFFFu); return ST_CONT; }
H(v_ffbl_b32) { V1(a ? (uint32_t)__builtin_ctz(a) : 0xFFFFFFFFu); return ST_CONT; }
H(v_ffbh_i32) { V1(flbit_s32(a)); return ST_CONT; }
H(v_bcnt_u32_b32) { V2((uint32_t)__builtin_popcount(a) + b); return ST_CONT; }
H(v_add3_u32) { V3(a + b + cc); return ST_CONT; }
H(v_xad_u32) { V3((a ^ b) + cc); return ST_CONT; }
H(v_lshl_add_u32) { V3((a << (b & 31)) + cc); return ST_CONT; }
H(v_add_lshl_u32) { V3((a + b) << (cc & 31)); return ST_CONT; }
H(v_lshl_or_b32) { V3((a << (b & 31)) | cc); return ST_CONT; }
H(v_and_or_b32) { V3((a & b) | cc); return ST_CONT; }
H(v_or3_b32) { V3(a | b | cc); return ST_CONT; }
H(v_bfi_b32) { V3((a & b) | (~a & cc)); return ST_CONT; }
H(v_bfe_u32) { V3((cc & 31) == 0 ? 0 : (a >> (b & 31)) & (uint32_t)((1ull << (cc & 31)) - 1)); return ST_CONT; }
H(v_bfe_i32) { V3(bfe_v(a, b, cc)); return ST_CONT; }
H(v_alignbit_b32) { V3((uint32_t)((((uint64_t)a << 32) | b) >> (cc & 31))); return ST_CONT; }
H(v_alignbyte_b32) { V3((uint32_t)((((uint64_t)a << 32) | b) >> (8 * (cc & 3)))); return ST_CONT; }
H(v_max3_u32) { V3(umax3(a, b, cc)); return ST_CONT; }
H(v_min3_u32) { V3(umin3(a, b, cc)); return ST_CONT; }
H(v_max3_i32) { V3((uint32_t)smax3((int32_t)a, (int32_t)b, (int32_t)cc)); return ST_CONT; }
H(v_min3_i32) { V3((uint32_t)smin3((int32_t)a, (int32_t)b, (int32_t)cc)); return ST_CONT; }
H(v_med3_i32) { V3((uint32_t)smed3((int32_t)a, (int32_t)b, (int32_t)cc)); return ST_CONT; }
H(v_med3_u32) { V3(umed3(a, b, cc)); return ST_CONT; }
H(v_perm_b32) { V3(perm32(a, b, cc)); return ST_CONT; }
H(v_sad_u32) { V3((a > b ? a - b : b - a) + cc); return ST_CONT; }
H(v_sad_u8) { V3(sad8(a, b, 0) + cc); return ST_CONT; }
H(v_msad_u8) { V3(sad8(a, b, 1) + cc); return ST_CONT; }
H(v_sad_hi_u8) { V3((sad8(a, b, 0) << 16) + cc); return ST_CONT; }
H(v_sad_u16) { V3((uint32_t)(abs((int32_t)(a & 0xFFFF) - (int32_t)(b & 0xFFFF)) + abs((int32_t)(a >> 16) - (int32_t)(b >> 16))) + cc); return ST_CONT; }
H(v_lerp_u8) { V3(lerp8(a, b, cc)); return ST_CONT; }
H(v_sat_pk_u8_i16) { V1(sat_pk_u8(a)); return ST_CONT; }
H(v_cvt_pk_i16_i32) { V2((uint32_t)(uint16_t)(int16_t)clamp_i(( int32_t)a, -32768, 32767) | ((uint32_t)(uint16_t)(int16_t)clamp_i((int32_t)b, -32768, 32767) << 16)); return ST_CONT; }
H(v_cvt_pk_u16_u32) { V2((a < 65535 ? a : 65535) | ((b < 65535 ? b : 65535) << 16)); return ST_CONT; }
H(v_cvt_pknorm_i16_f32) { V2(norm_i16(u2f(a)) | (norm_i16(u2f(b)) << 16)); return ST_CONT; }
H(v_cvt_pknorm_u16_f32) { V2(norm_u16(u2f(a)) | (norm_u16(u2f(b)) << 16)); return ST_CONT; }
H(v_cvt_pknorm_i16_f16) { V2(norm_i16(h2f(a)) | (norm_i16(h2f(b)) << 16)); return ST_CONT; }
H(v_cvt_pknorm_u16_f16) { V2(norm_u16(h2f(a)) | (norm_u16(h2f(b)) << 16)); return ST_CONT; }
H(v_pack_b32_f16) { V2((a & 0xFFFF) | ((b & 0xFFFF) << 16)); return ST_CONT; }
H(v_cvt_pk_u8_f32) { V3((cc & ~(0xFFu << (8 * (b & 3)))) | (u8_rint((double)u2f(a)) << (8 * (b & 3)))); return ST_CONT; }
H(v_exp_legacy_f32) { F1((float)exp2((double)u2f(a))); return ST_CONT; }
H(v_log_legacy_f32) { F1((float)log2((double)u2f(a))); return ST_CONT; }

/* ---- 64-bit integer -------------------------------------------------------------------------------------- */
H(v_lshlrev_b64) {
    if (!general(w, in) && exec_of(w) == ~0ULL && SRC_KIND(in->s[1]) == SRC_V) {
        /* the common form: straight from and into the rows (each lane reads both halves, then writes) */
        const uint32_t* lo = vreg(w, in->s[1]);
        const uint32_t* hi = vreg(w, in->s[1] + 1);
        uint32_t* dlo = vreg(w, in->d);
        uint32_t* dhi = vreg(w, in->d + 1);
        if (SRC_KIND(in->s[0]) != SRC_V) {
            /* one shift for every lane: 32-bit halves, 8 lanes per vector op */
            uint32_t sh = ssrc(w, in, 0) & 63;
            if (sh == 0) {
                LOOP { uint32_t a = lo[l], b = hi[l]; dlo[l] = a; dhi[l] = b; }
            } else if (sh < 32) {
                LOOP { uint32_t a = lo[l], b = hi[l]; dlo[l] = a << sh; dhi[l] = (b << sh) | (a >> (32 - sh)); }
            } else {
                LOOP { uint32_t a = lo[l]; dlo[l] = 0; dhi[l] = a << (sh - 32); }
            }
            return ST_CONT;
        }
        uint32_t t0[LANES];
        const uint32_t* A = src32(w, in, 0, t0);
        LOOP {
            uint64_t x = ((uint64_t)lo[l] | (uint64_t)hi[l] << 32) << (A[l] & 63);
            dlo[l] = (uint32_t)x;
            dhi[l] = (uint32_t)(x >> 32);
        }
        return ST_CONT;
    }
    { VSETUP const uint32_t* A = G32(0); const uint64_t* B = G64(1);
    LOOP Q[l] = B[l] << (A[l] & 63); END64(); }
    return ST_CONT;
}
H(v_lshrrev_b64) {
    { VSETUP const uint32_t* A = G32(0); const uint64_t* B = G64(1);
    LOOP Q[l] = B[l] >> (A[l] & 63); END64(); }
    return ST_CONT;
}
H(v_ashrrev_i64) {
    { VSETUP const uint32_t* A = G32(0); const uint64_t* B = G64(1);
    LOOP Q[l] = (uint64_t)((int64_t)B[l] >> (A[l] & 63)); END64(); }
    return ST_CONT;
}
H(v_lshl_add_u64) {
    { VSETUP const uint64_t* A = G64(0); const uint32_t* B = G32(1); const uint64_t* C_ = G64(2);
    LOOP Q[l] = (A[l] << (B[l] & 7)) + C_[l]; END64(); }
    return ST_CONT;
}
H(v_mov_b64) {
    { VSETUP const uint64_t* A = G64(0); LOOP Q[l] = A[l]; END64(); }
    return ST_CONT;
}
H(v_qsad_pk_u16_u8) {
    { VSETUP const uint64_t* A = G64(0); const uint32_t* B = G32(1); const uint64_t* C_ = G64(2);
    LOOP Q[l] = qsad(A[l], B[l], C_[l], 0); END64(); }
    return ST_CONT;
}
H(v_mqsad_pk_u16_u8) {
    { VSETUP const uint64_t* A = G64(0); const uint32_t* B = G32(1); const uint64_t* C_ = G64(2);
    LOOP Q[l] = qsad(A[l], B[l], C_[l], 1); END64(); }
    return ST_CONT;
}

/* ---- 16-bit --------------------------------------------------------------------------------------------- */
H(v_add_f16) { H2(d2h(addd(h2d(a), h2d(b)))); return ST_CONT; }
H(v_sub_f16) { H2(d2h(subd(h2d(a), h2d(b)))); return ST_CONT; }
H(v_subrev_f16) { H2(d2h(subd(h2d(b), h2d(a)))); return ST_CONT; }
H(v_mul_f16) { H2(d2h(muld(h2d(a), h2d(b)))); return ST_CONT; }
H(v_max_f16) { H2(hmax_mode(a, b, 1, w->mode)); return ST_CONT; }
H(v_min_f16) { H2(hmax_mode(a, b, 0, w->mode)); return ST_CONT; }
H(v_ldexp_f16) {
    { VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    LOOP { int32_t e = (int32_t)B[l]; e = e < -100 ? -100 : e > 100 ? 100 : e; R[l] = d2h(ldexp64(h2d(A[l] & 0xFFFF), e)); }
    END32(); }
    return ST_CONT;
}
H(v_fma_f16) { H3(d2h(addd(muld(h2d(a), h2d(b)), h2d(cc)))); return ST_CONT; }
H(v_mad_f16) { H3(mad16(a, b, cc, w->mode)); return ST_CONT; }
H(v_max3_f16) { H3(hmax(hmax(a, b, 1), cc, 1)); return ST_CONT; }
H(v_min3_f16) { H3(hmax(hmax(a, b, 0), cc, 0)); return ST_CONT; }
H(v_med3_f16) { H3(hmax(hmax(a, b, 0), hmax(hmax(a, b, 1), cc, 0), 1)); return ST_CONT; }
H(v_sqrt_f16) { H1(d2h(sqrt(h2d(a)))); return ST_CONT; }
H(v_rsq_f16) { H1(d2h(1.0 / sqrt(h2d(a)))); return ST_CONT; }
H(v_rcp_f16) { H1(d2h(divd(1.0, h2d(a)))); return ST_CONT; }
H(v_log_f16) { H1(d2h(log2(h2d(a)))); return ST_CONT; }
H(v_exp_f16) { H1(d2h(exp2(h2d(a)))); return ST_CONT; }
H(v_sin_f16) { H1(d2h(sin(muld(h2d(a), 6.283185307179586)))); return ST_CONT; }
H(v_cos_f16) { H1(d2h(cos(muld(h2d(a), 6.283185307179586)))); return ST_CONT; }
H(v_ceil_f16) { H1(f2h(ceilf(h2f(a)))); return ST_CONT; }
H(v_floor_f16) { H1(f2h(floorf(h2f(a)))); return ST_CONT; }
H(v_trunc_f16) { H1(f2h(truncf(h2f(a)))); return ST_CONT; }
H(v_rndne_f16) { H1(f2h(rintf(h2f(a)))); return ST_CONT; }
H(v_fract_f16) { H1(fract16(a)); return ST_CONT; }
H(v_frexp_mant_f16) { H1(isfinite(h2f(a)) ? f2h(frexpf_m(h2f(a))) : f2h(h2f(a))); return ST_CONT; }
H(v_frexp_exp_i16_f16) { H1((uint32_t)(isfinite(h2f(a)) ? frexp_e((double)h2f(a)) : 0)); return ST_CONT; }
H(v_cvt_f16_u16) { H1(f2h((float)a)); return ST_CONT; }
H(v_cvt_f16_i16) { H1(f2h((float)(int16_t)a)); return ST_CONT; }
H(v_cvt_u16_f16) { H1((uint32_t)clip_i64(truncf(h2f(a)), 0, 65535)); return ST_CONT; }
H(v_cvt_i16_f16) { H1((uint32_t)(uint16_t)(int16_t)clip_i64(truncf(h2f(a)), -32768, 32767)); return ST_CONT; }
H(v_cvt_norm_i16_f16) { H1(norm_i16(h2f(a))); return ST_CONT; }
H(v_cvt_norm_u16_f16) { H1(norm_u16(h2f(a))); return ST_CONT; }
H(v_div_fixup_f16) { H3(div_fixup16(a, b, cc)); return ST_CONT; }
H(v_add_u16) { H2(a + b); return ST_CONT; }
H(v_sub_u16) { H2(a - b); return ST_CONT; }
H(v_subrev_u16) { H2(b - a); return ST_CONT; }
H(v_add_i16) { H2(a + b); return ST_CONT; }
H(v_sub_i16) { H2(a - b); return ST_CONT; }
H(v_mul_lo_u16) { H2(a * b); return ST_CONT; }
H(v_lshlrev_b16) { H2(b << (a & 15)); return ST_CONT; }
H(v_lshrrev_b16) { H2(b >> (a & 15)); return ST_CONT; }
H(v_ashrrev_i16) { H2((uint32_t)((int32_t)(int16_t)b >> (a & 15))); return ST_CONT; }
H(v_max_u16) { H2(a > b ? a : b); return ST_CONT; }
H(v_min_u16) { H2(a < b ? a : b); return ST_CONT; }
H(v_max_i16) { H2((int16_t)a > (int16_t)b ? a : b); return ST_CONT; }
H(v_min_i16) { H2((int16_t)a < (int16_t)b ? a : b); return ST_CONT; }
H(v_mad_u16) { H3(a * b + cc); return ST_CONT; }
H(v_mad_i16) { H3((uint32_t)((int32_t)(int16_t)a * (int16_t)b + (int16_t)cc)); return ST_CONT; }
H(v_max3_u16) { H3(umax3(a, b, cc)); return ST_CONT; }
H(v_min3_u16) { H3(umin3(a, b, cc)); return ST_CONT; }
H(v_med3_u16) { H3(umed3(a, b, cc)); return ST_CONT; }
H(v_max3_i16) { H3((uint32_t)smax3((int16_t)a, (int16_t)b, (int16_t)cc)); return ST_CONT; }
H(v_min3_i16) { H3((uint32_t)smin3((int16_t)a, (int16_t)b, (int16_t)cc)); return ST_CONT; }
H(v_med3_i16) { H3((uint32_t)smed3((int16_t)a, (int16_t)b, (int16_t)cc)); return ST_CONT; }
H(v_mad_u32_u16) { V3((a & 0xFFFF) * (b & 0xFFFF) + cc); return ST_CONT; }
H(v_mad_i32_i16) { V3((uint32_t)((int32_t)(int16_t)a * (int16_t)b + (int32_t)cc)); return ST_CONT; }

/* ---- VOP3 integer CLAMP: the op on exact (int64) operands, clipped to the result type (valu._saturating) ---- */
enum { SAT_ADD_U32 = 0, SAT_SUB_U32, SAT_SUBREV_U32, SAT_ADD_I32, SAT_SUB_I32, SAT_ADD_U16, SAT_SUB_U16, SAT_SUBREV_U16,
       SAT_ADD_I16, SAT_SUB_I16, SAT_ADD3_U32, SAT_ADD_LSHL_U32, SAT_MAD_U32_U24, SAT_MAD_I32_I24, SAT_MAD_U32_U16,
       SAT_MAD_I32_I16, SAT_MAD_U16, SAT_MAD_I16 };
INLINE int64_t sat_op(int op, uint32_t a, uint32_t b, uint32_t c) {
    int64_t ua = a, ub = b, uc = c, sa = (int32_t)a, sb = (int32_t)b, sc = (int32_t)c;
    int64_t ha = a & 0xFFFF, hb = b & 0xFFFF, hc = c & 0xFFFF, ia = (int16_t)a, ib = (int16_t)b, ic = (int16_t)c;
    int64_t r, lo, hi;
    switch (op) {
    case SAT_ADD_U32: r = ua + ub; lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_SUB_U32: r = ua - ub; lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_SUBREV_U32: r = ub - ua; lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_ADD_I32: r = sa + sb; lo = INT32_MIN; hi = INT32_MAX; break;
    case SAT_SUB_I32: r = sa - sb; lo = INT32_MIN; hi = INT32_MAX; break;
    case SAT_ADD_U16: r = ha + hb; lo = 0; hi = 65535; break;
    case SAT_SUB_U16: r = ha - hb; lo = 0; hi = 65535; break;
    case SAT_SUBREV_U16: r = hb - ha; lo = 0; hi = 65535; break;
    case SAT_ADD_I16: r = ia + ib; lo = -32768; hi = 32767; break;
    case SAT_SUB_I16: r = ia - ib; lo = -32768; hi = 32767; break;
    case SAT_ADD3_U32: r = ua + ub + uc; lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_ADD_LSHL_U32: r = (int64_t)((uint64_t)(ua + ub) << (uc & 31)); lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_MAD_U32_U24: r = (ua & 0xFFFFFF) * (ub & 0xFFFFFF) + uc; lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_MAD_I32_I24: r = (int64_t)i24(a) * i24(b) + sc; lo = INT32_MIN; hi = INT32_MAX; break;
    case SAT_MAD_U32_U16: r = ha * hb + uc; lo = 0; hi = 0xFFFFFFFFLL; break;
    case SAT_MAD_I32_I16: r = ia * ib + sc; lo = INT32_MIN; hi = INT32_MAX; break;
    case SAT_MAD_U16: r = ha * hb + hc; lo = 0; hi = 65535; break;
    default: r = ia * ib + ic; lo = -32768; hi = 32767; break;
    }
    return r < lo ? lo : r > hi ? hi : r;
}
H(v_sat) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* C_ = in->x >= SAT_ADD3_U32 ? G32(2) : B;
    int op = in->x, half = (op >= SAT_ADD_U16 && op <= SAT_SUB_I16) || op >= SAT_MAD_U16;
    LOOP {
        int64_t r = sat_op(op, A[l], B[l], C_[l]);
        R[l] = half ? (uint32_t)(r & 0xFFFF) : (uint32_t)r;
    }
    END32();
    return ST_CONT;
}

/* ---- gfx942 8-bit floats (valu16._cvt_from8 / _cvt_pk_to8 / _fp8_codec) ------------------------------------ */
/* x: byte select (0..3) | 16 packed (two values into D, D+1) | 32 bf8 */
H(v_cvt_from8) {
    uint32_t t[LANES], R0[LANES], R1[LANES];
    const uint32_t* A = src32(w, in, 0, t);
    int sel = in->x & 3, packed = (in->x >> 4) & 1;
    const double* table = (in->x & 32) ? g_bf8 : g_fp8;
    LOOP {
        R0[l] = f2u((float)table[(A[l] >> (8 * sel)) & 0xFF]);
        R1[l] = f2u((float)table[(A[l] >> (8 * (sel + 1))) & 0xFF]);
    }
    uint64_t m = exec_of(w);
    wv(w, in->d, R0, m);
    if (packed) wv(w, in->d + 1, R1, m);
    return ST_CONT;
}
static uint32_t enc8(const double* values, float xf, int saturate) {
    double x = (double)xf, a = fabs(x);
    const double* pos = values;                 /* codes 0..0x7F: +0 and the positive values, ascending */
    double top = pos[0x7F];
    int hi;
    if (a != a) hi = 0x80;
    else { int lo_ = 0, h = 0x80; while (lo_ < h) { int mid = (lo_ + h) / 2; if (pos[mid] < a) lo_ = mid + 1; else h = mid; } hi = lo_; }
    hi = hi < 1 ? 1 : hi > 0x7F ? 0x7F : hi;
    int lo = hi - 1;
    double d_lo = a - pos[lo], d_hi = pos[hi] - a;
    uint32_t code = ((d_hi < d_lo) || (d_hi == d_lo && hi % 2 == 0)) ? (uint32_t)hi : (uint32_t)lo;
    if (a >= top) code = 0x7F;
    int over = (a > top) && !saturate && (a >= top + (top - pos[0x7E]) / 2);
    if (signbit(x) && code != 0) code |= 0x80;
    return (x != x || over) ? 0x80 : code;
}
/* x: 1 the high word of D | 2 saturate (CLAMP) | 4 bf8 */
H(v_cvt_pk_to8) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* D = vreg(w, in->d);
    const double* table = (in->x & 4) ? g_bf8 : g_fp8;
    int sat = (in->x >> 1) & 1;
    LOOP {
        uint32_t word = enc8(table, u2f(A[l]), sat) | (enc8(table, u2f(B[l]), sat) << 8);
        R[l] = (in->x & 1) ? ((D[l] & 0xFFFFu) | (word << 16)) : ((D[l] & 0xFFFF0000u) | word);
    }
    wv(w, in->d, R, exec_of(w));
    return ST_CONT;
}
/* valu16._pkaccum: byte S1[1:0] of D = S0 as u8 (rint, clipped), the rest of D kept */
H(v_cvt_pkaccum_u8_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* D = vreg(w, in->d);
    LOOP {
        uint32_t sh = 8 * (B[l] & 3);
        R[l] = (D[l] & ~(0xFFu << sh)) | (u8_rint((double)u2f(A[l])) << sh);
    }
    wv(w, in->d, R, exec_of(w));
    return ST_CONT;
}
/* valu16._mqsad_u32: four masked byte SADs of S1 against the windows of the 64-bit S0, plus the dwords of
 * the 128-bit S2 (s[2] and its next three registers), saturating */
H(v_mqsad_u32_u8) {
    uint64_t qa[LANES];
    uint32_t tb[LANES], tc[LANES], R4[4][LANES];
    const uint64_t* A = src64(w, in, 0, qa);
    const uint32_t* B = src32(w, in, 1, tb);
    for (int i = 0; i < 4; i++) {
        const uint32_t* C_;
        if (SRC_KIND(in->s[2]) == SRC_V) C_ = vreg(w, in->s[2] + i);
        else C_ = src32(w, in, 2, tc);
        LOOP {
            uint64_t total = (uint64_t)sad8((uint32_t)(A[l] >> (8 * i)), B[l], 1) + C_[l];
            R4[i][l] = total < 0xFFFFFFFFULL ? (uint32_t)total : 0xFFFFFFFFu;
        }
    }
    uint64_t m = exec_of(w);
    for (int i = 0; i < 4; i++) wv(w, in->d + i, R4[i], m);
    return ST_CONT;
}
