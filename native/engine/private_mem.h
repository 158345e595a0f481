/* Private (scratch) memory of a wave: the lanes' interleaved layout, the bounce buffer of accesses that cross a
 * chunk, and the fast paths of accesses inside one chunk. */
#ifndef PYHIP_PRIVATE_MEM_H
#define PYHIP_PRIVATE_MEM_H

#include "vaddr.h"

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

#endif
