/* The division helpers v_div_scale / v_div_fmas / v_div_fixup (f32 and f64; valu_div.py), with the
 * vectorised common cases of the f32 forms; included by interp.h after ops_valu.h. */
#ifndef PYHIP_OPS_DIV_H
#define PYHIP_OPS_DIV_H

/* ---- division helpers (valu_div.py) -------------------------------------------------------------------- */
/* v_div_scale_f32's common case, decided on the biased exponents e1 (denominator S1) and e2 (numerator
 * S2): e1 in 1..252 (normal, 1/S1 not denormal: 1/S1 > 2^(126-e1) >= 2^-126), e2 in 24..254 (normal, above
 * the c_tiny bound), -125 <= e2 - e1 <= 95 (S2/S1 > 2^(e2-e1-1) is not denormal; below c_big's 96): no
 * zero, NaN, scaling case applies, so the result is S0 and VCC clear.  Other lanes take div_scale32. */
H(v_div_scale_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2);
    uint64_t m = exec_of(w);
    uint32_t V[LANES], SLOW[LANES];
    LOOP {
        uint32_t e1 = (B[l] >> 23) & 0xFF, e2 = (C_[l] >> 23) & 0xFF;
        uint32_t ok = (e1 - 1u <= 251u) & (e2 - 24u <= 230u) & (e2 + 125u - e1 <= 220u);
        R[l] = A[l];
        V[l] = 0;
        SLOW[l] = ok ? 0u : ~0u;
    }
    uint64_t slow = pack_mask(SLOW) & m;
    while (UNLIKELY(slow)) {
        int l = __builtin_ctzll(slow), v;
        slow &= slow - 1;
        R[l] = f2u(div_scale32(u2f(A[l]), u2f(B[l]), u2f(C_[l]), &v));
        V[l] = v;
    }
    END32();
    set_mask(w, in->sd, pack_mask(V) & m);
    return ST_CONT;
}
H(v_div_scale_f64) {
    VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1); const uint64_t* C_ = G64(2);
    uint64_t m = exec_of(w);
    uint32_t V[LANES];
    LOOP { int v; Q[l] = d2u(div_scale64(u2d(A[l]), u2d(B[l]), u2d(C_[l]), &v)); V[l] = v; }
    END64();
    set_mask(w, in->sd, pack_mask(V) & m);
    return ST_CONT;
}
H(v_div_fmas_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2);
    uint64_t v = sreg64(w, VCC) & exec_of(w);
    if (!v) fma32_rows(A, B, C_, R, exec_of(w));   /* no lane scales: div_fmas32 is fma32n */
    else LOOP R[l] = f2u(div_fmas32(u2f(A[l]), u2f(B[l]), u2f(C_[l]), (v >> l) & 1));
    END32();
    return ST_CONT;
}
H(v_div_fmas_f64) {
    VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1); const uint64_t* C_ = G64(2);
    uint64_t v = sreg64(w, VCC) & exec_of(w);
    LOOP Q[l] = d2u(div_fmas64(u2d(A[l]), u2d(B[l]), u2d(C_[l]), (v >> l) & 1));
    END64();
    return ST_CONT;
}
/* v_div_fixup_f32 (S0 quotient, S1 denominator, S2 numerator): where S1 and S2 are normal (biased exponents
 * 1..254: finite, non-zero), e2 - e1 >= -150 (no underflow to zero) and S0 is no NaN, div_fixup32 returns
 * |S0| with the sign of S1 * S2; other lanes take div_fixup32. */
H(v_div_fixup_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2);
    uint32_t SLOW[LANES];
    LOOP {
        uint32_t q = A[l], d = B[l], n = C_[l];
        uint32_t ed = (d >> 23) & 0xFF, en = (n >> 23) & 0xFF;
        uint32_t ok = (ed - 1u <= 253u) & (en - 1u <= 253u) & (en + 150u >= ed) & ((q & 0x7fffffffu) <= 0x7f800000u);
        SLOW[l] = ok ? 0u : ~0u;
        OUT[l] = (q & 0x7fffffffu) | ((n ^ d) & 0x80000000u);
    }
    uint64_t slow = pack_mask(SLOW) & exec_of(w);
    while (UNLIKELY(slow)) {
        int l = __builtin_ctzll(slow);
        slow &= slow - 1;
        OUT[l] = f2u(div_fixup32(u2f(A[l]), u2f(B[l]), u2f(C_[l])));
    }
    END32();
    return ST_CONT;
}
H(v_div_fixup_f64) { D3(div_fixup64(a, b, cc)); return ST_CONT; }

#endif
