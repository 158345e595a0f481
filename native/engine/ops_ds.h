/* LDS (ds.py): handlers.  The workgroup's LDS is w->g->lds (lds_size bytes).
 * NInst: s[0] = ADDR VGPR, s[1] = DATA0, s[2] = DATA1 (rows, AGPR offset applied), d = VDST, imm = offset
 * (offset0 | offset1 << 8), a0 = offset0 | offset1 << 8 (two-address forms) ... see lower.py. */

/* LDS addresses are 32 bits: a lane's address is (ADDR VGPR + instruction offset) mod 2^32, as the hardware
 * computes it and as LLVM assumes when it folds a constant into the offset field (ds_read_u8 v3, v2 offset:128
 * with v2 = -64 reads byte 64).  lds_addr gives every lane's wrapped address; lds_ok and lds_io (interp.h)
 * wrap base + offset the same way, and the handlers below pass them the wrapped addresses with offset 0. */
INLINE void lds_addr(uint32_t* out, const uint32_t* vaddr, int64_t off) {
    uint32_t o = (uint32_t)off;
    for (int l = 0; l < LANES; l++) out[l] = vaddr[l] + o;
}

/* every active lane's [a, a + size) inside the group segment, a = (base + off) mod 2^32 (the vectorisable
 * test; when it fails, lds_io does what the hardware does with the lanes beyond: state.h lds_lanes) */
INLINE int lds_ok(const Ctx* c, const uint32_t* base, int64_t off, int size, uint64_t m) {
    int64_t lim = c->d->lds_size;
    uint32_t o32 = (uint32_t)off;
    uint64_t bad = 0;
    for (int l = 0; l < LANES; l++) {
        int64_t o = (uint32_t)(base[l] + o32);
        bad |= (uint64_t)(o + size > lim) << l;
    }
    return (bad & m) == 0;
}

H(ds_read) {
    /* x = size; a0: bit 0 signed, bits 1-2 d16 (1 lo, 2 hi), bit 3 two reads (read2), bits 8.. stride mult;
     * imm: byte offset (single) or offset0 | offset1 << 16 (read2, in elements) */
    int size = in->x, two = (in->a0 >> 3) & 1;
    uint64_t m = exec_of(w);
    uint32_t base[LANES];
    memcpy(base, vreg(w, in->s[0]), sizeof base);   /* read before any result is written (numpy copies it) */
    int64_t offs[2];
    if (two) {
        int mult = in->a0 >> 8;
        offs[0] = (int64_t)(in->imm & 0xFF) * size * mult;
        offs[1] = (int64_t)((in->imm >> 16) & 0xFF) * size * mult;
    } else offs[0] = in->imm;
    int reg = in->d;
    for (int k = 0; k <= two; k++) {
        uint32_t a[LANES];
        lds_addr(a, base, offs[k]);
        if (size >= 4 && !RACE_ON(c) && lds_ok(c, a, 0, size, m)) {   /* dwords straight into the rows */
            const uint8_t* lds = w->g->lds;
            for (int j = 0; j < size / 4; j++) {
                uint32_t R[LANES];
                if (m == ~0ULL)
                    for (int l = 0; l < LANES; l++) R[l] = ld32(lds + a[l] + 4 * j);
                else
                    for (int l = 0; l < LANES; l++) R[l] = (m >> l & 1) ? ld32(lds + a[l] + 4 * j) : 0;
                wv(w, reg + j, R, m);
            }
            reg += size / 4;
            continue;
        }
        uint8_t raw[LANES][16];
        int st = lds_io(c, w, a, 0, size, m, raw, 0);
        if (st != ST_CONT) return st;
        write_loaded(w, reg, (const uint8_t(*)[16])raw, size, in->a0 & 1, (in->a0 >> 1) & 3, m);
        reg += size >= 4 ? size / 4 : 1;
    }
    return ST_CONT;
}
H(ds_write) {
    /* x = size; a0 bit 3 two writes, bits 1-2 d16 hi (2), bits 8.. stride mult; s[1]/s[2] data */
    int size = in->x, two = (in->a0 >> 3) & 1, nregs = size < 4 ? 1 : size / 4;
    uint64_t m = exec_of(w);
    uint32_t base[LANES];
    memcpy(base, vreg(w, in->s[0]), sizeof base);   /* read before any result is written (numpy copies it) */
    int64_t offs[2];
    if (two) {
        int mult = in->a0 >> 8;
        offs[0] = (int64_t)(in->imm & 0xFF) * size * mult;
        offs[1] = (int64_t)((in->imm >> 16) & 0xFF) * size * mult;
    } else offs[0] = in->imm;
    for (int k = 0; k <= two; k++) {
        int dreg = k ? in->s[2] : in->s[1];
        uint32_t a[LANES];
        lds_addr(a, base, offs[k]);
        if (size >= 4 && ((in->a0 >> 1) & 3) != 2 && !RACE_ON(c) && lds_ok(c, a, 0, size, m)) {
            /* lane by lane in lane order, as lds_io writes (a later lane wins where addresses overlap) */
            uint8_t* lds = w->g->lds;
            for (int l = 0; l < LANES; l++) {
                if (!(m >> l & 1)) continue;
                for (int j = 0; j < nregs; j++) st32(lds + a[l] + 4 * j, vreg(w, dreg + j)[l]);
            }
            continue;
        }
        uint8_t raw[LANES][16];
        for (int l = 0; l < LANES; l++)
            for (int j = 0; j < nregs; j++) {
                uint32_t v = vreg(w, dreg + j)[l];
                if (((in->a0 >> 1) & 3) == 2) v >>= 16;
                memcpy(raw[l] + 4 * j, &v, 4);
            }
        int st = lds_io(c, w, a, 0, size, m, raw, 1);
        if (st != ST_CONT) return st;
    }
    return ST_CONT;
}
H(ds_atomic) {
    /* x = atomic op; a0: bit 0 returns, bit 1 swap data0/data1 (cmpst), bit 2 64-bit */
    int wide = (in->a0 >> 2) & 1, size = wide ? 8 : 4;
    uint64_t m = exec_of(w);
    if (!m) return ST_CONT;
    uint32_t base[LANES];
    memcpy(base, vreg(w, in->s[0]), sizeof base);   /* read before any result is written (numpy copies it) */
    lds_addr(base, base, in->imm);
    uint64_t keep = lds_lanes(c, w, base, size, m, 1);     /* beyond the LDS: no effect, returns 0 */
    for (int l = 0; l < LANES; l++) {
        if (!(keep >> l & 1)) continue;
        int64_t o = base[l];
        if (o % size) return raise_fault(c, w, FK_LDS_ATOMIC_ALIGN, -1, (uint64_t)o, 1, size, c->d->lds_size);
    }
    if (RACE_ON(c)) race_lds(c, w, base, size, keep, RK_ATOMIC, NULL);
    uint64_t res[LANES];
    uint8_t* lds = w->g->lds;
    int d0 = in->s[1], d1 = in->s[2];
    for (int l = 0; l < LANES; l++) {
        res[l] = 0;
        if (!(keep >> l & 1)) continue;
        uint8_t* p = lds + base[l];
        uint64_t v, cc;
        if (wide) {
            v = (uint64_t)vreg(w, d0)[l] | (uint64_t)vreg(w, d0 + 1)[l] << 32;
            cc = (uint64_t)vreg(w, d1)[l] | (uint64_t)vreg(w, d1 + 1)[l] << 32;
        } else {
            v = vreg(w, d0)[l];
            cc = vreg(w, d1)[l];
        }
        if ((in->a0 >> 1) & 1) { uint64_t t = v; v = cc; cc = t; }
        if (wide) { uint64_t o = ld64(p); st64(p, rmw64(in->x, o, v, cc)); res[l] = o; }
        else { uint32_t o = ld32(p); st32(p, rmw32(in->x, o, (uint32_t)v, (uint32_t)cc)); res[l] = o; }
    }
    if (in->a0 & 1) {
        wv_returned(w, in->d, res, m, wide);
    }
    return ST_CONT;
}
H(ds_wrxchg2) {
    /* x = size; a0 = stride mult; imm = offset0 | offset1 << 16 (elements) */
    int size = in->x, n = size / 4;
    uint64_t m = exec_of(w);
    uint32_t base[LANES];
    memcpy(base, vreg(w, in->s[0]), sizeof base);   /* read before any result is written (numpy copies it) */
    int64_t offs[2] = {(int64_t)(in->imm & 0xFF) * size * in->a0, (int64_t)((in->imm >> 16) & 0xFF) * size * in->a0};
    for (int i = 0; i < 2; i++) {
        uint8_t old[LANES][16], nw[LANES][16];
        uint32_t a[LANES];
        lds_addr(a, base, offs[i]);
        int st = lds_io(c, w, a, 0, size, m, old, 3);
        if (st != ST_CONT) return st;
        int dreg = i ? in->s[2] : in->s[1];
        for (int l = 0; l < LANES; l++)
            for (int k = 0; k < n; k++) memcpy(nw[l] + 4 * k, &vreg(w, dreg + k)[l], 4);
        st = lds_io(c, w, a, 0, size, m, nw, 2);
        if (st != ST_CONT) return st;
        uint32_t R[LANES];
        for (int k = 0; k < n; k++) {
            for (int l = 0; l < LANES; l++) R[l] = ld32(old[l] + 4 * k);
            wv(w, in->d + i * n + k, R, m);
        }
    }
    return ST_CONT;
}
H(ds_condxchg32_rtn_b64) {
    uint64_t m = exec_of(w);
    uint32_t base[LANES];
    memcpy(base, vreg(w, in->s[0]), sizeof base);   /* read before any result is written (numpy copies it) */
    uint8_t old[LANES][16], nw[LANES][16];
    lds_addr(base, base, in->imm);
    int st = lds_io(c, w, base, 0, 8, m, old, 3);
    if (st != ST_CONT) return st;
    for (int l = 0; l < LANES; l++)
        for (int k = 0; k < 2; k++) {
            uint32_t v = vreg(w, in->s[1] + k)[l], o = ld32(old[l] + 4 * k);
            uint32_t n = (v >> 31) ? (v & 0x7FFFFFFFu) : o;
            memcpy(nw[l] + 4 * k, &n, 4);
        }
    st = lds_io(c, w, base, 0, 8, m, nw, 2);
    if (st != ST_CONT) return st;
    uint32_t R[LANES];
    for (int k = 0; k < 2; k++) {
        for (int l = 0; l < LANES; l++) R[l] = ld32(old[l] + 4 * k);
        wv(w, in->d + k, R, m);
    }
    return ST_CONT;
}
H(ds_addtid) {
    /* x: 1 write (data0 = s[1]), 0 read (into d); LDS address M0[15:0] + offset + 4 * lane */
    uint64_t m = exec_of(w);
    uint32_t base[LANES];
    int64_t m0 = w->s[M0] & 0xFFFF;
    for (int l = 0; l < LANES; l++) base[l] = (uint32_t)(m0 + 4 * l + in->imm);   /* mod 2^32 */
    uint8_t raw[LANES][16];
    if (in->x) {
        for (int l = 0; l < LANES; l++) memcpy(raw[l], &vreg(w, in->s[1])[l], 4);
        int st = lds_io(c, w, base, 0, 4, m, raw, 1);
        if (st != ST_CONT) return st;
    } else {
        int st = lds_io(c, w, base, 0, 4, m, raw, 0);
        if (st != ST_CONT) return st;
        uint32_t R[LANES];
        for (int l = 0; l < LANES; l++) R[l] = ld32(raw[l]);
        wv(w, in->d, R, m);
    }
    return ST_CONT;
}
H(ds_append) {
    /* x: +1 append, 0 consume (subtract); one access per wave at M0[15:0] + offset */
    uint64_t m = exec_of(w);
    if (!m) return ST_CONT;
    uint32_t o = (uint32_t)((w->s[M0] & 0xFFFF) + (uint32_t)in->imm);   /* mod 2^32 */
    uint32_t cur = 0;
    if (lds_lanes(c, w, &o, 4, 1, 1)) {                /* (lane 0 stands for the wave; beyond the LDS: 0) */
        uint8_t* p = w->g->lds + o;
        if (RACE_ON(c)) {
            uint32_t a[LANES] = {o};
            race_lds(c, w, a, 4, 1, RK_ATOMIC, NULL);
        }
        cur = ld32(p);
        int64_t n = __builtin_popcountll(m) * (in->x ? 1 : -1);
        st32(p, (uint32_t)((int64_t)cur + n));
    }
    uint32_t R[LANES];
    for (int l = 0; l < LANES; l++) R[l] = cur;
    wv(w, in->d, R, m);
    return ST_CONT;
}
H(ds_swizzle_b32) {
    /* lanes swap within groups of 32 (bitmask mode) or 4 (quad mode): the same in wave32 and wave64 */
    uint64_t m = exec_of(w);
    const uint32_t* v = vreg(w, in->s[0]);
    uint32_t pat = (uint32_t)in->imm, R[LANES];
    for (int l = 0; l < LANES; l++) {
        int src;
        if (pat & 0x8000) src = (l & ~3) + ((pat >> (2 * (l & 3))) & 3);
        else {
            int and_m = pat & 0x1F, or_m = (pat >> 5) & 0x1F, xor_m = (pat >> 10) & 0x1F;
            src = (l & 0x20) | ((((l & 0x1F) & and_m) | or_m) ^ xor_m);
        }
        R[l] = (m >> src & 1) ? v[src] : 0;
    }
    wv(w, in->d, R, m);
    return ST_CONT;
}
H(ds_bpermute_b32) {
    uint64_t m = exec_of(w);
    const uint32_t* a = vreg(w, in->s[0]);
    const uint32_t* data = vreg(w, in->s[1]);
    uint32_t R[LANES];
    int sel = wave_lanes(w) - 1;         /* the lane from byte address bits [7:2] (wave64) or [6:2] (wave32) */
    if (in->op == OP_ds_bpermute_b32) {
        for (int l = 0; l < LANES; l++) {
            int idx = (int)((((int64_t)a[l] + in->imm) >> 2) & sel);
            R[l] = (m >> idx & 1) ? data[idx] : 0;
        }
    } else {
        memset(R, 0, sizeof R);
        for (int l = 0; l < LANES; l++)
            if (m >> l & 1) R[(((int64_t)a[l] + in->imm) >> 2) & sel] = data[l];
    }
    wv(w, in->d, R, m);
    return ST_CONT;
}
H(ds_permute_b32) { return h_ds_bpermute_b32(c, w, in); }
H(ds_nop) {
    
    return ST_CONT;
}
