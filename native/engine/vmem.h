/* Vector memory (vmem.py): per-lane reads and
 * writes of global memory, LDS (through FLAT) and private memory, every lane bounds-checked.  Every lane's
 * access is whole (sh_load / sh_store, state.h: naturally aligned 1-, 2-, 4- and 8-byte accesses single-copy
 * atomic against the workgroups other threads run) and stores mark the wave for its next s_waitcnt's fence
 * (docs/memory-model.md). */
#ifndef PYHIP_VMEM_H
#define PYHIP_VMEM_H

#include "vaddr.h"
#include "private_mem.h"

/* Resolve every active lane of an access of ``size`` bytes to a host pointer (global memory, the
 * workgroup's LDS or the lane's private memory).  Spaces are checked in the numpy order: global lanes
 * first, then LDS, then private.  ``write`` marks private bytes as dirty.  Returns ST_CONT or a fault. */
static int vm_lanes(Ctx* c, Wave* w, const VA* va, uint64_t m, int size, uint8_t** ptr, int write) {
    if (va->space == SP_GLOBAL || va->space == SP_BUFFER) {
        int bad = xlate_lanes(c, va->a, m, size, ptr);
        if (bad >= 0) return bad_lanes(c, w, va->a, m, size, ptr, write, bad);
        return ST_CONT;
    }
    uint64_t glob = m, lds = 0, prv = m;
    if (va->space == SP_FLAT) {
        lds = prv = 0;
        for (int l = 0; l < LANES; l++) {
            uint64_t a = va->a[l];
            if (a >= SHARED_APERTURE && a < SHARED_APERTURE + APERTURE_SIZE) lds |= 1ULL << l;
            else if (a >= PRIVATE_APERTURE && a < PRIVATE_APERTURE + APERTURE_SIZE) prv |= 1ULL << l;
        }
        lds &= m;
        prv &= m;
        glob = m & ~lds & ~prv;
        if (glob) {
            int bad = xlate_lanes(c, va->a, glob, size, ptr);
            if (bad >= 0 && bad_lanes(c, w, va->a, glob, size, ptr, write, bad) != ST_CONT) return ST_FAULT;
        }
        if (lds) {              /* beyond the workgroup's LDS: reads 0, writes dropped (state.h lds_lanes) */
            uint32_t o[LANES];
            for (int l = 0; l < LANES; l++) o[l] = (uint32_t)(va->a[l] - SHARED_APERTURE);
            uint64_t keep = lds_lanes(c, w, o, size, lds, write);
            for (int l = 0; l < LANES; l++) {
                if (!(lds >> l & 1)) continue;
                if (keep >> l & 1) ptr[l] = w->g->lds + o[l];
                else {
                    memset(g_check_sink[l], 0, sizeof g_check_sink[l]);
                    ptr[l] = g_check_sink[l];
                }
            }
        }
    } else {
        glob = 0;
    }
    if (write) g_priv_bounce.mask = 0;
    for (int l = 0; l < LANES; l++) {
        if (!(prv >> l & 1)) continue;
        int64_t o = va->space == SP_FLAT ? (int64_t)(va->a[l] - PRIVATE_APERTURE) : (int64_t)va->a[l];
        if (o < 0 || o + size > (int64_t)c->d->private_size)
            return raise_fault(c, w, FK_SCRATCH, l, (uint64_t)o, 1, size, c->d->private_size);
        if (UNLIKELY(priv_crosses(o, size))) {
            ptr[l] = g_priv_bounce.buf[l];
            priv_copy(c, w, l, o, ptr[l], size, 0);
            if (write) {
                g_priv_bounce.mask |= 1ULL << l;
                g_priv_bounce.off[l] = o;
                g_priv_bounce.size = size;
            }
        } else {
            ptr[l] = priv_ptr(c, w, l, o);
        }
        if (write) priv_touch(w, o + size);
    }
    return ST_CONT;
}

/* racecheck: the lanes of m whose access is to global memory (FLAT: outside the LDS and private apertures) */
static uint64_t race_global_lanes(const VA* va, uint64_t m) {
    if (va->space == SP_GLOBAL || va->space == SP_BUFFER) return m;
    if (va->space != SP_FLAT) return 0;
    uint64_t g = 0;
    for (int l = 0; l < LANES; l++) {
        uint64_t a = va->a[l];
        if (!(a >= SHARED_APERTURE && a < SHARED_APERTURE + APERTURE_SIZE) &&
            !(a >= PRIVATE_APERTURE && a < PRIVATE_APERTURE + APERTURE_SIZE)) g |= 1ULL << l;
    }
    return g & m;
}

/* racecheck: a FLAT access's lanes of m in the LDS aperture (kind RK_*; data: a write's bytes per lane) */
static void race_flat_lds(Ctx* c, const Wave* w, const VA* va, uint64_t m, int size, int kind,
                          const uint8_t (*data)[16]) {
    if (va->space != SP_FLAT) return;
    uint32_t o[LANES];
    uint64_t lds = 0;
    for (int l = 0; l < LANES; l++) {
        uint64_t a = va->a[l];
        o[l] = (uint32_t)(a - SHARED_APERTURE);
        if (a >= SHARED_APERTURE && a < SHARED_APERTURE + APERTURE_SIZE) lds |= 1ULL << l;
    }
    if (lds & m) race_lds(c, w, o, size, lds & m, kind, data);
}

/* operands.write_loaded: loaded bytes into VGPRs (dwords as they are; bytes/shorts zero- or sign-extended,
 * or D16 into one half keeping the other) */
static void write_loaded(Wave* w, int reg, const uint8_t (*raw)[16], int size, int is_signed, int d16, uint64_t m) {
    uint32_t R[LANES];
    if (size >= 4) {
        for (int k = 0; k < size / 4; k++) {
            for (int l = 0; l < LANES; l++) R[l] = ld32(raw[l] + 4 * k);
            wv(w, reg + k, R, m);
        }
        return;
    }
    const uint32_t* old = vreg(w, reg);
    for (int l = 0; l < LANES; l++) {
        uint32_t v;
        if (size == 1) v = is_signed ? (uint32_t)(int32_t)(int8_t)raw[l][0] : raw[l][0];
        else { uint16_t h; memcpy(&h, raw[l], 2); v = is_signed ? (uint32_t)(int32_t)(int16_t)h : h; }
        if (d16 == 1) v = (old[l] & 0xFFFF0000u) | (v & 0xFFFF);
        else if (d16 == 2) v = (old[l] & 0xFFFFu) | (v << 16);
        R[l] = v;
    }
    wv(w, reg, R, m);
}


/* 64 lanes' ``size``-byte values (size a multiple of 4) at consecutive addresses from p into VGPR rows from
 * ``reg``: vector moves for dwords and for 8-byte aligned dwordx2 / dwordx4 (state.h: each aligned value, or
 * 8-byte half, whole), else one lane at a time (sh_load: the naturally aligned pieces whole) */
static void load_contig(Wave* w, int reg, const uint8_t* p, int size, int nl) {
    int nw = size / 4;
    if (nw == 1) {
        sh_load_rows(vreg(w, reg), p, nl);
        return;
    }
    uint32_t* r[4];
    for (int k = 0; k < nw; k++) r[k] = vreg(w, reg + k);
    if (!((uintptr_t)p & 7) && nw != 3) {
        if (nw == 2) sh_load_rows2(r[0], r[1], p, nl);
        else sh_load_rows4(r, p, nl);
        return;
    }
    for (int l = 0; l < nl; l++) {
        uint32_t x[4];
        sh_load((uint8_t*)x, p + (size_t)l * size, size);
        for (int k = 0; k < nw; k++) r[k][l] = x[k];
    }
}

/* GLOBAL addressing with every lane at consecutive addresses (global_contig: lane 0 at a0) but only the
 * lanes of m active: when the span from the first to the last active lane's bytes translates, each active
 * lane's host pointer (as xlate_lanes would give it, without a per-lane lookup); 0: the caller checks lane
 * by lane (and reports the precise fault) */
static int span_ptrs(Ctx* c, uint64_t a0, uint64_t m, int size, uint8_t** ptr) {
    int f = __builtin_ctzll(m), last = 63 - __builtin_clzll(m);
    uint8_t* p = xlate(c, a0 + (uint64_t)f * (uint64_t)size, (uint32_t)((last - f + 1) * size));
    if (!p) return 0;
    for (int l = f; l <= last; l++)
        if (m >> l & 1) ptr[l] = p + (size_t)(l - f) * (size_t)size;
    return 1;
}

/* global loads of size >= 4 bytes (no D16) for the active lanes m at host pointers ptr: each lane's value
 * whole (one access per naturally aligned lane), then the rows */
static void load_lanes(Wave* w, const NInst* in, uint8_t* const* ptr, uint64_t m, int size) {
    uint32_t R[4][LANES];
    int nw = size / 4;
    if (size == 4) {
        for (int l = 0; l < LANES; l++) R[0][l] = (m >> l & 1) ? sh_ld32(ptr[l]) : 0;
        wv(w, in->d, R[0], m);
        return;
    }
    if (size == 8) {
        for (int l = 0; l < LANES; l++) {
            uint64_t v = (m >> l & 1) ? sh_ld64(ptr[l]) : 0;
            R[0][l] = (uint32_t)v;
            R[1][l] = (uint32_t)(v >> 32);
        }
        wv(w, in->d, R[0], m);
        wv(w, in->d + 1, R[1], m);
        return;
    }
    if (size == 12 || size == 16) {                      /* an 8-byte piece and a dword / a second 8-byte piece */
        for (int l = 0; l < LANES; l++) {
            uint64_t a = 0, b = 0;
            if (m >> l & 1) {
                a = sh_ld64(ptr[l]);
                b = size == 16 ? sh_ld64(ptr[l] + 8) : sh_ld32(ptr[l] + 8);
            }
            R[0][l] = (uint32_t)a;
            R[1][l] = (uint32_t)(a >> 32);
            R[2][l] = (uint32_t)b;
            R[3][l] = (uint32_t)(b >> 32);
        }
    } else {
        for (int l = 0; l < LANES; l++) {
            uint32_t x[4] = {0, 0, 0, 0};
            if (m >> l & 1) sh_load((uint8_t*)x, ptr[l], size);
            for (int k = 0; k < nw; k++) R[k][l] = x[k];
        }
    }
    for (int k = 0; k < nw; k++) wv(w, in->d + k, R[k], m);
}

static int vm_load(Ctx* c, Wave* w, const NInst* in) {
    VA va;
    uint8_t* ptr[LANES];
    int size = in->x;
    uint64_t m = exec_of(w);
    uint64_t a0;
    int nl = wave_lanes(w);
    if (m && size >= 4 && !VA_D16(in) && !INIT_ON() && !RACE_ON(c) && (global_contig(w, in, (uint64_t)size, &a0, nl) ||
                                                       buffer_contig(c, w, in, (uint64_t)size, m, &a0, nl))) {
        if (m == w->lane_mask) {
            const uint8_t* p = xlate(c, a0, (uint32_t)(size * nl));
            if (p) {
                load_contig(w, in->d, p, size, nl);
                return ST_CONT;
            }
        } else if (span_ptrs(c, a0, m, size, ptr)) {
            load_lanes(w, in, ptr, m, size);
            return ST_CONT;
        }
    }
    uint64_t sel = m;
    if (m && !INIT_ON() && !RACE_ON(c) && global_uniform(w, in, m, &a0)) {
        const uint8_t* p = xlate(c, a0, (uint32_t)size);
        if (p) {                                        /* one read for every lane (each would read the same) */
            uint8_t x[16];
            sh_load(x, p, size);
            if (size >= 4 && !VA_D16(in)) {
                uint32_t R[LANES];
                for (int k = 0; k < size / 4; k++) {
                    uint32_t v = ld32(x + 4 * k);
                    for (int l = 0; l < LANES; l++) R[l] = v;
                    wv(w, in->d + k, R, m);
                }
                return ST_CONT;
            }
            uint8_t raw[LANES][16];
            for (int l = 0; l < LANES; l++) memcpy(raw[l], x, 16);
            write_loaded(w, in->d, (const uint8_t(*)[16])raw, size, VA_SIGNED(in), VA_D16(in), m);
            return ST_CONT;
        }
    }
    int64_t po;
    uint8_t* pp;
    if (size >= 4 && !VA_D16(in) && !INIT_ON() && priv_uniform(c, w, in, m, size, &pp, &po)) {
        uint32_t R[LANES];                              /* each lane's own copy of one private element */
        for (int k = 0; k < size / 4; k++) {
            for (int l = 0; l < LANES; l++) R[l] = ld32(pp + 16 * l + 4 * k);
            wv(w, in->d + k, R, m);
        }
        return ST_CONT;
    }
    if (buffer_all_outside(w, in, (uint64_t)size, m)) {
        sel = 0;
        goto fill;
    }
    vm_address(c, w, in, &va);
    if (va.space == SP_PRIVATE && size >= 4 && !VA_D16(in) && !INIT_ON() && priv_inside(c, w, &va, m, size, ptr)) {
        uint32_t R[LANES];                              /* the lane's own memory: plain reads */
        for (int k = 0; k < size / 4; k++) {
            for (int l = 0; l < LANES; l++) R[l] = (m >> l & 1) ? ld32(ptr[l] + 4 * k) : 0;
            wv(w, in->d + k, R, m);
        }
        return ST_CONT;
    }
    if (va.space == SP_GLOBAL && size >= 4 && !VA_D16(in)) {
        if (!m) return ST_CONT;
        if (m == w->lane_mask && !INIT_ON() && !RACE_ON(c) && contiguous(va.a, size, nl)) {
            const uint8_t* p = xlate(c, va.a[0], (uint32_t)(size * nl));
            if (p) {
                load_contig(w, in->d, p, size, nl);
                return ST_CONT;
            }
        }
        int bad = xlate_lanes(c, va.a, m, size, ptr);
        if (bad >= 0 && bad_lanes(c, w, va.a, m, size, ptr, 0, bad) != ST_CONT) return ST_FAULT;
        if (INIT_ON()) init_lanes(c, w, va.a, 0, ptr, m, size, 0);
        if (RACE_ON(c)) race_global(c, w, va.a, ptr, size, m, RK_READ, NULL);
        load_lanes(w, in, ptr, m, size);
        return ST_CONT;
    }
    if (va.space == SP_BUFFER) sel = buf_inrange(&va, m, size);
    int st = vm_lanes(c, w, &va, sel, size, ptr, 0);
    if (st != ST_CONT) return st;
    if (INIT_ON()) init_lanes(c, w, va.a, 0, ptr, sel, size, 0);
    if (RACE_ON(c)) {
        race_global(c, w, va.a, ptr, size, race_global_lanes(&va, sel), RK_READ, NULL);
        race_flat_lds(c, w, &va, sel, size, RK_READ, NULL);
    }
fill:;
    uint8_t raw[LANES][16];
    memset(raw, 0, sizeof raw);
    for (int l = 0; l < LANES; l++)
        if (sel >> l & 1) sh_load(raw[l], ptr[l], size);
    write_loaded(w, in->d, (const uint8_t(*)[16])raw, size, VA_SIGNED(in), VA_D16(in), m);
    return ST_CONT;
}

/* 64 lanes' values from VGPR rows at ``reg`` to consecutive addresses from p (as load_contig) */
static void store_contig(const Wave* w, int reg, uint8_t* p, int size, int nl) {
    int nw = size / 4;
    if (nw == 1) {
        sh_store_rows(p, vreg(w, reg), nl);
        return;
    }
    const uint32_t* r[4];
    for (int k = 0; k < nw; k++) r[k] = vreg(w, reg + k);
    if (!((uintptr_t)p & 7) && nw != 3) {
        if (nw == 2) sh_store_rows2(p, r[0], r[1], nl);
        else sh_store_rows4(p, r, nl);
        return;
    }
    for (int l = 0; l < nl; l++) {
        uint32_t x[4];
        for (int k = 0; k < nw; k++) x[k] = r[k][l];
        sh_store(p + (size_t)l * size, (const uint8_t*)x, size);
    }
}

static int vm_store(Ctx* c, Wave* w, const NInst* in) {
    VA va;
    uint8_t* ptr[LANES];
    int size = in->x, nregs = size < 4 ? 1 : size / 4;
    uint64_t m = exec_of(w);
    uint64_t a0;
    int nl = wave_lanes(w);
    uint64_t sel = m;
    if (m && size >= 4 && !VA_D16(in) && !INIT_ON() && !RACE_ON(c) && (global_contig(w, in, (uint64_t)size, &a0, nl) ||
                                                       buffer_contig(c, w, in, (uint64_t)size, m, &a0, nl))) {
        if (m == w->lane_mask) {
            uint8_t* p = xlate(c, a0, (uint32_t)(size * nl));
            if (p) {
                store_contig(w, in->sd, p, size, nl);
                mm_stored(w);
                return ST_CONT;
            }
        } else if (span_ptrs(c, a0, m, size, ptr)) {
            goto lanes;
        }
    }
    if (m && !INIT_ON() && !RACE_ON(c) && global_uniform(w, in, m, &a0)) {
        uint8_t* p = xlate(c, a0, (uint32_t)size);
        if (p) {                                        /* lane by lane the last lane's value stays: write that */
            int last = 63 - __builtin_clzll(m);
            uint32_t words[4];
            for (int k = 0; k < nregs; k++) {
                words[k] = vreg(w, in->sd + k)[last];
                if (VA_D16(in) == 2) words[k] >>= 16;
            }
            sh_store(p, (const uint8_t*)words, size);
            mm_stored(w);
            return ST_CONT;
        }
    }
    int64_t po;
    uint8_t* pp;
    if (size >= 4 && !VA_D16(in) && !INIT_ON() && priv_uniform(c, w, in, m, size, &pp, &po)) {
        for (int k = 0; k < nregs; k++) {               /* each lane's own copy of one private element */
            const uint32_t* r = vreg(w, in->sd + k);
            for (int l = 0; l < LANES; l++)
                if (m >> l & 1) memcpy(pp + 16 * l + 4 * k, &r[l], 4);
        }
        priv_touch(w, po + size);
        mm_stored(w);
        return ST_CONT;
    }
    if (buffer_all_outside(w, in, (uint64_t)size, m)) return ST_CONT;
    vm_address(c, w, in, &va);
    if (va.space == SP_BUFFER) sel = buf_inrange(&va, m, size);
    if (!sel) return ST_CONT;
    if (va.space == SP_PRIVATE && size >= 4 && !VA_D16(in) && !INIT_ON() && priv_inside(c, w, &va, sel, size, ptr)) {
        int64_t hi = 0;                                 /* the lane's own memory: plain writes */
        for (int k = 0; k < nregs; k++) {
            const uint32_t* r = vreg(w, in->sd + k);
            for (int l = 0; l < LANES; l++)
                if (sel >> l & 1) memcpy(ptr[l] + 4 * k, &r[l], 4);
        }
        for (int l = 0; l < LANES; l++)
            if ((sel >> l & 1) && (int64_t)va.a[l] > hi) hi = (int64_t)va.a[l];
        priv_touch(w, hi + size);
        mm_stored(w);
        return ST_CONT;
    }
    if (va.space == SP_GLOBAL && sel == w->lane_mask && size >= 4 && !VA_D16(in) && !INIT_ON() && !RACE_ON(c) &&
        contiguous(va.a, size, nl)) {
        uint8_t* p = xlate(c, va.a[0], (uint32_t)(size * nl));
        if (p) {
            store_contig(w, in->sd, p, size, nl);
            mm_stored(w);
            return ST_CONT;
        }
    }
    int st = vm_lanes(c, w, &va, sel, size, ptr, 1);
    if (st != ST_CONT) return st;
    if (RACE_ON(c)) {
        uint8_t raw[LANES][16];
        for (int l = 0; l < LANES; l++)
            for (int k = 0; k < nregs; k++) {
                uint32_t v = vreg(w, in->sd + k)[l];
                if (VA_D16(in) == 2) v >>= 16;
                memcpy(raw[l] + 4 * k, &v, 4);
            }
        race_global(c, w, va.a, ptr, size, race_global_lanes(&va, sel), RK_WRITE, (const uint8_t(*)[16])raw);
        race_flat_lds(c, w, &va, sel, size, RK_WRITE, (const uint8_t(*)[16])raw);
    }
lanes:
    if (INIT_ON()) init_lanes(c, w, NULL, 0, ptr, sel, size, 1);
    /* lane by lane in lane order (a later lane wins where addresses overlap), each lane's value whole */
    if (size == 4 && !VA_D16(in)) {
        const uint32_t* s = vreg(w, in->sd);
        for (int l = 0; l < LANES; l++)
            if (sel >> l & 1) sh_st32(ptr[l], s[l]);
    } else if ((size == 8 || size == 16) && !VA_D16(in)) {    /* each 8-byte piece whole, as sh_store does */
        const uint32_t* s = vreg(w, in->sd);
        for (int l = 0; l < LANES; l++)
            if (sel >> l & 1)
                for (int k = 0; k < size / 8; k++)
                    sh_st64(ptr[l] + 8 * k, (uint64_t)s[l + 2 * k * LANES] | (uint64_t)s[l + (2 * k + 1) * LANES] << 32);
    } else {
        for (int l = 0; l < LANES; l++) {
            if (!(sel >> l & 1)) continue;
            uint32_t words[4];
            for (int k = 0; k < nregs; k++) {
                words[k] = vreg(w, in->sd + k)[l];
                if (VA_D16(in) == 2) words[k] >>= 16;
            }
            sh_store(ptr[l], (const uint8_t*)words, size);
        }
    }
    if (UNLIKELY(g_priv_bounce.mask)) priv_flush(c, w);
    mm_stored(w);
    return ST_CONT;
}

/* vmem._atomic: alignment of every active lane first, then bounds (the lowest bad address, as the numpy
 * engine reads each distinct address once in address order), then the lanes in order */
static int vm_atomic(Ctx* c, Wave* w, const NInst* in) {
    VA va;
    uint8_t* ptr[LANES];
    int wide = VA_WIDE(in), size = wide ? 8 : 4;
    uint64_t m = exec_of(w);
    vm_address(c, w, in, &va);
    for (int l = 0; l < LANES; l++)
        if ((m >> l & 1) && (va.a[l] & (uint64_t)(size - 1)))
            return raise_fault(c, w, FK_ATOMIC_ALIGN, l, va.a[l], 1, size, 0);
    uint64_t sel = m;
    if (va.space == SP_BUFFER) sel = buf_inrange(&va, m, size);
    if (va.space == SP_GLOBAL || va.space == SP_BUFFER) {
        int bad = xlate_lanes(c, va.a, sel, size, ptr);
        if (bad >= 0) {
            for (int l = 0; l < LANES; l++)
                if ((sel >> l & 1) && va.a[l] < va.a[bad] && !xlate(c, va.a[l], size)) bad = l;
            if (bad_lanes(c, w, va.a, sel, size, ptr, 1, bad) != ST_CONT) return ST_FAULT;
        }
    } else {
        int st = vm_lanes(c, w, &va, sel, size, ptr, 1);
        if (st != ST_CONT) return st;
    }
    if (INIT_ON()) init_atomic_lanes(c, w, va.a, ptr, sel, size);   /* the old value read, the new one written */
    if (RACE_ON(c)) {
        race_global(c, w, va.a, ptr, size, race_global_lanes(&va, sel), RK_ATOMIC, NULL);
        race_flat_lds(c, w, &va, sel, size, RK_ATOMIC, NULL);
    }
    int op = in->x;
    int dreg = in->sd;
    uint64_t res[LANES];
    for (int l = 0; l < LANES; l++) {
        res[l] = 0;
        if (!(sel >> l & 1)) continue;
        if (wide) {
            uint64_t v = (uint64_t)vreg(w, dreg)[l] | (uint64_t)vreg(w, dreg + 1)[l] << 32;
            uint64_t cmp = op == AT_CMPSWAP || op == AT_FCMPSWAP
                               ? ((uint64_t)vreg(w, dreg + 2)[l] | (uint64_t)vreg(w, dreg + 3)[l] << 32) : 0;
            res[l] = atomic_rmw64(ptr[l], op, v, cmp);
        } else {
            uint32_t v = vreg(w, dreg)[l];
            uint32_t cmp = op == AT_CMPSWAP || op == AT_FCMPSWAP ? vreg(w, dreg + 1)[l] : 0;
            res[l] = atomic_rmw32(ptr[l], op, v, cmp);
        }
    }
    if (in->flags & F_GLC) {
        wv_returned(w, in->d, res, m, wide);
    }
    return ST_CONT;
}

#endif
