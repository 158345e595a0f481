/* Vector memory (vmem.py): address generation for GLOBAL / FLAT / SCRATCH / MUBUF, per-lane reads and
 * writes of global memory, LDS (through FLAT) and private memory, every lane bounds-checked.  Every lane's
 * access is whole (sh_load / sh_store, state.h: naturally aligned 1-, 2-, 4- and 8-byte accesses single-copy
 * atomic against the workgroups other threads run) and stores mark the wave for its next s_waitcnt's fence
 * (docs/memory-model.md). */
#ifndef PYHIP_VMEM_H
#define PYHIP_VMEM_H

#include "state.h"
#include "util.h"

/* NInst.a0 of vector memory instructions */
#define VA_KIND(in) ((in)->a0 & 0xF)      /* AK_* */
#define VA_SIGNED(in) (((in)->a0 >> 4) & 1)
#define VA_D16(in) (((in)->a0 >> 5) & 3)  /* 0 none, 1 low half, 2 high half */
#define VA_SVE(in) (((in)->a0 >> 7) & 1)
#define VA_OFFEN(in) (((in)->a0 >> 8) & 1)
#define VA_IDXEN(in) (((in)->a0 >> 9) & 1)
#define VA_SADDR(in) (((in)->a0 >> 10) & 1) /* GLOBAL/SCRATCH: an SGPR base (s[1]) */
#define VA_WIDE(in) (((in)->a0 >> 11) & 1)  /* atomics: 64-bit */
#define VA_NOV(in) (((in)->a0 >> 12) & 1)   /* SCRATCH: no VADDR (GFX11 with SVE clear) */
enum { AK_GLOBAL = 0, AK_FLAT, AK_SCRATCH, AK_BUFFER, AK_GLOBAL_TID };   /* TID: GFX10 *_addtid */
enum { SP_GLOBAL = 0, SP_FLAT, SP_PRIVATE, SP_BUFFER };
#define ADD_TID_ENABLE (1u << 23)

typedef struct VA {
    int space;
    uint64_t a[LANES];      /* addresses, or (SP_PRIVATE) signed byte offsets */
    uint64_t inr;           /* SP_BUFFER: lanes inside num_records */
    uint64_t boff[LANES];   /* SP_BUFFER: offsets checked against num_records */
    uint64_t limit;
} VA;

static void vm_address(const Ctx* c, const Wave* w, const NInst* in, VA* va) {
    const uint32_t* v0 = vreg(w, in->s[0]);
    int64_t off = in->imm;
    switch (VA_KIND(in)) {
    case AK_GLOBAL:
        va->space = SP_GLOBAL;
        if (VA_SADDR(in)) {
            uint64_t base = sreg64(w, in->s[1]);
            for (int l = 0; l < LANES; l++) va->a[l] = base + v0[l] + (uint64_t)off;
        } else {
            const uint32_t* v1 = vreg(w, in->s[0] + 1);
            for (int l = 0; l < LANES; l++) va->a[l] = ((uint64_t)v0[l] | (uint64_t)v1[l] << 32) + (uint64_t)off;
        }
        return;
    case AK_FLAT: {
        const uint32_t* v1 = vreg(w, in->s[0] + 1);
        va->space = SP_FLAT;
        for (int l = 0; l < LANES; l++) va->a[l] = ((uint64_t)v0[l] | (uint64_t)v1[l] << 32) + (uint64_t)off;
        return;
    }
    case AK_GLOBAL_TID: {                /* SADDR (or 0) + offset + 4 * lane id (vmem.addtid_global) */
        uint64_t base = (VA_SADDR(in) ? sreg64(w, in->s[1]) : 0) + (uint64_t)off;
        va->space = SP_GLOBAL;
        for (int l = 0; l < LANES; l++) va->a[l] = base + 4 * (uint64_t)l;
        return;
    }
    case AK_SCRATCH: {
        va->space = SP_PRIVATE;
        int64_t base = off + (VA_SADDR(in) ? (int64_t)w->s[in->s[1] & 127] : 0);
        int use_v = !VA_NOV(in) && (!VA_SADDR(in) || VA_SVE(in));
        for (int l = 0; l < LANES; l++) va->a[l] = (uint64_t)(base + (use_v ? (int64_t)v0[l] : 0));
        return;
    }
    default: {
        int rs = in->s[1] & 127;
        uint64_t d0 = w->s[rs], d1 = w->s[rs + 1], d2 = w->s[rs + 2], d3 = w->s[rs + 3];
        uint64_t base = d0 | ((d1 & 0xFFFF) << 32), stride = (d1 >> 16) & 0x3FFF;
        uint64_t wave_off = ssrc(w, in, 2);
        const uint32_t* vidx = v0;
        const uint32_t* voff = (VA_OFFEN(in) && VA_IDXEN(in)) ? vreg(w, in->s[0] + 1) : v0;
        for (int l = 0; l < LANES; l++) {
            uint64_t a = (uint64_t)off;
            if (VA_OFFEN(in)) a += voff[l];
            if (VA_IDXEN(in)) a += (uint64_t)vidx[l] * stride;
            va->a[l] = a;
        }
        if (d3 & ADD_TID_ENABLE) {
            int64_t x = (int64_t)(base - (uint64_t)c->d->private_vsharp_base + wave_off);
            int64_t wave_level = x >= 0 ? x / LANES : -((-x + LANES - 1) / LANES);
            va->space = SP_PRIVATE;
            for (int l = 0; l < LANES; l++) va->a[l] = (uint64_t)((int64_t)va->a[l] + wave_level);
        } else {
            va->space = SP_BUFFER;
            va->limit = d2;
            for (int l = 0; l < LANES; l++) {
                va->boff[l] = wave_off + va->a[l];
                va->a[l] = base + va->boff[l];
            }
        }
        return;
    }
    }
}

/* the buffer lanes whose bytes lie inside num_records (the others read 0 / drop their writes) */
INLINE uint64_t buf_inrange(const VA* va, uint64_t m, int size) {
    uint64_t r = 0;
    for (int l = 0; l < LANES; l++)
        if ((m >> l & 1) && va->boff[l] + (uint64_t)size <= va->limit) r |= 1ULL << l;
    return r;
}

/* Private memory: a wave's lanes interleaved in 16-byte chunks (hardware swizzles scratch across a wave's lanes
 * by dword; the coarser chunk keeps every naturally aligned access of up to 16 bytes in one piece): byte o of
 * lane l at priv + ((o >> 4) * LANES + l) * 16 + (o & 15), private_size a multiple of 16.  The lanes of a wave
 * touching one offset (a spill, a local array indexed alike) touch one kilobyte instead of a page each.  An
 * access crossing a chunk (unaligned, or 12 bytes at 8) goes through the lane's bounce buffer: read into it,
 * or written there and copied out by priv_flush once the lanes have stored. */
INLINE uint8_t* priv_ptr(const Ctx* c, Wave* w, int lane, int64_t o) {
    (void)c;
    return w->priv + ((size_t)(o >> 4) * LANES + (size_t)lane) * 16 + (size_t)(o & 15);
}
INLINE int priv_crosses(int64_t o, int size) { return (int)(o & 15) + size > 16; }
static __thread struct {
    uint64_t mask;              /* lanes whose store waits in buf for priv_flush */
    int size;
    int64_t off[LANES];
    uint8_t buf[LANES][32];
} g_priv_bounce;
/* ``size`` bytes of lane l's private memory at o to buf (out: from buf), chunk by chunk */
static void priv_copy(const Ctx* c, Wave* w, int l, int64_t o, uint8_t* buf, int size, int out) {
    while (size > 0) {
        int n = 16 - (int)(o & 15);
        if (n > size) n = size;
        uint8_t* p = priv_ptr(c, w, l, o);
        if (out) memcpy(p, buf, (size_t)n);
        else memcpy(buf, p, (size_t)n);
        o += n, buf += n, size -= n;
    }
}
/* after a store's lanes wrote through vm_lanes' pointers: the bounced lanes' bytes to their chunks */
static void priv_flush(const Ctx* c, Wave* w) {
    uint64_t m = g_priv_bounce.mask;
    g_priv_bounce.mask = 0;
    for (int l = 0; m; l++, m >>= 1)
        if (m & 1) priv_copy(c, w, l, g_priv_bounce.off[l], g_priv_bounce.buf[l], g_priv_bounce.size, 1);
}
/* bytes [0, end) of every lane of a wave's private memory back to zero */
INLINE void priv_clear(uint8_t* p, uint32_t end) {
    if (p && end) memset(p, 0, (size_t)((end + 15) >> 4) * 16 * LANES);
}
INLINE void priv_touch(Wave* w, int64_t end) {
    if ((uint64_t)end > w->priv_hw) w->priv_hw = (uint32_t)end;
}

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

/* GLOBAL addressing with every lane at consecutive ``size``-byte addresses: lane 0's address into *a0, read
 * straight from the address VGPRs (no per-lane address array).  The same test as contiguous() over the
 * addresses vm_address computes (all arithmetic modulo 2^64); 0 sends the caller to the general path. */
INLINE int global_contig(const Wave* w, const NInst* in, uint64_t size, uint64_t* a0, int nl) {
    if (VA_KIND(in) != AK_GLOBAL) return 0;
    const uint32_t* v0 = vreg(w, in->s[0]);
    uint64_t off = (uint64_t)in->imm, x0;
    uint32_t lo0 = v0[0], sz = (uint32_t)size, bad = 0;
    /* lane l's address is x0 + size * l.  While the low words do not carry out of 32 bits across the wave,
     * that is: low word lo0 + size * l, high word the same in every lane (32-bit compares, 8 lanes per op) */
    int nocarry = (uint64_t)lo0 + size * (uint64_t)(nl - 1) <= 0xFFFFFFFFull;
    if (VA_SADDR(in)) {
        if (!nocarry) return 0;
        for (int l = 0; l < nl; l++) bad |= v0[l] ^ (lo0 + sz * (uint32_t)l);
        x0 = (uint64_t)lo0 + sreg64(w, in->s[1]);
    } else {
        const uint32_t* v1 = vreg(w, in->s[0] + 1);
        uint32_t hi0 = v1[0];
        x0 = (uint64_t)lo0 | (uint64_t)hi0 << 32;
        if (nocarry) {
            for (int l = 0; l < nl; l++) bad |= (v0[l] ^ (lo0 + sz * (uint32_t)l)) | (v1[l] ^ hi0);
        } else {
            uint64_t bad64 = 0;
            for (int l = 0; l < nl; l++) bad64 |= ((uint64_t)v0[l] | (uint64_t)v1[l] << 32) ^ (x0 + size * (uint64_t)l);
            bad = bad64 != 0;
        }
    }
    *a0 = x0 + off;
    return bad == 0;
}

/* MUBUF addressing (offen, no idxen, no swizzle) with every lane at consecutive ``size``-byte offsets and all
 * of the lanes of m inside num_records: lane 0's address into *a0 (the same addresses vm_address computes;
 * every lane the same distance from its neighbour, so the span check is the first and last active lane's).
 * 0 sends the caller to the general path (lanes outside the buffer read 0 and drop their writes there). */
INLINE int buffer_contig(const Ctx* c, const Wave* w, const NInst* in, uint64_t size, uint64_t m, uint64_t* a0, int nl) {
    if (VA_KIND(in) != AK_BUFFER || !VA_OFFEN(in) || VA_IDXEN(in)) return 0;
    int rs = in->s[1] & 127;
    uint64_t d0 = w->s[rs], d1 = w->s[rs + 1], d2 = w->s[rs + 2], d3 = w->s[rs + 3];
    if (d3 & ADD_TID_ENABLE) return 0;
    const uint32_t* v0 = vreg(w, in->s[0]);
    uint32_t x0 = v0[0], sz = (uint32_t)size, bad = 0;
    if ((uint64_t)x0 + size * (uint64_t)(nl - 1) > 0xFFFFFFFFull) return 0;
    for (int l = 0; l < nl; l++) bad |= v0[l] ^ (x0 + sz * (uint32_t)l);
    if (bad) return 0;
    uint64_t b0 = ssrc(w, in, 2) + (uint64_t)in->imm + x0;         /* lane 0's offset checked against d2 */
    int f = __builtin_ctzll(m), last = 63 - __builtin_clzll(m);
    if (b0 + (uint64_t)f * size < b0 || b0 + (uint64_t)(last + 1) * size > d2) return 0;
    (void)c;
    *a0 = (d0 | ((d1 & 0xFFFF) << 32)) + b0;
    return 1;
}

/* MUBUF offen addressing (no idxen, no ADD_TID) with no lane of m inside num_records (the test buf_inrange makes
 * on vm_address's offsets): the access reads 0 / drops its writes, decided without the per-lane address arrays
 * (Triton turns lanes off with the offset 0x80000000 and often a whole wave is off) */
INLINE int buffer_all_outside(const Wave* w, const NInst* in, uint64_t size, uint64_t m) {
    if (!m || VA_KIND(in) != AK_BUFFER || !VA_OFFEN(in) || VA_IDXEN(in)) return 0;
    int rs = in->s[1] & 127;
    if ((uint64_t)w->s[rs + 3] & ADD_TID_ENABLE) return 0;
    uint64_t lim = w->s[rs + 2], base = ssrc(w, in, 2) + (uint64_t)in->imm + size;
    const uint32_t* v0 = vreg(w, in->s[0]);
    uint64_t inside = 0;
    for (int l = 0; l < LANES; l++) inside |= (uint64_t)(base + v0[l] <= lim) << l;
    return (inside & m) == 0;
}

/* every lane of m holds x in VGPR row v (a vector compare; the masked form through unpack_mask) */
INLINE int row_uniform(const uint32_t* v, uint64_t m, uint32_t x) {
    uint32_t bad = 0;
    if (m == ~0ULL) {
        for (int l = 0; l < LANES; l++) bad |= v[l] ^ x;
    } else {
        uint32_t mk[LANES];
        unpack_mask(m, mk);
        for (int l = 0; l < LANES; l++) bad |= (v[l] ^ x) & mk[l];
    }
    return bad == 0;
}

/* GLOBAL addressing with every active lane of m at one address (a value every lane reads or writes through
 * the same VGPR address: a kernel's scalar through a pointer, a loop's uniform element): that address into *a0.
 * 0 sends the caller to the general path. */
INLINE int global_uniform(const Wave* w, const NInst* in, uint64_t m, uint64_t* a0) {
    if (VA_KIND(in) != AK_GLOBAL || !m) return 0;
    const uint32_t* v0 = vreg(w, in->s[0]);
    int f = __builtin_ctzll(m);
    uint32_t lo = v0[f];
    int same = row_uniform(v0, m, lo);
    uint64_t x;
    if (VA_SADDR(in)) {
        x = sreg64(w, in->s[1]) + lo;
    } else {
        const uint32_t* v1 = vreg(w, in->s[0] + 1);
        uint32_t hi = v1[f];
        same = same && row_uniform(v1, m, hi);
        x = (uint64_t)lo | (uint64_t)hi << 32;
    }
    *a0 = x + (uint64_t)in->imm;
    return same;
}

/* Private memory (SP_PRIVATE offsets in va->a) with every active lane of m inside the lane's private segment and
 * inside one chunk: each lane's pointer (vm_lanes' private part without its fault path and its bounce buffer);
 * 0: some lane is outside or crosses a chunk (the caller's general path). */
INLINE int priv_inside(const Ctx* c, Wave* w, const VA* va, uint64_t m, int size, uint8_t** ptr) {
    uint64_t lim = (uint64_t)c->d->private_size - (uint64_t)size, bad = 0;
    if ((uint64_t)size > c->d->private_size) return 0;
    for (int l = 0; l < LANES; l++)                                          /* negative offsets: huge */
        bad |= ((va->a[l] > lim) | ((va->a[l] & 15) + (uint64_t)size > 16)) & (m >> l & 1);
    if (bad) return 0;
    for (int l = 0; l < LANES; l++)
        if (m >> l & 1) ptr[l] = priv_ptr(c, w, l, (int64_t)va->a[l]);
    return 1;
}

/* Private memory (SCRATCH, or MUBUF through a swizzled scratch descriptor, no idxen) where every active lane of m
 * uses one offset o — a private array indexed by a value uniform across the wave — inside the lane's segment and
 * inside one chunk: lane l's bytes are at *p0 + 16 * l (priv_ptr), found without vm_address's per-lane arrays.
 * The offset is vm_address's; 0 sends the caller to the general path. */
INLINE int priv_uniform(const Ctx* c, Wave* w, const NInst* in, uint64_t m, int size, uint8_t** p0, int64_t* o) {
    const uint32_t* v0 = vreg(w, in->s[0]);
    int f = __builtin_ctzll(m), use_v;
    int64_t x;
    if (!m || (uint64_t)size > c->d->private_size) return 0;
    if (VA_KIND(in) == AK_SCRATCH) {
        use_v = !VA_NOV(in) && (!VA_SADDR(in) || VA_SVE(in));
        x = in->imm + (VA_SADDR(in) ? (int64_t)w->s[in->s[1] & 127] : 0) + (use_v ? (int64_t)v0[f] : 0);
    } else if (VA_KIND(in) == AK_BUFFER && !VA_IDXEN(in)) {
        int rs = in->s[1] & 127;
        if (!((uint64_t)w->s[rs + 3] & ADD_TID_ENABLE)) return 0;
        uint64_t base = w->s[rs] | (((uint64_t)w->s[rs + 1] & 0xFFFF) << 32);
        int64_t wo = (int64_t)(base - (uint64_t)c->d->private_vsharp_base + ssrc(w, in, 2));
        int64_t wave_level = wo >= 0 ? wo / LANES : -((-wo + LANES - 1) / LANES);
        use_v = VA_OFFEN(in);
        x = (int64_t)((uint64_t)in->imm + (use_v ? (uint64_t)v0[f] : 0)) + wave_level;
    } else {
        return 0;
    }
    if (use_v && !row_uniform(v0, m, v0[f])) return 0;
    if ((uint64_t)x > (uint64_t)c->d->private_size - (uint64_t)size || priv_crosses(x, size)) return 0;
    *p0 = priv_ptr(c, w, 0, x);
    *o = x;
    return 1;
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
