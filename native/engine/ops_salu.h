/* Scalar ALU, scalar memory and program control (salu.py, salu_extra.py, smem.py).  Handlers (H: static
 * int h_NAME(Ctx* c, Wave* w, const NInst* in)): ``c`` (Ctx*), ``w`` (Wave*), ``in`` (const NInst*) are in scope; a handler that
 * stops the wave returns its status. */

#define S2(EXPR, SCC)                                                     \
    {                                                                     \
        uint32_t a = ssrc(w, in, 0), b = ssrc(w, in, 1);                  \
        uint32_t r = (EXPR);                                              \
        SCC;                                                              \
        write_s(w, in->d, r);                                             \
    }
#define S2_64(EXPR, SCC)                                                  \
    {                                                                     \
        uint64_t a = ssrc64(w, in, 0), b = ssrc64(w, in, 1);              \
        uint64_t r = (EXPR);                                              \
        SCC;                                                              \
        write_s64(w, in->d, r);                                           \
    }
#define NZ w->scc = (r != 0)
#define NOSCC (void)0
#define S1(EXPR, SCC) { uint32_t a = ssrc(w, in, 0); uint32_t r = (EXPR); SCC; write_s(w, in->d, r); }
#define S1_64(EXPR, SCC) { uint64_t a = ssrc64(w, in, 0); uint64_t r = (EXPR); SCC; write_s64(w, in->d, r); }
#define S1_64_32(EXPR, SCC) { uint64_t a = ssrc64(w, in, 0); uint32_t r = (EXPR); SCC; write_s(w, in->d, r); }

H(s_add_u32) { S2(a + b, w->scc = ((uint64_t)a + b) > 0xFFFFFFFFull); return ST_CONT; }
H(s_sub_u32) { S2(a - b, w->scc = b > a); return ST_CONT; }
H(s_add_i32) { S2(a + b, w->scc = (((a ^ r) & (b ^ r) & 0x80000000u) != 0)); return ST_CONT; }
H(s_sub_i32) { S2(a - b, w->scc = (((a ^ b) & (a ^ r) & 0x80000000u) != 0)); return ST_CONT; }
H(s_addc_u32) {
    uint64_t a = ssrc(w, in, 0), b = ssrc(w, in, 1), cc = w->scc;
    uint64_t r = a + b + cc;
    w->scc = r > 0xFFFFFFFFull;
    write_s(w, in->d, (uint32_t)r);
    return ST_CONT;
}
H(s_subb_u32) {
    uint64_t a = ssrc(w, in, 0), b = ssrc(w, in, 1), cc = w->scc;
    uint64_t r = a - b - cc;
    w->scc = (b + cc) > a;
    write_s(w, in->d, (uint32_t)r);
    return ST_CONT;
}
H(s_mul_i32) { S2(a * b, NOSCC); return ST_CONT; }
H(s_mul_hi_u32) { S2((uint32_t)(((uint64_t)a * b) >> 32), NOSCC); return ST_CONT; }
H(s_mul_hi_i32) { S2((uint32_t)(((int64_t)(int32_t)a * (int32_t)b) >> 32), NOSCC); return ST_CONT; }
H(s_and_b32) { S2(a & b, NZ); return ST_CONT; }
H(s_or_b32) { S2(a | b, NZ); return ST_CONT; }
H(s_xor_b32) { S2(a ^ b, NZ); return ST_CONT; }
H(s_andn2_b32) { S2(a & ~b, NZ); return ST_CONT; }
H(s_orn2_b32) { S2(a | ~b, NZ); return ST_CONT; }
H(s_nand_b32) { S2(~(a & b), NZ); return ST_CONT; }
H(s_nor_b32) { S2(~(a | b), NZ); return ST_CONT; }
H(s_xnor_b32) { S2(~(a ^ b), NZ); return ST_CONT; }
H(s_and_b64) { S2_64(a & b, NZ); return ST_CONT; }
H(s_or_b64) { S2_64(a | b, NZ); return ST_CONT; }
H(s_xor_b64) { S2_64(a ^ b, NZ); return ST_CONT; }
H(s_andn2_b64) { S2_64(a & ~b, NZ); return ST_CONT; }
H(s_orn2_b64) { S2_64(a | ~b, NZ); return ST_CONT; }
H(s_nand_b64) { S2_64(~(a & b), NZ); return ST_CONT; }
H(s_nor_b64) { S2_64(~(a | b), NZ); return ST_CONT; }
H(s_xnor_b64) { S2_64(~(a ^ b), NZ); return ST_CONT; }
H(s_lshl_b32) { S2(a << (b & 31), NZ); return ST_CONT; }
H(s_lshr_b32) { S2(a >> (b & 31), NZ); return ST_CONT; }
H(s_ashr_i32) { S2((uint32_t)((int32_t)a >> (b & 31)), NZ); return ST_CONT; }
H(s_lshl_b64) { S2_64(a << (b & 63), NZ); return ST_CONT; }
H(s_lshr_b64) { S2_64(a >> (b & 63), NZ); return ST_CONT; }
H(s_ashr_i64) { S2_64((uint64_t)((int64_t)a >> (b & 63)), NZ); return ST_CONT; }
H(s_min_u32) { S2(a < b ? a : b, w->scc = a < b); return ST_CONT; }
H(s_max_u32) { S2(a > b ? a : b, w->scc = a > b); return ST_CONT; }
H(s_min_i32) { S2((int32_t)a < (int32_t)b ? a : b, w->scc = (int32_t)a < (int32_t)b); return ST_CONT; }
H(s_max_i32) { S2((int32_t)a > (int32_t)b ? a : b, w->scc = (int32_t)a > (int32_t)b); return ST_CONT; }
H(s_bfm_b32) { S2((uint32_t)(((1ull << (a & 31)) - 1) << (b & 31)), NOSCC); return ST_CONT; }
H(s_bfm_b64) { S2_64(((1ull << (a & 63)) - 1) << (b & 63), NZ); return ST_CONT; }
H(s_bfe_u32) { S2(((b >> 16) & 0x7F) == 0 ? 0 : (a >> (b & 31)) & (uint32_t)((1ull << ((b >> 16) & 0x7F)) - 1), NZ); return ST_CONT; }
H(s_bfe_i32) {
    uint32_t a = ssrc(w, in, 0), b = ssrc(w, in, 1);
    uint32_t r = (uint32_t)bfe_s(a, b, 32, 1);
    w->scc = r != 0;
    write_s(w, in->d, r);
    return ST_CONT;
}
H(s_bfe_u64) { S2_64(bfe_s(a, b & 0xFFFFFFFFull, 64, 0), NZ); return ST_CONT; }
H(s_bfe_i64) { S2_64(bfe_s(a, b & 0xFFFFFFFFull, 64, 1), NZ); return ST_CONT; }
H(s_lshl1_add_u32) { S2((a << 1) + b, w->scc = (((uint64_t)a << 1) + b) > 0xFFFFFFFFull); return ST_CONT; }
H(s_lshl2_add_u32) { S2((a << 2) + b, w->scc = (((uint64_t)a << 2) + b) > 0xFFFFFFFFull); return ST_CONT; }
H(s_lshl3_add_u32) { S2((a << 3) + b, w->scc = (((uint64_t)a << 3) + b) > 0xFFFFFFFFull); return ST_CONT; }
H(s_lshl4_add_u32) { S2((a << 4) + b, w->scc = (((uint64_t)a << 4) + b) > 0xFFFFFFFFull); return ST_CONT; }
H(s_pack_ll_b32_b16) { S2((a & 0xFFFF) | (b << 16), NOSCC); return ST_CONT; }
H(s_pack_lh_b32_b16) { S2((a & 0xFFFF) | (b & 0xFFFF0000u), NOSCC); return ST_CONT; }
H(s_pack_hh_b32_b16) { S2((a >> 16) | (b & 0xFFFF0000u), NOSCC); return ST_CONT; }
H(s_absdiff_i32) { S2((uint32_t)llabs((int64_t)(int32_t)a - (int32_t)b), NZ); return ST_CONT; }
H(s_cselect_b32) { S2(w->scc ? a : b, NOSCC); return ST_CONT; }
H(s_cselect_b64) { S2_64(w->scc ? a : b, NOSCC); return ST_CONT; }
H(s_mov_b32) { S1(a, NOSCC); return ST_CONT; }
H(s_mov_b64) { S1_64(a, NOSCC); return ST_CONT; }
H(s_not_b32) { S1(~a, NZ); return ST_CONT; }
H(s_not_b64) { S1_64(~a, NZ); return ST_CONT; }
H(s_brev_b32) { S1(brev32(a), NOSCC); return ST_CONT; }
H(s_brev_b64) { S1_64(((uint64_t)brev32((uint32_t)a) << 32) | brev32((uint32_t)(a >> 32)), NOSCC); return ST_CONT; }
H(s_ff1_i32_b32) { S1(a ? (uint32_t)__builtin_ctz(a) : 0xFFFFFFFFu, NOSCC); return ST_CONT; }
H(s_ff1_i32_b64) { S1_64_32(a ? (uint32_t)__builtin_ctzll(a) : 0xFFFFFFFFu, NOSCC); return ST_CONT; }
H(s_ff0_i32_b32) { S1(~a ? (uint32_t)__builtin_ctz(~a) : 0xFFFFFFFFu, NOSCC); return ST_CONT; }
H(s_ff0_i32_b64) { S1_64_32(~a ? (uint32_t)__builtin_ctzll(~a) : 0xFFFFFFFFu, NOSCC); return ST_CONT; }
H(s_flbit_i32_b32) { S1(a ? (uint32_t)__builtin_clz(a) : 0xFFFFFFFFu, NOSCC); return ST_CONT; }
H(s_flbit_i32_b64) { S1_64_32(a ? (uint32_t)__builtin_clzll(a) : 0xFFFFFFFFu, NOSCC); return ST_CONT; }
H(s_flbit_i32) { S1(flbit_s32(a), NOSCC); return ST_CONT; }
H(s_flbit_i32_i64) { S1_64_32(flbit_s64(a), NOSCC); return ST_CONT; }
H(s_bcnt1_i32_b32) { S1((uint32_t)__builtin_popcount(a), NZ); return ST_CONT; }
H(s_bcnt1_i32_b64) { S1_64_32((uint32_t)__builtin_popcountll(a), NZ); return ST_CONT; }
H(s_bcnt0_i32_b32) { S1(32u - (uint32_t)__builtin_popcount(a), NZ); return ST_CONT; }
H(s_bcnt0_i32_b64) { S1_64_32(64u - (uint32_t)__builtin_popcountll(a), NZ); return ST_CONT; }
H(s_sext_i32_i8) { S1((uint32_t)(int32_t)(int8_t)a, NOSCC); return ST_CONT; }
H(s_sext_i32_i16) { S1((uint32_t)(int32_t)(int16_t)a, NOSCC); return ST_CONT; }
H(s_abs_i32) { S1((uint32_t)((int32_t)a < 0 ? -(int64_t)(int32_t)a : (int32_t)a), NZ); return ST_CONT; }
H(s_quadmask_b32) { S1(quad32(a, 0), NZ); return ST_CONT; }
H(s_quadmask_b64) { S1_64(quad64(a, 0), NZ); return ST_CONT; }
H(s_wqm_b32) { S1(quad32(a, 1), NZ); return ST_CONT; }
H(s_wqm_b64) { S1_64(quad64(a, 1), NZ); return ST_CONT; }
H(s_bitreplicate_b64_b32) {
    uint32_t a = ssrc(w, in, 0);
    uint64_t r = 0;
    for (int i = 0; i < 32; i++) r |= (uint64_t)((a >> i) & 1) * 3ull << (2 * i);
    write_s64(w, in->d, r);
    return ST_CONT;
}
H(s_cmov_b32) {
    { uint32_t a = ssrc(w, in, 0); if (w->scc) write_s(w, in->d, a); else write_s(w, in->d, w->s[in->d & 127]); }
    return ST_CONT;
}
H(s_cmov_b64) {
    uint64_t a = ssrc64(w, in, 0);
    write_s64(w, in->d, w->scc ? a : sreg64(w, in->d & 127));
    return ST_CONT;
}
H(s_saveexec) {
    uint64_t ex = exec_of(w), a = ssrc64(w, in, 0), n;
    switch (in->x) {
    case 0: n = a & ex; break;
    case 1: n = a | ex; break;
    case 2: n = a ^ ex; break;
    case 3: n = a & ~ex; break;
    case 4: n = a | ~ex; break;
    case 5: n = ~(a & ex); break;
    case 6: n = ~(a | ex); break;
    case 7: n = ~(a ^ ex); break;
    case 8: n = ~a & ex; break;
    default: n = ~a | ex; break;
    }
    write_s64(w, in->d, ex);
    w->s[EXEC] = (uint32_t)n;
    w->s[EXEC + 1] = (uint32_t)(n >> 32);
    w->scc = n != 0;
    return ST_CONT;
}
H(s_wrexec) {
    uint64_t ex = exec_of(w), a = ssrc64(w, in, 0);
    uint64_t n = in->x ? (a & ~ex) : (~a & ex);
    write_s64(w, EXEC, n);
    write_s64(w, in->d, n);
    w->scc = n != 0;
    return ST_CONT;
}
H(s_bitset) {
    /* x: bit 0 = value, bit 1 = 64-bit */
    uint32_t bit = ssrc(w, in, 0) & ((in->x & 2) ? 63 : 31);
    uint64_t cur = (in->x & 2) ? sreg64(w, in->d & 127) : w->s[in->d & 127];
    uint64_t m = 1ull << bit;
    uint64_t n = (in->x & 1) ? (cur | m) : (cur & ~m);
    if (in->x & 2) write_s64(w, in->d, n); else write_s(w, in->d, (uint32_t)n);
    return ST_CONT;
}
H(s_movrels) {
    /* x: 1 = 64-bit; D = SGPR[S0 + M0] (clipped to 0..127) */
    int64_t m0 = w->s[M0];
    int n = (in->x & 1) ? 2 : 1;
    uint32_t vals[2];
    for (int k = 0; k < n; k++) {
        int64_t idx = (int64_t)SRC_IDX(in->s[0]) + m0 + k;
        idx = idx < 0 ? 0 : idx > 127 ? 127 : idx;
        vals[k] = w->s[idx];
        w->s[in->d + k] = vals[k];
    }
    return ST_CONT;
}
H(s_movreld) {
    int64_t m0 = w->s[M0];
    if (in->x & 1) {
        uint64_t v = ssrc64(w, in, 0);
        for (int k = 0; k < 2; k++) {
            int64_t idx = (int64_t)in->d + m0 + k;
            idx = idx < 0 ? 0 : idx > 127 ? 127 : idx;
            w->s[idx] = (uint32_t)(v >> (32 * k));
        }
    } else {
        uint32_t v = ssrc(w, in, 0);
        int64_t idx = (int64_t)in->d + m0;
        idx = idx < 0 ? 0 : idx > 127 ? 127 : idx;
        w->s[idx] = v;
    }
    return ST_CONT;
}
H(s_getpc_b64) {
    write_s64(w, in->d, c->d->code_base + in->pc + in->size);
    return ST_CONT;
}
H(s_setpc_b64) {
    uint64_t t = ssrc64(w, in, 0);
    return jump(c, w, t);
}
H(s_swappc_b64) {
    uint64_t t = ssrc64(w, in, 0);
    write_s64(w, in->d, c->d->code_base + in->pc + in->size);
    return jump(c, w, t);
}
H(s_call_b64) {
    write_s64(w, in->d, c->d->code_base + in->pc + in->size);
    w->ip = in->target;
    if (in->target < 0) return raise_fault(c, w, FK_JUMP, -1, c->d->code_base + in->pc + 4 + 4 * (int64_t)(int16_t)in->imm, 1, 0, 0);
    return ST_CONT;
}

/* SOPC */
H(s_cmp) {
    /* x: cond (0 eq 1 lg 2 gt 3 ge 4 lt 5 le) | 8 signed | 16 64-bit */
    int r;
    if (in->x & 16) {
        uint64_t a = ssrc64(w, in, 0), b = ssrc64(w, in, 1);
        r = (in->x & 7) == 0 ? a == b : a != b;
    } else if (in->x & 8) {
        int32_t a = (int32_t)ssrc(w, in, 0), b = (int32_t)ssrc(w, in, 1);
        r = cmp6(in->x & 7, (int64_t)a, (int64_t)b);
    } else {
        uint32_t a = ssrc(w, in, 0), b = ssrc(w, in, 1);
        r = cmp6(in->x & 7, (int64_t)a, (int64_t)b);
    }
    w->scc = r;
    return ST_CONT;
}
H(s_cmpk) {
    /* SOPK compare of SDST with simm16 (imm sign- or zero-extended by the lowering) */
    uint32_t a = w->s[in->d & 127];
    int64_t av = (in->x & 8) ? (int64_t)(int32_t)a : (int64_t)a;
    w->scc = cmp6(in->x & 7, av, (int64_t)in->imm);
    return ST_CONT;
}
H(s_bitcmp) {
    /* x: bit 0 = compare with 1, bit 1 = 64-bit */
    if (in->x & 2) {
        uint64_t a = ssrc64(w, in, 0), b = ssrc64(w, in, 1);
        w->scc = ((a >> (b & 63)) & 1) == (uint64_t)(in->x & 1);
    } else {
        uint32_t a = ssrc(w, in, 0), b = ssrc(w, in, 1);
        w->scc = ((a >> (b & 31)) & 1) == (uint32_t)(in->x & 1);
    }
    return ST_CONT;
}

/* SOPK */
H(s_movk_i32) {
    write_s(w, in->d, (uint32_t)in->imm);
    return ST_CONT;
}
H(s_addk_i32) {
    uint32_t a = w->s[in->d & 127], v = (uint32_t)in->imm, r = a + v;
    w->scc = ((a ^ r) & (v ^ r) & 0x80000000u) != 0;
    write_s(w, in->d, r);
    return ST_CONT;
}
H(s_mulk_i32) {
    write_s(w, in->d, w->s[in->d & 127] * (uint32_t)in->imm);
    return ST_CONT;
}
H(s_cmovk_i32) {
    write_s(w, in->d, w->scc ? (uint32_t)in->imm : w->s[in->d & 127]);
    return ST_CONT;
}
H(s_getreg_b32) {
    uint32_t v = in->imm, hw = v & 0x3F, off = (v >> 6) & 0x1F, size = ((v >> 11) & 0x1F) + 1;
    uint64_t val = hw == 1 ? w->mode : hw == 3 ? w->trap_sts : hw == 15 ? in->a0 : 0;
    write_s(w, in->d, (uint32_t)((val >> off) & ((1ull << size) - 1)));
    return ST_CONT;
}
H(s_setreg_b32) {
    uint32_t v = in->imm, hw = v & 0x3F, off = (v >> 6) & 0x1F, size = ((v >> 11) & 0x1F) + 1;
    uint64_t val = in->x ? in->a0 : w->s[in->d & 127];
    if (hw == 1) {
        uint64_t mask = ((1ull << size) - 1) << off;
        w->mode = (uint32_t)((w->mode & ~mask) | ((val << off) & mask));
    }
    return ST_CONT;
}

/* SOPP */
H(s_branch) {
    w->ip = in->target;
    if (in->target < 0) return raise_fault(c, w, FK_JUMP, -1, c->d->code_base + in->pc + 4 + 4 * (int64_t)(int16_t)in->imm, 1, 0, 0);
    return ST_CONT;
}
H(s_cbranch) {
    int t;
    switch (in->x) {
    case 0: t = w->scc == 0; break;
    case 1: t = w->scc != 0; break;
    case 2: t = (w->s[VCC] | w->s[VCC + 1]) == 0; break;
    case 3: t = (w->s[VCC] | w->s[VCC + 1]) != 0; break;
    case 4: t = (w->s[EXEC] | w->s[EXEC + 1]) == 0; break;
    default: t = (w->s[EXEC] | w->s[EXEC + 1]) != 0; break;
    }
    if (t) {
        w->ip = in->target;
        if (in->target < 0) return raise_fault(c, w, FK_JUMP, -1, c->d->code_base + in->pc + 4 + 4 * (int64_t)(int16_t)in->imm, 1, 0, 0);
    }
    return ST_CONT;
}
H(s_endpgm) {
    w->state = WS_DONE;
    return ST_DONE;
}
H(s_barrier) {
    w->state = WS_BARRIER;
    return ST_BARRIER;
}
/* s_waitcnt, cache-control instructions (buffer_wbl2 / buffer_inv / buffer_wbinvl1_vol ...), s_nop, s_sleep, ...:
 * the wave's stores are complete (visible to every thread) when it goes on (docs/memory-model.md) */
H(s_nop) {
    mm_complete_stores(w);
    return ST_CONT;
}
H(s_trap) {
    return raise_fault(c, w, FK_TRAP, -1, 0, 0, 0, 0);
}
H(s_memtime) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* s_memtime / s_memrealtime: the monotonic clock counted at in->imm kHz (pyhip/emu/clocks.py) */
    unsigned __int128 ns = (unsigned __int128)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    write_s64(w, in->d, (uint64_t)(ns * (uint32_t)in->imm / 1000000u));
    return ST_CONT;
}
H(s_set_gpr_idx_on) {
    uint32_t a = ssrc(w, in, 0);
    w->s[M0] = (w->s[M0] & ~0xF0FFu) | (a & 0xFF) | ((uint32_t)in->x << 12);
    return ST_CONT;
}
H(s_set_gpr_idx_idx) {
    w->s[M0] = (w->s[M0] & ~0xFFu) | (ssrc(w, in, 0) & 0xFF);
    return ST_CONT;
}
H(s_set_gpr_idx_mode) {
    w->s[M0] = (w->s[M0] & ~0xF000u) | ((uint32_t)in->x << 12);
    return ST_CONT;
}

/* SMEM: x = dwords; a0 bit 0 = buffer (16-bit base high), bit 1 = SGPR offset present */
H(s_load) {
    uint64_t base = sreg64(w, in->s[0]);
    if (in->a0 & 1) base &= 0x0000FFFFFFFFFFFFull;
    uint64_t a = base + (uint64_t)(int64_t)in->imm;
    if (in->a0 & 2) a += ssrc(w, in, 1);
    a &= ~3ull;
    int n = in->x;
    const uint8_t* p = xlate(c, a, 4 * n);
    if (UNLIKELY(!p)) {
        for (int i = 0; i < n; i++)
            if (!xlate(c, a + 4 * i, 4)) return raise_fault(c, w, FK_MEM, -1, a + 4 * i, 1, 4, 0);
        return raise_fault(c, w, FK_MEM, -1, a, 1, 4, 0);   /* spans two allocations */
    }
    uint32_t* dst = &w->s[in->d & 127];
    if (LIKELY(in->d + n <= 106)) {
        /* dword pairs (each one 8-byte access when 8-byte aligned, else two dword accesses: sh_load) */
        if (n == 1) sh_load((uint8_t*)dst, p, 4);
        else
            for (int i = 0; i < n; i += 2) sh_load((uint8_t*)(dst + i), p + 4 * i, 8);
        return ST_CONT;
    }
    for (int i = 0; i < n && in->d + i < 106; i++) w->s[in->d + i] = sh_ld32(p + 4 * i);
    return ST_CONT;
}
H(s_store) {
    uint64_t base = sreg64(w, in->s[0]);
    if (in->a0 & 1) base &= 0x0000FFFFFFFFFFFFull;
    uint64_t a = base + (uint64_t)(int64_t)in->imm;
    if (in->a0 & 2) a += ssrc(w, in, 1);
    a &= ~3ull;
    for (int i = 0; i < in->x; i++) {
        uint8_t* p = xlate(c, a + 4 * i, 4);
        if (!p) return raise_fault(c, w, FK_MEM, -1, a + 4 * i, 1, 4, 0);
    }
    for (int i = 0; i < in->x; i++) sh_st32(xlate(c, a + 4 * i, 4), w->s[(in->d + i) & 127]);
    mm_stored(w);
    return ST_CONT;
}
H(s_atomic) {
    uint64_t base = sreg64(w, in->s[0]);
    if (in->a0 & 1) base &= 0x0000FFFFFFFFFFFFull;
    uint64_t a = base + (uint64_t)(int64_t)in->imm;
    if (in->a0 & 2) a += ssrc(w, in, 1);
    int wide = (in->a0 >> 8) & 1, size = wide ? 8 : 4;
    if (a & (uint64_t)(size - 1)) return raise_fault(c, w, FK_SATOMIC_ALIGN, -1, a, 1, size, 0);
    uint8_t* p = xlate(c, a, size);
    if (!p) return raise_fault(c, w, FK_MEM, -1, a, 1, size, 0);
    uint64_t v = wide ? sreg64(w, in->d & 127) : w->s[in->d & 127];
    uint64_t cmp = in->x == AT_CMPSWAP ? (wide ? sreg64(w, (in->d + 2) & 127) : w->s[(in->d + 1) & 127]) : 0;
    uint64_t old = wide ? atomic_rmw64(p, in->x, v, cmp) : atomic_rmw32(p, in->x, (uint32_t)v, (uint32_t)cmp);
    if (in->flags & F_GLC) {
        if (wide) write_s64(w, in->d, old); else write_s(w, in->d, (uint32_t)old);
    }
    return ST_CONT;
}
