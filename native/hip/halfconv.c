/* __gnu_h2f_ieee / __gnu_f2h_ieee: IEEE binary16 <-> binary32 conversions libamdhip64 exports (weak symbols
 * host code compiled by hipcc may call for _Float16 arithmetic).  Round to nearest, ties to even; NaNs stay
 * NaNs (quiet, payload top bits kept), overflow gives infinity, tiny values subnormals or zero. */
#include <stdint.h>
#include <string.h>

float __gnu_h2f_ieee(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (mant << 13);                          /* inf / NaN */
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);                 /* normal: rebias 15 -> 127 */
    } else if (mant == 0) {
        bits = sign;                                                      /* +-0 */
    } else {                                                              /* subnormal: normalise */
        int shift = 0;
        while (!(mant & 0x400)) { mant <<= 1; ++shift; }
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((mant & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint32_t pyhip_round_shift(uint32_t m, unsigned s) {              /* m >> s, ties to even */
    if (s >= 32) return 0;
    uint32_t q = m >> s, rem = m & ((1u << s) - 1), half = 1u << (s - 1);
    return q + (rem > half || (rem == half && (q & 1)));
}

unsigned short __gnu_f2h_ieee(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
    if (ax > 0x7f800000) return (unsigned short)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));   /* NaN, quiet */
    if (ax >= 0x477ff000) return (unsigned short)(sign | 0x7c00);        /* >= 65520: infinity */
    if (ax >= 0x38800000)                                                  /* normal half */
        return (unsigned short)(sign | pyhip_round_shift(ax - ((uint32_t)112 << 23), 13));
    uint32_t e = ax >> 23;                                                 /* subnormal half or zero */
    if (e == 0) return (unsigned short)sign;                               /* float subnormals round to 0 */
    return (unsigned short)(sign | pyhip_round_shift((ax & 0x7fffff) | 0x800000, 126 - e));
}
