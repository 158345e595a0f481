/* Image sampling (pyhip/emu/semantics/mimg.py _sample_lanes, sampler.py): image_sample* and image_gather4*
 * over the image addressing of ops_image.h (its descriptor, texel fetch and result writing). */
#ifndef PYHIP_OPS_SAMPLE_H
#define PYHIP_OPS_SAMPLE_H

#include "ops_image.h"

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
