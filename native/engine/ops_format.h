/* Typed buffer access (pyhip/emu/semantics/buffer_format.py, texels.py): buffer_load/store_format_* (the format
 * from the V#'s word 3) and tbuffer_load/store_format_* (the format in the instruction), incl. the D16 forms.
 * The element layout comes from the lowering (pyhip/emu/native/lower_mem.py ``buffer_layouts``), never from
 * format numbers known here:
 *   layout word 0: number format | data format << 8 | components << 16 | valid << 24 (valid: the emulated
 *                  device reads and writes it; else the numpy check's fault, FK_BUF_FORMAT)
 *   layout word 1: component widths, X first, 8 bits each
 * NInst: a0 = vm_address's bits, VA_D16 (1: halves packed two to a register, 2: the high half of one),
 * components - 1 in bits 16-17, FMT_STATIC (bit 14): the layout is k[0], k[1] (MTBUF); else k[0] is the aux
 * offset of 128 layouts indexed by word 3 bits 18:12 (the kernel's generation's format code). */
#ifndef PYHIP_OPS_FORMAT_H
#define PYHIP_OPS_FORMAT_H

#include <math.h>
#include "fp.h"
#include "vmem.h"

#define FMT_STATIC(in) (((in)->a0 >> 14) & 1)
#define FMT_NCOMP(in) ((int)(((in)->a0 >> 16) & 3) + 1)
/* IMG_NUM_FORMAT (pyhip/emu/image_desc.py) */
enum { NF_UNORM = 0, NF_SNORM = 1, NF_USCALED = 2, NF_SSCALED = 3, NF_UINT = 4, NF_SINT = 5, NF_FLOAT = 7, NF_SRGB = 9 };

typedef struct Layout {
    int nfmt, ncomp, bytes;
    int width[4], shift[4];
} Layout;

/* a layout table entry (buffer_format.layout_words: number format and component count in w0, component widths
 * in w1's bytes) unpacked: each component's bit offset, the element's bytes */
static void layout_unpack(Layout* L, uint32_t w0, uint32_t w1) {
    L->nfmt = (int)(w0 & 0xFF);
    L->ncomp = (int)(w0 >> 16 & 0xFF);
    int bits = 0;
    for (int i = 0; i < L->ncomp; i++) {
        L->width[i] = (int)(w1 >> (8 * i) & 0xFF);
        L->shift[i] = bits;
        bits += L->width[i];
    }
    L->bytes = bits / 8;
}

/* the element layout of the instruction for this wave, or a fault */
static int fmt_layout(Ctx* c, Wave* w, const NInst* in, Layout* L, int store) {
    uint32_t w0, w1;
    if (FMT_STATIC(in)) {
        w0 = in->k[0];
        w1 = in->k[1];
    } else {
        uint32_t word3 = w->s[(in->s[1] & 127) + 3];
        const int32_t* t = c->d->aux + in->k[0] + 2 * ((word3 >> 12) & 127);
        w0 = (uint32_t)t[0];
        w1 = (uint32_t)t[1];
    }
    if (!(w0 >> 24 & 1)) return raise_fault(c, w, FK_BUF_FORMAT, -1, 0, 0, 0, (int64_t)(w0 & 0xFFFF));
    layout_unpack(L, w0, w1);
    /* a partial store keeps the first components of a uniform 8/16/32-bit layout only */
    int n = FMT_NCOMP(in);
    if (store && n < L->ncomp) {
        for (int i = 1; i < L->ncomp; i++)
            if (L->width[i] != L->width[0])
                return raise_fault(c, w, FK_BUF_FORMAT, -1, 0, 0, 0, (int64_t)(w0 & 0xFFFF) | 1LL << 16);
        if (L->width[0] < 8) return raise_fault(c, w, FK_BUF_FORMAT, -1, 0, 0, 0, (int64_t)(w0 & 0xFFFF) | 1LL << 16);
        L->ncomp = n;
        L->bytes = n * L->width[0] / 8;
    }
    return ST_CONT;
}

INLINE int fmt_integer(int nfmt) { return nfmt == NF_UINT || nfmt == NF_SINT; }
INLINE int64_t fmt_signed(uint64_t v, int bits) { return (v >> (bits - 1) & 1) ? (int64_t)v - (1LL << bits) : (int64_t)v; }

/* component i of an element (texels.decode + to_register): its 32-bit register value */
static uint32_t fmt_read(const uint8_t* raw, const Layout* L, int i) {
    if (i >= L->ncomp) {                                          /* absent: 0, the fourth 1 */
        if (i < 3) return 0;
        return fmt_integer(L->nfmt) ? 1u : 0x3F800000u;
    }
    int b = L->width[i], s = L->shift[i];
    uint64_t word;
    memcpy(&word, raw + s / 8, 8);
    uint64_t v = (word >> (s % 8)) & ((1ULL << b) - 1);
    double mask = (double)((1ULL << b) - 1);
    switch (L->nfmt) {
    case NF_UNORM:
    case NF_SRGB: {
        double x = (double)v / mask;
        if (L->nfmt == NF_SRGB && i < 3) x = x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4);
        return f2u((float)x);
    }
    case NF_SNORM: {
        double x = (double)fmt_signed(v, b) / (double)((1LL << (b - 1)) - 1);
        return f2u((float)(x < -1.0 ? -1.0 : x));
    }
    case NF_USCALED: return f2u((float)(double)v);
    case NF_SSCALED: return f2u((float)(double)fmt_signed(v, b));
    case NF_UINT: return (uint32_t)v;
    case NF_SINT: return (uint32_t)fmt_signed(v, b);
    default:                                  /* FLOAT: 32 bits as they are, 16 widened exactly (NaNs kept) */
        return b == 16 ? f16_to_f32((uint16_t)v) : (uint32_t)v;
    }
}

/* round to nearest even of a binary64 value (|x| < 2^63) */
INLINE double fmt_rint(double x) { return nearbyint(x); }

/* texels.encode: a 32-bit register value as component i's raw bits */
static uint64_t fmt_encode(uint32_t v, const Layout* L, int i) {
    int b = L->width[i];
    uint64_t mask = (1ULL << b) - 1;
    if (fmt_integer(L->nfmt)) return v & mask;
    if (L->nfmt == NF_FLOAT) return b == 16 ? f32_to_f16(v) : v;
    double f = (double)u2f(v), r;
    if (f != f) f = 0.0;
    if (L->nfmt == NF_UNORM || L->nfmt == NF_SRGB) {
        r = fmt_rint((f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f) * (double)mask);
    } else if (L->nfmt == NF_SNORM) {
        r = fmt_rint((f < -1.0 ? -1.0 : f > 1.0 ? 1.0 : f) * (double)((1LL << (b - 1)) - 1));
    } else {                                                      /* USCALED, SSCALED: truncated */
        const double lim = 4611686018427387904.0;                 /* 2^62 */
        r = trunc(f < -lim ? -lim : f > lim ? lim : f);
    }
    return (uint64_t)(int64_t)r & mask;
}

/* buffer_format._format_load */
static int vm_load_format(Ctx* c, Wave* w, const NInst* in) {
    Layout L;
    int st = fmt_layout(c, w, in, &L, 0);
    if (st != ST_CONT) return st;
    uint64_t m = exec_of(w);
    VA va;
    uint8_t* ptr[LANES];
    vm_address(c, w, in, &va);
    uint64_t sel = va.space == SP_BUFFER ? buf_inrange(&va, m, L.bytes) : m;
    st = vm_lanes(c, w, &va, sel, L.bytes, ptr, 0);
    if (st != ST_CONT) return st;
    if (INIT_ON()) init_lanes(c, w, va.a, 0, ptr, sel, L.bytes, 0);
    if (RACE_ON(c) && L.bytes <= 16) race_global(c, w, va.a, ptr, L.bytes, race_global_lanes(&va, sel), RK_READ, NULL);
    int n = FMT_NCOMP(in), d16 = VA_D16(in);
    uint32_t R[4][LANES];
    for (int l = 0; l < LANES; l++) {
        uint8_t raw[24] = {0};
        if (sel >> l & 1) sh_load(raw, ptr[l], L.bytes);
        for (int i = 0; i < n; i++) {
            uint32_t x = fmt_read(raw, &L, i);
            R[i][l] = d16 ? (fmt_integer(L.nfmt) ? x & 0xFFFF : f32_to_f16(x)) : x;   /* D16: 16 bits each */
        }
    }
    if (!d16) {
        for (int i = 0; i < n; i++) wv(w, in->d + i, R[i], m);
        return ST_CONT;
    }
    uint32_t P[LANES];
    if (d16 == 2) {                                               /* the high half, the low one kept */
        const uint32_t* old = vreg(w, in->d);
        for (int l = 0; l < LANES; l++) P[l] = (old[l] & 0xFFFFu) | R[0][l] << 16;
        wv(w, in->d, P, m);
        return ST_CONT;
    }
    for (int r = 0; r < (n + 1) / 2; r++) {
        const uint32_t* old = vreg(w, in->d + r);
        for (int l = 0; l < LANES; l++)
            P[l] = R[2 * r][l] | (2 * r + 1 < n ? R[2 * r + 1][l] << 16 : old[l] & 0xFFFF0000u);
        wv(w, in->d + r, P, m);
    }
    return ST_CONT;
}

/* one lane's element of a typed store, encoded (raw: 24 bytes, L.bytes of them the element) */
static void fmt_pack(const Wave* w, const NInst* in, const Layout* L, int l, uint8_t* raw) {
    int n = FMT_NCOMP(in), d16 = VA_D16(in), integer = fmt_integer(L->nfmt);
    memset(raw, 0, 24);
    for (int i = 0; i < L->ncomp && i < n; i++) {
        uint32_t v;
        if (d16 == 2) v = vreg(w, in->sd)[l] >> 16;
        else if (d16) v = vreg(w, in->sd + i / 2)[l] >> (16 * (i % 2)) & 0xFFFF;
        else v = vreg(w, in->sd + i)[l];
        if (d16 && !integer) v = f16_to_f32((uint16_t)v);        /* D16: from half precision */
        uint64_t bits = fmt_encode(v, L, i) << (L->shift[i] % 8), word;
        memcpy(&word, raw + L->shift[i] / 8, 8);
        word |= bits;
        memcpy(raw + L->shift[i] / 8, &word, 8);
    }
}

/* buffer_format._format_store */
static int vm_store_format(Ctx* c, Wave* w, const NInst* in) {
    Layout L;
    int st = fmt_layout(c, w, in, &L, 1);
    if (st != ST_CONT) return st;
    uint64_t m = exec_of(w);
    VA va;
    uint8_t* ptr[LANES];
    vm_address(c, w, in, &va);
    uint64_t sel = va.space == SP_BUFFER ? buf_inrange(&va, m, L.bytes) : m;
    if (!sel) return ST_CONT;
    st = vm_lanes(c, w, &va, sel, L.bytes, ptr, 1);
    if (st != ST_CONT) return st;
    if (INIT_ON()) init_lanes(c, w, NULL, 0, ptr, sel, L.bytes, 1);
    if (RACE_ON(c) && L.bytes <= 16) {                            /* racecheck: the bytes each lane will store */
        uint8_t data[LANES][16];
        for (int l = 0; l < LANES; l++) {
            uint8_t raw[24];
            if (sel >> l & 1) fmt_pack(w, in, &L, l, raw), memcpy(data[l], raw, 16);
        }
        race_global(c, w, va.a, ptr, L.bytes, race_global_lanes(&va, sel), RK_WRITE, (const uint8_t(*)[16])data);
    }
    for (int l = 0; l < LANES; l++) {                             /* in lane order: a later lane wins */
        if (!(sel >> l & 1)) continue;
        uint8_t raw[24];
        fmt_pack(w, in, &L, l, raw);
        sh_store(ptr[l], raw, L.bytes);
    }
    if (UNLIKELY(g_priv_bounce.mask)) priv_flush(c, w);
    mm_stored(w);
    return ST_CONT;
}

#endif
