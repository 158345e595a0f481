/* Scalar memory, program control and system instructions (salu.py, gpr_indexing.py, smem.py; the scalar ALU
 * has a description, pyhip/emu/spec/salu.py, and no handler).  Handlers (H: static int h_NAME(Ctx* c,
 * Wave* w, const NInst* in)): ``c`` (Ctx*), ``w`` (Wave*), ``in`` (const NInst*) are in scope; a handler
 * that stops the wave returns its status. */

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
/* RDNA's M0-relative VGPR moves (rdna_lanes._movrel), x: 0 v_movrels D = VGPR[S0 + M0], 1 v_movreld
 * VGPR[D + M0] = S0 (any source), 2 v_movrelsd VGPR[D + M0] = VGPR[S0 + M0], 3 v_movrelsd_2 VGPR[D + M0[25:16]]
 * = VGPR[S0 + M0[9:0]], 4 v_swaprel (those two swapped); 5 a GFX9 v_mov_b32 inside s_set_gpr_idx_on (gpr_indexing:
 * its VGPR source and/or destination offset by M0[7:0], as imm's mode bits say); active lanes only; an index past
 * the wave's VGPR rows faults (FK_VGPR_INDEX, arg: the row) */
H(v_movrel) {
    int kind = in->x;
    uint32_t m0 = w->s[M0];
    int64_t so = kind >= 3 ? (m0 & 0x3FF) : m0, dof = kind >= 3 ? (m0 >> 16 & 0x3FF) : m0;
    if (kind == 5) {                  /* GFX9 VGPR index mode's v_mov_b32: imm bit 0 / 3 = SRC0 / DST by M0[7:0] */
        so = (in->imm & 1) && SRC_KIND(in->s[0]) == SRC_V ? (m0 & 0xFF) : 0;
        dof = (in->imm & 8) ? (m0 & 0xFF) : 0;
        kind = SRC_KIND(in->s[0]) == SRC_V ? 2 : 1;
    }
    int64_t nreg = c->d->nvgpr;
    int64_t s = SRC_IDX(in->s[0]), sr = s + so, dr = (int64_t)in->d + dof;
    if ((kind != 1 && sr >= nreg) || (kind != 0 && dr >= nreg))
        return raise_fault(c, w, FK_VGPR_INDEX, -1, 0, 0, 0, kind != 1 && sr >= nreg ? sr : dr);
    uint64_t m = exec_of(w);
    uint32_t val[LANES];
    if (kind == 0) {
        wv(w, in->d, vreg(w, (int)sr), m);
    } else if (kind == 1) {
        if (SRC_KIND(in->s[0]) == SRC_V) memcpy(val, vreg(w, (int)s), sizeof val);
        else {
            uint32_t x = ssrc(w, in, 0);
            for (int l = 0; l < LANES; l++) val[l] = x;
        }
        wv(w, (int)dr, val, m);
    } else if (kind == 4) {
        uint32_t a[LANES], b[LANES];
        memcpy(a, vreg(w, (int)sr), sizeof a);
        memcpy(b, vreg(w, (int)dr), sizeof b);
        wv(w, (int)dr, a, m);
        wv(w, (int)sr, b, m);
    } else {
        memcpy(val, vreg(w, (int)sr), sizeof val);
        wv(w, (int)dr, val, m);
    }
    return ST_CONT;
}
/* s_movrelsd_2_b32 (GFX10.3): SGPR[D + M0[25:16]] = SGPR[S0 + M0[9:0]], each index clipped to 0..127 */
H(s_movrelsd_2) {
    uint32_t m0 = w->s[M0];
    int64_t si = (int64_t)SRC_IDX(in->s[0]) + (m0 & 0x3FF), di = (int64_t)in->d + (m0 >> 16 & 0x3FF);
    si = si > 127 ? 127 : si;
    di = di > 127 ? 127 : di;
    w->s[di] = w->s[si];
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
    sync_check(c, w, 0);
    w->state = WS_DONE;
    return ST_DONE;
}
H(s_barrier) {
    sync_check(c, w, 1);
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
/* s_sendmsg_rtn_b32/_b64 (GFX11, rdna._sendmsg_rtn): MSG_RTN_GET_REALTIME (imm 131) returns the monotonic clock
 * in nanoseconds, every other message 0; x = 64-bit */
H(s_sendmsg_rtn) {
    uint64_t v = 0;
    if (in->imm == 131) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    if (in->x) write_s64(w, in->d, v);
    else write_s(w, in->d, (uint32_t)v);
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
INLINE uint64_t smem_address(const Wave* w, const NInst* in) {
    uint64_t base = sreg64(w, in->s[0]);
    if (in->a0 & 1) base &= 0x0000FFFFFFFFFFFFull;
    uint64_t a = base + (uint64_t)(int64_t)in->imm;
    if (in->a0 & 2) a += ssrc(w, in, 1);
    return a;
}
H(s_load) {
    uint64_t a = smem_address(w, in);
    a &= ~3ull;
    int n = in->x;
    const uint8_t* p = xlate(c, a, 4 * n);
    if (UNLIKELY(!p)) {
        if (g_check.on) return check_s_load(c, w, a, n, in->d & 127);     /* pyhip/sanitizer: memcheck goes on */
        for (int i = 0; i < n; i++)
            if (!xlate(c, a + 4 * i, 4)) return raise_fault(c, w, FK_MEM, -1, a + 4 * i, 1, 4, 0);
        return raise_fault(c, w, FK_MEM, -1, a, 1, 4, 0);   /* spans two allocations */
    }
    if (INIT_ON()) init_scalar(c, w, a, (uint8_t*)p, 4 * n, 0);
    if (RACE_ON(c)) race_scalar(c, w, a, (uint8_t*)p, 4 * n, RK_READ, NULL);
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
    uint64_t a = smem_address(w, in);
    a &= ~3ull;
    for (int i = 0; i < in->x; i++) {
        uint8_t* p = xlate(c, a + 4 * i, 4);
        if (!p) return raise_fault(c, w, FK_MEM, -1, a + 4 * i, 1, 4, 0);
    }
    if (RACE_ON(c)) {
        uint8_t* p = xlate(c, a, 4 * in->x), data[64];
        for (int i = 0; i < in->x; i++) memcpy(data + 4 * i, &w->s[(in->d + i) & 127], 4);
        if (p) race_scalar(c, w, a, p, 4 * in->x, RK_WRITE, data);
    }
    for (int i = 0; i < in->x; i++) {
        uint8_t* p = xlate(c, a + 4 * i, 4);
        sh_st32(p, w->s[(in->d + i) & 127]);
        if (INIT_ON()) init_scalar(c, w, a + 4 * i, p, 4, 1);
    }
    mm_stored(w);
    return ST_CONT;
}
H(s_atomic) {
    uint64_t a = smem_address(w, in);
    int wide = (in->a0 >> 8) & 1, size = wide ? 8 : 4;
    if (a & (uint64_t)(size - 1)) return raise_fault(c, w, FK_SATOMIC_ALIGN, -1, a, 1, size, 0);
    uint8_t* p = xlate(c, a, size);
    if (!p) return raise_fault(c, w, FK_MEM, -1, a, 1, size, 0);
    if (INIT_ON()) {
        init_scalar(c, w, a, p, size, 0);
        init_scalar(c, w, a, p, size, 1);
    }
    if (RACE_ON(c)) race_scalar(c, w, a, p, size, RK_ATOMIC, NULL);
    uint64_t v = wide ? sreg64(w, in->d & 127) : w->s[in->d & 127];
    uint64_t cmp = in->x == AT_CMPSWAP ? (wide ? sreg64(w, (in->d + 2) & 127) : w->s[(in->d + 1) & 127]) : 0;
    uint64_t old = wide ? atomic_rmw64(p, in->x, v, cmp) : atomic_rmw32(p, in->x, (uint32_t)v, (uint32_t)cmp);
    if (in->flags & F_GLC) {
        if (wide) write_s64(w, in->d, old); else write_s(w, in->d, (uint32_t)old);
    }
    return ST_CONT;
}
