/* VALU handlers with lane masks: carries (and the fused 64-bit add v_add64), selects, lane-mask ops;
 * included by interp.h after ops_valu.h. */
#ifndef PYHIP_OPS_LANES_H
#define PYHIP_OPS_LANES_H

/* ---- carries, lane masks, selects ------------------------------------------------------------------------ */
H(v_carry) {
    /* x: 0 add, 1 addc, 2 sub, 3 subb, 4 subrev, 5 subbrev; sd = carry out; s[2] = carry in SGPR */
    VSETUP DIRECT(); const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    uint64_t m = exec_of(w);
    uint32_t CI[LANES], CY[LANES];
    if (in->x & 1) unpack_mask(sreg64(w, in->s[2] & 127), CI);
    switch (in->x) {
    case 0: LOOP { uint32_t r = A[l] + B[l]; CY[l] = r < B[l]; OUT[l] = r; } break;
    case 1:
        LOOP {
            uint32_t r = A[l] + B[l], ci = CI[l] & 1;
            uint32_t cy = r < B[l];
            r += ci;
            CY[l] = cy | (r < ci);
            OUT[l] = r;
        }
        break;
    case 2: LOOP { uint32_t x = A[l], y = B[l]; CY[l] = y > x; OUT[l] = x - y; } break;
    case 3: LOOP { uint32_t x = A[l], y = B[l], ci = CI[l] & 1, r = x - y; CY[l] = (y > x) | (ci & (r == 0)); OUT[l] = r - ci; } break;
    case 4: LOOP { uint32_t x = B[l], y = A[l]; CY[l] = y > x; OUT[l] = x - y; } break;
    default: LOOP { uint32_t x = B[l], y = A[l], ci = CI[l] & 1, r = x - y; CY[l] = (y > x) | (ci & (r == 0)); OUT[l] = r - ci; } break;
    }
    uint64_t carry = pack_mask(CY);
    END32();
    set_mask(w, in->sd, carry & m);
    return ST_CONT;
}
/* A v_add_co_u32 (this record, its own carry out SGPR pair C) and the v_addc_co_u32 right after it whose
 * carry in is C: a 64-bit add, fused by lowering (pyhip/emu/native/lower.py, fuse_pairs) when neither has
 * modifiers and the second reads no other source from C.  Under a full EXEC both run lane by lane in one
 * pass (each lane: the first instruction, then the second, which may read the first's result row); both
 * carry masks are written as the two instructions write them.  Otherwise the two handlers run in turn.
 * Counts as two instructions. */
H(v_add64) {
    const NInst* in2 = &c->code[in->next];
    w->count++;
    c->ninst++;
    if (exec_of(w) != ~0ULL) {
        h_v_carry(c, w, in);
        c->cur_ip = in->next;
        w->ip = in2->next;
        return h_v_carry(c, w, in2);
    }
    uint32_t ALIGN64 t1[LANES], t2[LANES], t3[LANES], CY1[LANES], CY2[LANES];
    const uint32_t* B = src32(w, in, 1, t1);
    const uint32_t* X = src32(w, in2, 0, t2);
    const uint32_t* Y = src32(w, in2, 1, t3);
    uint32_t* L = vreg(w, in->d);
    uint32_t* H = vreg(w, in2->d);
    /* the first carry-out is only kept when the second does not overwrite it (the usual VCC, VCC pair) */
    int keep1 = (in->sd & 127) != (in2->sd & 127);
#define ADD64_BODY(AL)                                      \
    LOOP {                                                  \
        uint32_t b = B[l], r = (AL) + b, cy = r < b;        \
        L[l] = r;                                           \
        uint32_t y = Y[l], r2 = X[l] + y, cy2 = r2 < y;     \
        r2 += cy;                                           \
        H[l] = r2;                                          \
        CY1[l] = cy;                                        \
        CY2[l] = cy2 | (r2 < cy);                           \
    }
    if (SRC_KIND(in->s[0]) != SRC_V) {
        uint32_t a = ssrc(w, in, 0);     /* a scalar base: kept in a register, no broadcast row */
#if defined(__AVX2__)
        /* 8 lanes per step, carries as lane masks straight into the carry-out bits; the second add's
         * sources are read after the first result is stored, as the loop above does, so they may be it */
        if (!keep1) {
            const __m256i va = _mm256_set1_epi32((int)a), zero = _mm256_setzero_si256();
            uint64_t cy2m = 0;
            for (int i = 0; i < LANES; i += 8) {
                __m256i b = _mm256_loadu_si256((const __m256i*)(B + i));
                __m256i r = _mm256_add_epi32(va, b);
                __m256i nc = _mm256_cmpeq_epi32(_mm256_max_epu32(r, b), r);        /* r >= b: no carry */
                _mm256_storeu_si256((__m256i*)(L + i), r);
                __m256i x = _mm256_loadu_si256((const __m256i*)(X + i));
                __m256i y = _mm256_loadu_si256((const __m256i*)(Y + i));
                __m256i r2 = _mm256_add_epi32(x, y);
                __m256i nc2 = _mm256_cmpeq_epi32(_mm256_max_epu32(r2, y), r2);
                __m256i cy = _mm256_andnot_si256(nc, _mm256_set1_epi32(-1));         /* all ones: carry */
                r2 = _mm256_sub_epi32(r2, cy);                                        /* + carry */
                _mm256_storeu_si256((__m256i*)(H + i), r2);
                /* carry out: the x + y carry, or the carry-in wrapping r2 to 0 */
                __m256i c2 = _mm256_or_si256(_mm256_andnot_si256(nc2, _mm256_set1_epi32(-1)),
                                             _mm256_and_si256(cy, _mm256_cmpeq_epi32(r2, zero)));
                cy2m |= (uint64_t)(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(c2)) << i;
            }
            set_mask(w, in2->sd, cy2m);
            c->cur_ip = in->next;
            w->ip = in2->next;
            return ST_CONT;
        }
#endif
        ADD64_BODY(a)
    } else {
        const uint32_t* A = vreg(w, in->s[0]);
        ADD64_BODY(A[l])
    }
#undef ADD64_BODY
    if (keep1) set_mask(w, in->sd, pack_mask(CY1));
    set_mask(w, in2->sd, pack_mask(CY2));
    c->cur_ip = in->next;
    w->ip = in2->next;
    return ST_CONT;
}
H(v_cndmask_b32) {
    /* a0 bits: 1/2 abs of src0/src1, 4/8 neg of src0/src1 (VOP3); s[2] = the select mask SGPR */
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    uint64_t sel = sreg64(w, in->s[2] & 127);
    uint32_t am = (in->x & 1 ? 0x80000000u : 0), an = (in->x & 4 ? 0x80000000u : 0);
    uint32_t bm = (in->x & 2 ? 0x80000000u : 0), bn = (in->x & 8 ? 0x80000000u : 0);
    uint32_t SM[LANES];
    unpack_mask(sel, SM);                       /* lane masks as words: the select vectorises */
    LOOP R[l] = (((B[l] & ~bm) ^ bn) & SM[l]) | (((A[l] & ~am) ^ an) & ~SM[l]);
    END32();
    return ST_CONT;
}
H(v_fmac_f32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    const uint32_t* D = vreg(w, in->d);
    if (in->op == OP_v_fmac_f32) fma32_rows(A, B, D, R, exec_of(w));
    else { LOOP R[l] = f2u(mad32(u2f(A[l]), u2f(B[l]), u2f(D[l]), w->mode)); }
    END32();
    return ST_CONT;
}
H(v_mac_f32) { return h_v_fmac_f32(c, w, in); }
H(v_fmac_f64) {
    ROWS64_TRY(R64_FMA, 2, 1);
    VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1);
    const uint32_t* lo = vreg(w, in->d); const uint32_t* hi = vreg(w, in->d + 1);
    LOOP q2[l] = (uint64_t)lo[l] | (uint64_t)hi[l] << 32;
    fma64_rows(A, B, q2, Q, exec_of(w));
    wv64(w, in->d, Q, write_mask(c, w, in));
    return ST_CONT;
}
H(v_fmak_f32) {
    /* x: 1 = mk (D = S0 * K + S1), 0 = ak (D = S0 * S1 + K); K in a0 bits (the literal) */
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1);
    float k = u2f(in->imm);
    LOOP t2[l] = f2u(k);
    if (in->x) fma32_rows(A, t2, B, R, exec_of(w));
    else fma32_rows(A, B, t2, R, exec_of(w));
    END32();
    return ST_CONT;
}
H(v_mad_u64_u32) {
    VSETUP const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint64_t* C_ = G64(2);
    uint32_t CY[LANES];
    if (in->op == OP_v_mad_i64_i32) { LOOP { Q[l] = (uint64_t)((int64_t)(int32_t)A[l] * (int32_t)B[l]) + C_[l]; CY[l] = 0; } }
    else { LOOP { uint64_t r = (uint64_t)A[l] * B[l] + C_[l]; Q[l] = r; CY[l] = r < C_[l]; } }
    uint64_t carry = pack_mask(CY), m = exec_of(w);
    END64();
    if (in->sd < 106 || in->sd == VCC) set_mask(w, in->sd, carry & m);
    return ST_CONT;
}
H(v_mad_i64_i32) { return h_v_mad_u64_u32(c, w, in); }
H(v_readlane_b32) {
    uint32_t lane = ssrc(w, in, 1) & 63;
    write_s(w, in->d, vreg(w, in->s[0])[lane]);
    return ST_CONT;
}
H(v_readfirstlane_b32) {
    uint32_t t[LANES];
    const uint32_t* A = src32(w, in, 0, t);
    uint64_t ex = exec_of(w);
    write_s(w, in->d, A[ex ? __builtin_ctzll(ex) : 0]);
    return ST_CONT;
}
H(v_writelane_b32) {
    uint32_t v = ssrc(w, in, 0), lane = ssrc(w, in, 1) & 63;
    vreg(w, in->d)[lane] = v;
    return ST_CONT;
}
H(v_mbcnt_lo_u32_b32) { V2((uint32_t)__builtin_popcount(a & (uint32_t)((1ull << (l < 32 ? l : 32)) - 1)) + b); return ST_CONT; }
H(v_mbcnt_hi_u32_b32) { V2((uint32_t)__builtin_popcount(a & (l >= 63 ? 0x7FFFFFFFu : l >= 32 ? (uint32_t)((1ull << (l - 32)) - 1) : 0u)) + b); return ST_CONT; }
H(v_nop) {
    
    return ST_CONT;
}
H(v_clrexcp) { return h_v_nop(c, w, in); }
H(v_swap_b32) {
    uint32_t ta[LANES], tb[LANES];
    uint64_t m = exec_of(w);
    memcpy(ta, vreg(w, in->d), 256);
    memcpy(tb, vreg(w, in->s[0]), 256);
    wv(w, in->d, tb, m);
    wv(w, in->s[0], ta, m);
    return ST_CONT;
}

#endif
