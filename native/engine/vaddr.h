/* Vector-memory addressing (vmem.py): the lanes' addresses of GLOBAL / FLAT / SCRATCH / MUBUF accesses
 * (vm_address), the buffer range test, and the fast-path address shapes the loads and stores try first (every
 * lane consecutive, every lane at one address). */
#ifndef PYHIP_VADDR_H
#define PYHIP_VADDR_H

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

#endif
