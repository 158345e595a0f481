/* Image instructions (pyhip/emu/semantics/mimg.py, sampler.py): image_load[_mip], image_store[_mip],
 * image_atomic_*, image_get_resinfo (the image_sample* / image_gather4* variants: ops_sample.h), on
 * linear images (SW_MODE 0), every generation, wave32 and wave64.
 *
 * The T# layout, the TYPE facts and the format layouts are the lowering's (pyhip/emu/native/lower_image.py
 * ``image_table``: the numpy semantics' tables as data), never numbers known here.  A descriptor the numpy
 * engine refuses faults FK_IMAGE; Python rebuilds the numpy engine's message from the argument.
 * NInst: d = VDATA, s[0] = VADDR (or, IM_NSA, the address VGPRs in k[1], k[2], 8 bits each), s[1] = SRSRC,
 * k[0] = the table's aux offset, x = the atomic op (util.h AT_*), a0 = IM_* bits. */
#ifndef PYHIP_OPS_IMAGE_H
#define PYHIP_OPS_IMAGE_H

#include "ops_format.h"

#define IM_DMASK(in) ((int)((in)->a0 & 0xF))
#define IM_D16(in) (((in)->a0 >> 4) & 1)
#define IM_A16(in) (((in)->a0 >> 5) & 1)
#define IM_TFE(in) (((in)->a0 >> 6) & 1)
#define IM_MIP(in) (((in)->a0 >> 7) & 1)
#define IM_GLC(in) (((in)->a0 >> 8) & 1)
#define IM_NSA(in) (((in)->a0 >> 9) & 1)
#define IM_NSA_N(in) ((int)(((in)->a0 >> 10) & 0xF))
#define IM_DIM(in) ((int)(((in)->a0 >> 16) & 0xF))     /* the TYPE DIM names (IMG_1D + DIM), 0: no DIM (GFX9) */
#define IM_WIDE(in) (((in)->a0 >> 20) & 1)

/* the table's fields, in lower_image._FIELDS' order */
enum { TF_BASE, TF_FMT, TF_WIDTH, TF_HEIGHT, TF_DEPTH, TF_PITCH, TF_BASE_ARRAY, TF_SEL_X, TF_SEL_Y, TF_SEL_Z,
       TF_SEL_W, TF_BASE_LEVEL, TF_LAST_LEVEL, TF_SW_MODE, TF_TYPE, TF_COUNT };
#define IT_TYPES 1
#define IT_FIELDS (IT_TYPES + 16)
#define IT_FORMATS (IT_FIELDS + 3 * TF_COUNT)
/* FK_IMAGE arguments (lower_image.IMF_*) */
enum { IMF_DESC = 0, IMF_MIP = 1, IMF_ATOMIC = 2 };

typedef struct Img {
    uint64_t base;
    int64_t width, height, depth, pitch, base_array, layers, rows;
    int ncoord, layered, array, one_row;
    int sel[4];
    int64_t base_level, last_level;
    Layout L;
} Img;

static uint64_t im_field(const int32_t* t, const uint32_t* words, int field) {
    const int32_t* f = t + IT_FIELDS + 3 * field;
    uint64_t v = 0;
    for (int i = 0; i < 2; i++) {
        uint32_t p = (uint32_t)f[i];
        if (!(p >> 31)) continue;
        int dw = p & 7, shift = (p >> 3) & 31, bits = (p >> 8) & 63, lshift = (p >> 14) & 63;
        uint64_t x = ((uint64_t)words[dw] >> shift) & ((bits >= 64 ? 0 : (1ULL << bits)) - 1);
        v |= x << lshift;
    }
    return v + (uint64_t)(int64_t)f[2];
}

/* mimg._image + image_desc.parse_tsharp: the wave's T#, or FK_IMAGE (the numpy engine's message from Python) */
static int im_image(Ctx* c, Wave* w, const NInst* in, Img* I) {
    const int32_t* t = c->d->aux + in->k[0];
    uint32_t words[8];
    int rs = in->s[1] & 127;
    for (int i = 0; i < 8; i++) words[i] = w->s[rs + i];
    int type = (int)im_field(t, words, TF_TYPE), sw = (int)im_field(t, words, TF_SW_MODE);
    uint32_t fmt = (uint32_t)im_field(t, words, TF_FMT);
    uint32_t tw = (uint32_t)t[IT_TYPES + (type & 15)];
    const int32_t* lw = t + IT_FORMATS + 2 * fmt;
    uint32_t w0 = (uint32_t)lw[0], w1 = (uint32_t)lw[1];
    int dim_ok = !IM_DIM(in) || IM_DIM(in) == type;
    if (!(tw & 15) || !(w0 >> 24 & 1) || sw || !dim_ok)
        return raise_fault(c, w, FK_IMAGE, -1, 0, 0, 0,
                           IMF_DESC | (int64_t)(type & 15) << 8 | (int64_t)(sw & 31) << 12 | (int64_t)(fmt & 0x3FF) << 20);
    I->ncoord = (int)(tw & 15);
    I->layered = (int)(tw >> 4 & 1);
    I->array = (int)(tw >> 5 & 1);
    I->one_row = (int)(tw >> 6 & 1);
    Layout* L = &I->L;
    layout_unpack(L, w0, w1);
    I->base = im_field(t, words, TF_BASE);
    I->width = (int64_t)im_field(t, words, TF_WIDTH);
    I->height = (int64_t)im_field(t, words, TF_HEIGHT);
    I->depth = I->layered ? (int64_t)im_field(t, words, TF_DEPTH) : 1;
    I->base_array = I->array ? (int64_t)im_field(t, words, TF_BASE_ARRAY) : 0;
    int64_t align = t[0];
    if (I->layered && align) I->pitch = (I->width * L->bytes + align - 1) / align * align / L->bytes;
    else I->pitch = (int64_t)im_field(t, words, TF_PITCH);
    for (int i = 0; i < 4; i++) I->sel[i] = (int)im_field(t, words, TF_SEL_X + i);
    I->base_level = (int64_t)im_field(t, words, TF_BASE_LEVEL);
    I->last_level = (int64_t)im_field(t, words, TF_LAST_LEVEL);
    I->layers = I->array ? I->depth - I->base_array : 1;
    I->rows = I->one_row ? 1 : I->height;
    return ST_CONT;
}

/* address VGPR k of the instruction (registers past the file read 0) */
INLINE const uint32_t* im_addr_reg(const Ctx* c, const Wave* w, const NInst* in, int k) {
    static const uint32_t zero[LANES];
    int r;
    if (IM_NSA(in)) {
        if (k >= IM_NSA_N(in)) return zero;
        r = (int)((k < 4 ? in->k[1] : in->k[2]) >> (8 * (k % 4)) & 0xFF);
    } else {
        r = in->s[0] + k;
    }
    return r < c->d->nvgpr ? vreg(w, r) : zero;
}

/* mimg._coords: address component k of lane l as an unsigned value (A16: 16 bits, two per dword) */
INLINE int64_t im_coord(const Ctx* c, const Wave* w, const NInst* in, int k, int l) {
    if (!IM_A16(in)) return (int64_t)im_addr_reg(c, w, in, k)[l];
    return (int64_t)(im_addr_reg(c, w, in, k / 2)[l] >> (16 * (k % 2)) & 0xFFFF);
}

/* mimg._integer_coords + _texel_address: the lanes of m inside the image and their element addresses, or
 * a fault (a mip level other than 0) */
static int im_texels(Ctx* c, Wave* w, const NInst* in, const Img* I, uint64_t m, int mip, uint64_t* inside, uint64_t* a) {
    uint64_t ok = 0;
    int n = I->ncoord;
    for (int l = 0; l < LANES; l++) {
        /* the mip check reads every lane of the wave, active or not (as _integer_coords does) */
        if (!((mip ? w->lane_mask : m) >> l & 1)) continue;
        int64_t x = im_coord(c, w, in, 0, l), y = 0, z = 0;
        if (I->one_row) {
            if (I->array) z = im_coord(c, w, in, 1, l);
        } else {
            y = im_coord(c, w, in, 1, l);
            if (n > 2) z = im_coord(c, w, in, 2, l);
        }
        int good = x < I->width && (I->one_row || y < I->height);
        if (I->layered && !I->array) good = good && z < I->depth;
        else if (I->array) {
            good = good && z < I->layers;
            z += I->base_array;
        }
        if (mip) {
            int64_t level = I->base_level + im_coord(c, w, in, n, l);
            good = good && level <= I->last_level;
            if (good && level != 0) return raise_fault(c, w, FK_IMAGE, -1, 0, 0, 0, IMF_MIP | level << 8);
        }
        if (!good || !(m >> l & 1)) continue;
        ok |= 1ULL << l;
        a[l] = I->base + (((uint64_t)z * (uint64_t)I->rows + (uint64_t)y) * (uint64_t)I->pitch + (uint64_t)x) *
                         (uint64_t)I->L.bytes;
    }
    *inside = ok;
    return ST_CONT;
}

/* numpy's f32 -> f64 -> f32 trip (texels.decode, to_register): a NaN comes back quiet */
INLINE uint32_t im_quiet(uint32_t x) {
    return ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu)) ? x | 0x400000u : x;
}

/* mimg._results: channel values R[0..3] (after DST_SEL) -> the data VGPRs (DMASK channels, D16 pairs) */
static void im_write_results(Wave* w, const NInst* in, uint32_t (*R)[LANES], int d16, int integer, uint64_t m, int* nout) {
    int dmask = IM_DMASK(in), n = 0;
    uint32_t* picked[4];
    for (int ch = 0; ch < 4; ch++)
        if (dmask >> ch & 1) picked[n++] = R[ch];
    if (!d16) {
        for (int i = 0; i < n; i++) wv(w, in->d + i, picked[i], m);
        *nout = n;
        return;
    }
    uint32_t P[LANES];
    for (int r = 0; r < (n + 1) / 2; r++) {
        for (int l = 0; l < LANES; l++) {
            uint32_t h[2] = {0, 0};
            for (int j = 0; j < 2 && 2 * r + j < n; j++) {
                uint32_t x = picked[2 * r + j][l];
                h[j] = integer ? x & 0xFFFF : f32_to_f16(x);
            }
            P[l] = h[0] | h[1] << 16;
        }
        wv(w, in->d + r, P, m);
    }
    *nout = (n + 1) / 2;
}

INLINE void im_tfe(Wave* w, const NInst* in, int reg, uint64_t m) {
    static const uint32_t zero[LANES];
    if (IM_TFE(in)) wv(w, reg, zero, m);
}

/* the element pointers of the lanes of sel (a memory fault as the numpy engine's gather / scatter gives it) */
static int im_lanes(Ctx* c, Wave* w, const uint64_t* a, uint64_t sel, int size, uint8_t** ptr, int write) {
    int bad = xlate_lanes(c, a, sel, (uint32_t)size, ptr);
    if (bad >= 0 && bad_lanes(c, w, a, sel, size, ptr, write, bad) != ST_CONT) return ST_FAULT;
    if (INIT_ON()) init_lanes(c, w, a, 0, ptr, sel, size, write);
    return ST_CONT;
}

/* mimg._load */
H(image_load) {
    uint64_t m = exec_of(w);
    int nsel = __builtin_popcount(IM_DMASK(in)), d16 = IM_D16(in);
    int nout = d16 ? (nsel + 1) / 2 : nsel;
    uint32_t R[4][LANES];
    if (m) {
        Img I;
        int st = im_image(c, w, in, &I);
        if (st != ST_CONT) return st;
        uint64_t a[LANES], sel;
        uint8_t* ptr[LANES];
        st = im_texels(c, w, in, &I, m, IM_MIP(in), &sel, a);
        if (st != ST_CONT) return st;
        st = im_lanes(c, w, a, sel, I.L.bytes, ptr, 0);
        if (st != ST_CONT) return st;
        int integer = fmt_integer(I.L.nfmt), flt = I.L.nfmt == NF_FLOAT;
        uint32_t one = integer ? 1u : 0x3F800000u;
        for (int l = 0; l < LANES; l++) {
            uint32_t comp[4] = {0, 0, 0, 0};
            if (sel >> l & 1) {
                uint8_t raw[24] = {0};
                sh_load(raw, ptr[l], I.L.bytes);
                for (int i = 0; i < 4; i++) {
                    comp[i] = fmt_read(raw, &I.L, i);
                    if (flt) comp[i] = im_quiet(comp[i]);
                }
            }
            for (int ch = 0; ch < 4; ch++) {
                int s = I.sel[ch];
                R[ch][l] = s == 1 ? one : (s >= 4 && s <= 7) ? comp[s - 4] : 0;
            }
        }
        im_write_results(w, in, R, d16, integer, m, &nout);
    } else {
        memset(R, 0, sizeof R);
        im_write_results(w, in, R, d16, 1, m, &nout);
    }
    im_tfe(w, in, in->d + nout, m);
    return ST_CONT;
}

/* mimg._store: per DMASK channel c, memory component c (a partial DMASK keeps the other components) */
H(image_store) {
    uint64_t m = exec_of(w);
    Img I;
    int st = im_image(c, w, in, &I);
    if (st != ST_CONT) return st;
    uint64_t a[LANES], sel;
    uint8_t* ptr[LANES];
    st = im_texels(c, w, in, &I, m, IM_MIP(in), &sel, a);
    if (st != ST_CONT) return st;
    if (!sel) return ST_CONT;
    int dmask = IM_DMASK(in), d16 = IM_D16(in), nc = I.L.ncomp, size = I.L.bytes;
    int reg[4], k = 0, partial = 0;
    for (int ch = 0; ch < 4; ch++) reg[ch] = (dmask >> ch & 1) ? k++ : -1;
    for (int i = 0; i < nc; i++) partial |= reg[i] < 0;
    st = im_lanes(c, w, a, sel, size, ptr, 1);
    if (st != ST_CONT) return st;
    for (int l = 0; l < LANES; l++) {                             /* in lane order: a later lane wins */
        if (!(sel >> l & 1)) continue;
        uint8_t raw[24] = {0};
        if (partial) sh_load(raw, ptr[l], size);
        for (int i = 0; i < nc; i++) {
            if (reg[i] < 0) continue;
            uint32_t v;
            if (d16) {
                int r = in->d + reg[i] / 2;
                v = (r < c->d->nvgpr ? vreg(w, r)[l] : 0) >> (16 * (reg[i] % 2)) & 0xFFFF;
                if (I.L.nfmt == NF_SINT) v = (uint32_t)(int32_t)(int16_t)v;
                else if (I.L.nfmt != NF_UINT) v = f16_to_f32((uint16_t)v);
            } else {
                int r = in->d + reg[i];
                v = r < c->d->nvgpr ? vreg(w, r)[l] : 0;
            }
            int s = I.L.shift[i], b = I.L.width[i];
            uint64_t word, mask = ((1ULL << b) - 1) << (s % 8);
            memcpy(&word, raw + s / 8, 8);
            word = (word & ~mask) | (fmt_encode(v, &I.L, i) << (s % 8) & mask);
            memcpy(raw + s / 8, &word, 8);
        }
        sh_store(ptr[l], raw, size);
    }
    mm_stored(w);
    return ST_CONT;
}

/* mimg._atomic: the lanes in order (atomics.apply), each texel read-modify-written whole */
H(image_atomic) {
    uint64_t m = exec_of(w);
    Img I;
    int st = im_image(c, w, in, &I);
    if (st != ST_CONT) return st;
    int op = in->x, wide = IM_WIDE(in), size = wide ? 8 : 4;
    int fl = op == AT_FMIN || op == AT_FMAX || op == AT_FCMPSWAP;
    int good = fl ? (I.L.nfmt == NF_FLOAT && I.L.bytes == 4 && !wide)
                  : (fmt_integer(I.L.nfmt) && I.L.bytes == size);
    if (!good)
        return raise_fault(c, w, FK_IMAGE, -1, 0, 0, 0,
                           IMF_ATOMIC | (int64_t)(I.L.nfmt & 0xFF) << 8 | (int64_t)(I.L.bytes & 0xFF) << 16 |
                               (int64_t)wide << 24);
    uint64_t a[LANES], sel;
    uint8_t* ptr[LANES];
    st = im_texels(c, w, in, &I, m, 0, &sel, a);
    if (st != ST_CONT) return st;
    uint64_t res[LANES];
    memset(res, 0, sizeof res);
    int cmp = op == AT_CMPSWAP || op == AT_FCMPSWAP, nd = wide ? 2 : 1;
    if (sel) {
        /* bounds: the first bad lane (the numpy engine reads each distinct texel once, at its first lane) */
        int bad = xlate_lanes(c, a, sel, (uint32_t)size, ptr);
        if (bad >= 0 && bad_lanes(c, w, a, sel, size, ptr, 1, bad) != ST_CONT) return ST_FAULT;
        if (INIT_ON()) init_atomic_lanes(c, w, a, ptr, sel, size);
        for (int l = 0; l < LANES; l++) {
            if (!(sel >> l & 1)) continue;
            if (wide) {
                uint64_t v = (uint64_t)vreg(w, in->d)[l] | (uint64_t)vreg(w, in->d + 1)[l] << 32;
                uint64_t k = cmp ? ((uint64_t)vreg(w, in->d + 2)[l] | (uint64_t)vreg(w, in->d + 3)[l] << 32) : 0;
                res[l] = atomic_rmw64(ptr[l], op, v, k);
            } else {
                res[l] = atomic_rmw32(ptr[l], op, vreg(w, in->d)[l], cmp ? vreg(w, in->d + 1)[l] : 0);
            }
        }
        mm_stored(w);
    }
    im_tfe(w, in, in->d + nd, m);
    if (IM_GLC(in)) {
        wv_returned(w, in->d, res, m, wide);
    }
    return ST_CONT;
}

/* mimg._resinfo: (width, height, depth or slices, levels) of the mip level in VADDR */
H(image_resinfo) {
    uint64_t m = exec_of(w);
    uint32_t R[4][LANES];
    memset(R, 0, sizeof R);
    int nout = 0;
    if (m) {
        Img I;
        int st = im_image(c, w, in, &I);
        if (st != ST_CONT) return st;
        const uint32_t* lv = im_addr_reg(c, w, in, 0);
        int64_t levels = I.last_level - I.base_level + 1;
        for (int l = 0; l < LANES; l++) {
            int64_t level = (int64_t)lv[l];
            if (!(m >> l & 1) || level >= levels) continue;
            int64_t sh = I.base_level + level;
            sh = sh < 0 ? 0 : sh > 31 ? 31 : sh;
            int64_t wd = I.width >> sh, ht = I.one_row ? 1 : I.height >> sh, third = 0;
            if (I.layered && !I.array) {
                third = I.depth >> sh;
                if (third < 1) third = 1;
            } else if (I.array) {
                third = I.layers;
            }
            R[0][l] = (uint32_t)(wd < 1 ? 1 : wd);
            R[1][l] = (uint32_t)(ht < 1 ? 1 : ht);
            R[2][l] = (uint32_t)third;
            R[3][l] = (uint32_t)levels;
        }
    }
    int dmask = IM_DMASK(in), n = 0;
    for (int ch = 0; ch < 4; ch++)
        if (dmask >> ch & 1) wv(w, in->d + n++, R[ch], m);
    nout = n;
    im_tfe(w, in, in->d + nout, m);
    return ST_CONT;
}

#endif
