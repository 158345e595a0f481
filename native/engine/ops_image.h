/* Image instructions (pyhip/emu/semantics/mimg.py, sampler.py): image_load[_mip], image_store[_mip],
 * image_atomic_*, image_get_resinfo and the image_sample* / image_gather4* variants the numpy engine runs, on
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

/* ---- image_sample* / image_gather4* (mimg._sample_lanes, sampler.py) ------------------------------------------- */
/* NInst: s[2] = SSAMP, khi[0] = the sampler table's aux offset (lower_image.sampler_table: per SF_* field
 * (dword | shift << 3 | bits << 8 | fraction bits << 14 | signed << 20)), a0 bits 21-29 the variant (IS_*) */
#define IS_O(in) (((in)->a0 >> 21) & 1)
#define IS_B(in) (((in)->a0 >> 22) & 1)
#define IS_C(in) (((in)->a0 >> 23) & 1)
#define IS_D(in) (((in)->a0 >> 24) & 1)
#define IS_L(in) (((in)->a0 >> 25) & 1)
#define IS_LZ(in) (((in)->a0 >> 26) & 1)
#define IS_CL(in) (((in)->a0 >> 27) & 1)
#define IS_GATHER(in) (((in)->a0 >> 28) & 1)
#define IS_UNORM(in) (((in)->a0 >> 29) & 1)
enum { SF_CLAMP_X, SF_CLAMP_Y, SF_CLAMP_Z, SF_UNNORM, SF_TRUNC, SF_DEGAMMA, SF_FILTER_MODE, SF_MAG, SF_MIN, SF_ZF,
       SF_MIN_LOD, SF_MAX_LOD, SF_LOD_BIAS, SF_BORDER, SF_COUNT };
/* the S# enumerations (image_desc.py: SQ_TEX_CLAMP, SQ_TEX_XY_FILTER, Z_FILTER, SQ_TEX_BORDER_COLOR, FILTER_MODE) */
enum { CL_WRAP, CL_MIRROR, CL_LAST, CL_MIRROR_ONCE_LAST, CL_HALF_BORDER, CL_MIRROR_ONCE_HALF_BORDER, CL_BORDER,
       CL_MIRROR_ONCE_BORDER };
enum { XYF_BILINEAR = 1, XYF_ANISO_BILINEAR = 3, ZF_POINT = 1, ZF_LINEAR = 2 };
enum { BC_OPAQUE_BLACK = 1, BC_OPAQUE_WHITE = 2, BC_REGISTER = 3, FM_MIN = 1, FM_MAX = 2 };
enum { IMF_BASE_LEVEL = 3, IMF_BORDER = 4, IMF_GATHER = 5 };

static double sf_field(const int32_t* t, const uint32_t* words, int field) {
    uint32_t p = (uint32_t)t[field];
    int dw = p & 7, shift = (p >> 3) & 31, bits = (p >> 8) & 63, frac = (p >> 14) & 63, sgn = (p >> 20) & 1;
    int64_t v = (int64_t)(((uint64_t)words[dw] >> shift) & ((1ULL << bits) - 1));
    if (sgn && (v >> (bits - 1) & 1)) v -= 1LL << bits;
    return (double)v / (double)(1LL << frac);
}

INLINE double np_max(double a, double b) { return (a != a || b != b) ? a + b : a > b ? a : b; }   /* np.maximum */
INLINE double np_min(double a, double b) { return (a != a || b != b) ? a + b : a < b ? a : b; }   /* np.minimum */
INLINE double im_as_float(uint32_t raw, int a16) { return a16 ? h2d(raw & 0xFFFF) : (double)u2f(raw); }

/* sampler.to_fixed */
INLINE int64_t im_fixed(double t, int truncate) {
    const double lim = 4194304.0;                               /* 2^22 texels */
    if (t != t) t = 0.0;
    t = t < -lim ? -lim : t > lim ? lim : t;
    t *= 256.0;
    return (int64_t)(truncate ? floor(t) : nearbyint(t));
}

/* sampler.address: the index in [0, n) and whether the tap takes the border colour */
INLINE int64_t im_address(int64_t i, int64_t n, int mode, int* border) {
    *border = 0;
    if (mode == CL_WRAP) return ((i % n) + n) % n;
    if (mode == CL_MIRROR) {
        int64_t k = ((i % (2 * n)) + 2 * n) % (2 * n);
        return k < n ? k : 2 * n - 1 - k;
    }
    if (mode == CL_MIRROR_ONCE_LAST || mode == CL_MIRROR_ONCE_HALF_BORDER || mode == CL_MIRROR_ONCE_BORDER)
        i = i < 0 ? -1 - i : i;
    if (mode != CL_LAST && mode != CL_MIRROR_ONCE_LAST) *border = i < 0 || i >= n;
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

typedef struct Tap { int64_t idx; int border; double w; } Tap;

/* sampler.axis_taps for one lane: 1 (point) or 2 (linear) taps */
static int im_axis_taps(double t, int64_t n, int linear, int mode, int truncate, Tap* out) {
    if (mode == CL_HALF_BORDER || mode == CL_MIRROR_ONCE_HALF_BORDER) {
        if (mode == CL_MIRROR_ONCE_HALF_BORDER) t = fabs(t);
        if (t == t) t = t < -0.5 ? -0.5 : t > (double)n + 0.5 ? (double)n + 0.5 : t;
    }
    if (!linear) {
        out[0].idx = im_address(im_fixed(t, truncate) >> 8, n, mode, &out[0].border);
        out[0].w = 1.0;
        return 1;
    }
    int64_t q = im_fixed(t - 0.5, 0), i0 = q >> 8;
    double a = (double)(q & 0xFF) / 256.0;
    out[0].idx = im_address(i0, n, mode, &out[0].border);
    out[0].w = 1.0 - a;
    out[1].idx = im_address(i0 + 1, n, mode, &out[1].border);
    out[1].w = a;
    return 2;
}

/* texels.decode with degamma: component values as binary64 (or int64 bits for UINT/SINT) */
static void im_decode(const uint8_t* raw, const Layout* L, int degamma, double* v, int64_t* iv) {
    for (int i = 0; i < 4; i++) {
        if (i >= L->ncomp) {
            v[i] = i == 3 ? 1.0 : 0.0;
            iv[i] = i == 3;
            continue;
        }
        int b = L->width[i], s = L->shift[i];
        uint64_t word;
        memcpy(&word, raw + s / 8, 8);
        uint64_t x = (word >> (s % 8)) & ((1ULL << b) - 1);
        double mask = (double)((1ULL << b) - 1);
        switch (L->nfmt) {
        case NF_UNORM:
        case NF_SRGB: {
            double c = (double)x / mask;
            if ((L->nfmt == NF_SRGB || degamma) && i < 3) c = c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
            v[i] = c;
            break;
        }
        case NF_SNORM: v[i] = np_max((double)fmt_signed(x, b) / (double)((1LL << (b - 1)) - 1), -1.0); break;
        case NF_USCALED: v[i] = (double)x; break;
        case NF_SSCALED: v[i] = (double)fmt_signed(x, b); break;
        case NF_UINT: iv[i] = (int64_t)x; break;
        case NF_SINT: iv[i] = fmt_signed(x, b); break;
        default: v[i] = b == 16 ? h2d((uint32_t)x) : (double)u2f((uint32_t)x); break;
        }
    }
}

#define MAXTAP 8
H(image_sample) {
    uint64_t m = exec_of(w);
    int gather = IS_GATHER(in), d16 = IM_D16(in), a16 = IM_A16(in);
    int dmask = gather ? 0xF : IM_DMASK(in), nsel = __builtin_popcount(dmask);
    int nout = d16 ? (nsel + 1) / 2 : nsel;
    if (!m) {
        im_tfe(w, in, in->d + nout, m);
        return ST_CONT;
    }
    Img I;
    int st = im_image(c, w, in, &I);
    if (st != ST_CONT) return st;
    uint32_t sw[4];
    for (int i = 0; i < 4; i++) sw[i] = w->s[(in->s[2] & 127) + i];
    const int32_t* stab = c->d->aux + in->khi[0];
    int clamp[3];
    for (int k = 0; k < 3; k++) clamp[k] = (int)sf_field(stab, sw, SF_CLAMP_X + k);
    int unnorm = (int)sf_field(stab, sw, SF_UNNORM), trunc_coord = (int)sf_field(stab, sw, SF_TRUNC);
    int degamma = (int)sf_field(stab, sw, SF_DEGAMMA), filter_mode = (int)sf_field(stab, sw, SF_FILTER_MODE);
    int mag = (int)sf_field(stab, sw, SF_MAG), mn = (int)sf_field(stab, sw, SF_MIN), zf = (int)sf_field(stab, sw, SF_ZF);
    double min_lod = sf_field(stab, sw, SF_MIN_LOD), max_lod = sf_field(stab, sw, SF_MAX_LOD);
    double lod_bias = sf_field(stab, sw, SF_LOD_BIAS);
    int border_type = (int)sf_field(stab, sw, SF_BORDER);
    if (I.base_level) return raise_fault(c, w, FK_IMAGE, -1, 0, 0, 0, IMF_BASE_LEVEL | I.base_level << 8);
    int ncoord = I.ncoord, spatial = ncoord - I.array, integer = fmt_integer(I.L.nfmt);
    int normalized = !(IS_UNORM(in) || unnorm);
    int64_t sizes[3] = {I.width, I.height, I.depth};
    /* mimg._addresses: [offset] [bias] [z-compare] [derivatives] coordinates [LOD | clamp] */
    int nextra = IS_O(in) + IS_B(in) + IS_C(in), nderiv = IS_D(in) ? 2 * spatial : 0, k0 = 0;
    const uint32_t* offs = IS_O(in) ? im_addr_reg(c, w, in, k0++) : NULL;
    const uint32_t* bias = IS_B(in) ? im_addr_reg(c, w, in, k0++) : NULL;
    k0 += IS_C(in);
    const uint32_t* deriv[6];
    for (int i = 0; i < nderiv; i++) deriv[i] = im_addr_reg(c, w, in, k0 + i);
    int cb = nextra + nderiv;                                    /* the first coordinate dword */
    /* texel-space coordinates of every lane (the quad LOD reads inactive lanes too) */
    static __thread double tc[3][LANES];
    int nl = wave_lanes(w);
    for (int k = 0; k < spatial; k++)
        for (int l = 0; l < nl; l++) {
            uint32_t raw = a16 ? (uint32_t)(im_addr_reg(c, w, in, cb + k / 2)[l] >> (16 * (k % 2)) & 0xFFFF)
                               : im_addr_reg(c, w, in, cb + k)[l];
            double t = im_as_float(raw, a16);
            if (normalized) t = t * (double)sizes[k];
            if (offs) {
                int64_t o = (int64_t)(offs[l] >> (8 * k) & 0x3F);
                t = t + (double)(o >= 32 ? o - 64 : o);
            }
            tc[k][l] = t;
        }
    int xy_linear[LANES];
    int lin_any[3] = {0, 0, 0};
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        double x;
        if (IS_LZ(in)) x = 0.0;
        else if (IS_L(in)) {
            int kk = cb + (a16 ? ncoord / 2 : ncoord);
            uint32_t raw = im_addr_reg(c, w, in, kk)[l];
            x = im_as_float(a16 ? raw >> (16 * (ncoord % 2)) : raw, a16);
        } else if (nderiv) {
            double dh = 0.0, dv = 0.0;
            for (int k = 0; k < spatial; k++) {
                double s = normalized ? (double)sizes[k] : 1.0;
                double a = (double)u2f(deriv[k][l]) * s, b = (double)u2f(deriv[spatial + k][l]) * s;
                dh = k ? dh + a * a : a * a;
                dv = k ? dv + b * b : b * b;
            }
            x = log2(sqrt(np_max(dh, dv)));
        } else {
            int q = l & ~3;
            double sx = 0.0, sy = 0.0;
            for (int k = 0; k < spatial; k++) {
                double a = tc[k][q + 1] - tc[k][q], b = tc[k][q + 2] - tc[k][q];
                sx = sx + a * a;
                sy = sy + b * b;
            }
            x = log2(sqrt(np_max(sx, sy)));
        }
        if (bias) x = x + im_as_float(bias[l], a16);
        if (IS_CL(in)) {
            int kk = cb + (a16 ? ncoord / 2 : ncoord);
            uint32_t raw = im_addr_reg(c, w, in, kk)[l];
            x = np_min(x, im_as_float(a16 ? raw >> (16 * (ncoord % 2)) : raw, a16));
        }
        int lm = mag == XYF_BILINEAR || mag == XYF_ANISO_BILINEAR, ln = mn == XYF_BILINEAR || mn == XYF_ANISO_BILINEAR;
        int lin;
        if (gather) lin = 1;
        else if (lm == ln) lin = lm;
        else {
            double y = x + lod_bias;
            if (y != y) y = 0.0;
            y = y < min_lod ? min_lod : y;
            y = y > max_lod ? max_lod : y;
            lin = y <= 0 ? lm : ln;
        }
        if (integer && !gather) lin = 0;
        xy_linear[l] = lin;
        for (int k = 0; k < spatial; k++) {
            int zl = k == 2 && (zf == ZF_POINT || zf == ZF_LINEAR) ? zf == ZF_LINEAR : lin;
            lin_any[k] |= zl;
        }
    }
    if (border_type == BC_REGISTER) return raise_fault(c, w, FK_IMAGE, -1, 0, 0, 0, IMF_BORDER);
    /* the border colour in memory-component space (sampler.border_components) */
    double bcol[4] = {0, 0, 0, 0};
    int64_t bicol[4] = {0, 0, 0, 0};
    for (int ch = 0; ch < 4; ch++) {
        int s = I.sel[ch];
        if (s < 4 || s > 7) continue;
        int v = border_type == BC_OPAQUE_WHITE ? 1 : border_type == BC_OPAQUE_BLACK ? ch == 3 : 0;
        bcol[s - 4] = v;
        bicol[s - 4] = v;
    }
    /* per lane and axis: the taps (a point lane on an axis where another lane filters takes its texel twice,
     * the second with weight 0) */
    static __thread Tap taps[3][LANES][2];
    int ntap[3] = {1, 1, 1};
    for (int k = 0; k < spatial; k++) ntap[k] = lin_any[k] ? 2 : 1;
    int64_t layer[LANES];
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        for (int k = 0; k < spatial; k++) {
            int lin = k == 2 && (zf == ZF_POINT || zf == ZF_LINEAR) ? zf == ZF_LINEAR : xy_linear[l];
            Tap pt[2];
            im_axis_taps(tc[k][l], sizes[k], 0, clamp[k], trunc_coord, pt);
            if (ntap[k] == 2 && lin) im_axis_taps(tc[k][l], sizes[k], 1, clamp[k], trunc_coord, taps[k][l]);
            else {
                taps[k][l][0] = pt[0];
                taps[k][l][1] = pt[0];
                taps[k][l][1].w = 0.0;
            }
        }
        if (I.array) {
            uint32_t raw = a16 ? (uint32_t)(im_addr_reg(c, w, in, cb + (ncoord - 1) / 2)[l] >> (16 * ((ncoord - 1) % 2)) & 0xFFFF)
                               : im_addr_reg(c, w, in, cb + ncoord - 1)[l];
            double s = im_as_float(raw, a16);
            if (s != s) s = 0.0;
            s = nearbyint(s);
            double hi = (double)(I.layers - 1);
            s = s < 0 ? 0 : s;
            s = s > hi ? hi : s;
            layer[l] = (int64_t)s + I.base_array;
        } else {
            layer[l] = 0;
        }
    }
    /* the taps in np.ndindex order (the last axis fastest) */
    int ncombo = ntap[0] * ntap[1] * ntap[2];
    static __thread double vals[MAXTAP][LANES][4];
    static __thread int64_t ivals[MAXTAP][LANES][4];
    static __thread double wts[MAXTAP][LANES];
    for (int cmb = 0; cmb < ncombo; cmb++) {
        int j[3] = {cmb / (ntap[1] * ntap[2]), cmb / ntap[2] % ntap[1], cmb % ntap[2]};
        uint64_t a[LANES], fetch = 0;
        uint8_t* ptr[LANES];
        for (int l = 0; l < LANES; l++) {
            if (!(m >> l & 1)) continue;
            int bd = 0;
            double wt = 1.0;
            int64_t idx[3] = {0, 0, 0};
            for (int k = 0; k < spatial; k++) {
                const Tap* tp = &taps[k][l][j[k]];
                bd |= tp->border;
                wt = wt * tp->w;
                idx[k] = tp->idx;
            }
            int64_t x = idx[0], y = spatial > 1 ? idx[1] : 0, z = spatial > 2 ? idx[2] : layer[l];
            wts[cmb][l] = wt;
            if (!bd) {
                fetch |= 1ULL << l;
                a[l] = I.base + (((uint64_t)z * (uint64_t)I.rows + (uint64_t)y) * (uint64_t)I.pitch + (uint64_t)x) *
                                    (uint64_t)I.L.bytes;
            }
        }
        st = im_lanes(c, w, a, fetch, I.L.bytes, ptr, 0);
        if (st != ST_CONT) return st;
        for (int l = 0; l < LANES; l++) {
            if (!(m >> l & 1)) continue;
            if (fetch >> l & 1) {
                uint8_t raw[24] = {0};
                sh_load(raw, ptr[l], I.L.bytes);
                im_decode(raw, &I.L, degamma, vals[cmb][l], ivals[cmb][l]);
            } else {                                       /* sampler.combine: the border colour */
                for (int i = 0; i < 4; i++) {
                    vals[cmb][l][i] = bcol[i];
                    ivals[cmb][l][i] = bicol[i];
                }
            }
        }
    }
    uint32_t R[4][LANES];
    if (gather) {
        if (spatial != 2) return raise_fault(c, w, FK_IMAGE, -1, 0, 0, 0, IMF_GATHER);
        int ch = IM_DMASK(in) ? __builtin_ctz(IM_DMASK(in)) : 3;        /* DMASK 0: numpy's index -1, A */
        static const int order[4] = {1, 3, 2, 0};       /* (x0,y1) (x1,y1) (x1,y0) (x0,y0) */
        int s = I.sel[ch];
        for (int l = 0; l < LANES; l++) {
            if (!(m >> l & 1)) continue;
            for (int o = 0; o < 4; o++) {
                int cmb = order[o];
                if (integer) {
                    int64_t v = s == 1 ? 1 : (s >= 4 && s <= 7) ? ivals[cmb][l][s - 4] : 0;
                    R[o][l] = (uint32_t)v;
                } else {
                    double v = s == 1 ? 1.0 : (s >= 4 && s <= 7) ? vals[cmb][l][s - 4] : 0.0;
                    R[o][l] = f2u((float)v);
                }
            }
        }
    } else {
        for (int l = 0; l < LANES; l++) {
            if (!(m >> l & 1)) continue;
            double out[4];
            int64_t iout[4];
            if (integer) {
                for (int i = 0; i < 4; i++) iout[i] = ivals[0][l][i];
            } else if (filter_mode == FM_MIN || filter_mode == FM_MAX) {
                for (int cmb = 0; cmb < ncombo; cmb++)
                    for (int i = 0; i < 4; i++) {
                        double v = wts[cmb][l] > 0 ? vals[cmb][l][i] : filter_mode == FM_MIN ? INFINITY : -INFINITY;
                        out[i] = cmb == 0 ? v : filter_mode == FM_MIN ? np_min(out[i], v) : np_max(out[i], v);
                    }
            } else {
                for (int i = 0; i < 4; i++) out[i] = 0.0;
                for (int cmb = 0; cmb < ncombo; cmb++)
                    for (int i = 0; i < 4; i++) out[i] += vals[cmb][l][i] * wts[cmb][l];
            }
            for (int ch = 0; ch < 4; ch++) {
                int s = I.sel[ch];
                if (integer) R[ch][l] = (uint32_t)(s == 1 ? 1 : (s >= 4 && s <= 7) ? iout[s - 4] : 0);
                else R[ch][l] = f2u((float)(s == 1 ? 1.0 : (s >= 4 && s <= 7) ? out[s - 4] : 0.0));
            }
        }
    }
    /* the data VGPRs (gather4: all four) */
    if (gather) {
        uint32_t* picked[4] = {R[0], R[1], R[2], R[3]};
        if (!d16) {
            for (int i = 0; i < 4; i++) wv(w, in->d + i, picked[i], m);
        } else {
            uint32_t P[LANES];
            for (int r = 0; r < 2; r++) {
                for (int l = 0; l < LANES; l++) {
                    uint32_t h0 = integer ? picked[2 * r][l] & 0xFFFF : f32_to_f16(picked[2 * r][l]);
                    uint32_t h1 = integer ? picked[2 * r + 1][l] & 0xFFFF : f32_to_f16(picked[2 * r + 1][l]);
                    P[l] = h0 | h1 << 16;
                }
                wv(w, in->d + r, P, m);
            }
        }
    } else {
        im_write_results(w, in, R, d16, integer, m, &nout);
    }
    im_tfe(w, in, in->d + nout, m);
    return ST_CONT;
}

#endif
