/* The atomic read-modify-write operations (pyhip/emu/atomics.py's table). */
#ifndef PYHIP_UTIL_H
#define PYHIP_UTIL_H

#include "fp.h"

/* ---- atomics ----------------------------------------------------------------------------------------- */
enum AtomicOp {
    AT_SWAP = 0, AT_CMPSWAP, AT_ADD, AT_SUB, AT_RSUB, AT_SMIN, AT_UMIN, AT_SMAX, AT_UMAX, AT_AND, AT_OR, AT_XOR,
    AT_INC, AT_DEC, AT_FADD, AT_FMIN, AT_FMAX, AT_MSKOR, AT_WRAP, AT_FCMPSWAP, AT_PK_ADD_F16, AT_PK_ADD_BF16,
    AT_CSUB
};

INLINE uint32_t bf16_round(float x) {
    uint32_t b = f2u(x);
    if (x != x) return ((b >> 16) | 0x40) & 0xFFFF;
    uint64_t u = b;
    return (uint32_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF;
}

INLINE uint32_t pk_add(uint32_t o, uint32_t v, int bf16) {
    uint32_t out = 0;
    for (int sh = 0; sh < 32; sh += 16) {
        uint32_t a = (o >> sh) & 0xFFFF, b = (v >> sh) & 0xFFFF, r;
        if (bf16) r = bf16_round(addf(u2f(a << 16), u2f(b << 16)));
        else r = f2h(addf(h2f(a), h2f(b)));
        out |= r << sh;
    }
    return out;
}

/* the new value of one lane's RMW (atomics._seq_fn / apply; numpy's vectorized fmin/fmax return the
 * second operand on ties, i.e. the lane's value for -0 vs +0) */
INLINE uint32_t rmw32(int op, uint32_t o, uint32_t v, uint32_t c) {
    switch (op) {
    case AT_SWAP: return v;
    case AT_CMPSWAP: return o == c ? v : o;
    case AT_ADD: return o + v;
    case AT_SUB: return o - v;
    case AT_RSUB: return v - o;
    case AT_SMIN: return (int32_t)o < (int32_t)v ? o : v;
    case AT_UMIN: return o < v ? o : v;
    case AT_SMAX: return (int32_t)o > (int32_t)v ? o : v;
    case AT_UMAX: return o > v ? o : v;
    case AT_AND: return o & v;
    case AT_OR: return o | v;
    case AT_XOR: return o ^ v;
    case AT_INC: return o >= v ? 0 : o + 1;
    case AT_DEC: return (o == 0 || o > v) ? v : o - 1;
    case AT_FADD: return f2u(addf(u2f(o), u2f(v)));
    case AT_FMIN: { float a = u2f(o), b = u2f(v); return f2u(a != a ? (b != b ? a : b) : b != b ? a : (a < b ? a : b)); }
    case AT_FMAX: { float a = u2f(o), b = u2f(v); return f2u(a != a ? (b != b ? a : b) : b != b ? a : (a > b ? a : b)); }
    case AT_MSKOR: return (o & ~v) | c;
    case AT_WRAP: return o >= v ? o - v : o + c;
    case AT_FCMPSWAP: return u2f(o) == u2f(c) ? v : o;
    case AT_CSUB: return o >= v ? o - v : 0;                  /* GFX10.3: subtract, clamped at 0 */
    case AT_PK_ADD_F16: return pk_add(o, v, 0);
    default: return pk_add(o, v, 1);
    }
}
INLINE uint64_t rmw64(int op, uint64_t o, uint64_t v, uint64_t c) {
    switch (op) {
    case AT_SWAP: return v;
    case AT_CMPSWAP: return o == c ? v : o;
    case AT_ADD: return o + v;
    case AT_SUB: return o - v;
    case AT_RSUB: return v - o;
    case AT_SMIN: return (int64_t)o < (int64_t)v ? o : v;
    case AT_UMIN: return o < v ? o : v;
    case AT_SMAX: return (int64_t)o > (int64_t)v ? o : v;
    case AT_UMAX: return o > v ? o : v;
    case AT_AND: return o & v;
    case AT_OR: return o | v;
    case AT_XOR: return o ^ v;
    case AT_INC: return o >= v ? 0 : o + 1;
    case AT_DEC: return (o == 0 || o > v) ? v : o - 1;
    case AT_FADD: return d2u(addd(u2d(o), u2d(v)));
    case AT_FMIN: { double a = u2d(o), b = u2d(v); return d2u(a != a ? (b != b ? a : b) : b != b ? a : (a < b ? a : b)); }
    case AT_FMAX: { double a = u2d(o), b = u2d(v); return d2u(a != a ? (b != b ? a : b) : b != b ? a : (a > b ? a : b)); }
    case AT_MSKOR: return (o & ~v) | c;
    case AT_WRAP: return o >= v ? o - v : o + c;
    case AT_FCMPSWAP: return u2d(o) == u2d(c) ? v : o;
    default: return o;
    }
}

/* one lane's atomic on shared memory (other threads may run other workgroups): returns the old value */
INLINE uint32_t atomic_rmw32(uint8_t* p, int op, uint32_t v, uint32_t c) {
    uint32_t* q = (uint32_t*)p;
    if (((uintptr_t)p & 3) == 0) {
        switch (op) {
        case AT_ADD: return __atomic_fetch_add(q, v, __ATOMIC_SEQ_CST);
        case AT_SUB: return __atomic_fetch_sub(q, v, __ATOMIC_SEQ_CST);
        case AT_AND: return __atomic_fetch_and(q, v, __ATOMIC_SEQ_CST);
        case AT_OR: return __atomic_fetch_or(q, v, __ATOMIC_SEQ_CST);
        case AT_XOR: return __atomic_fetch_xor(q, v, __ATOMIC_SEQ_CST);
        case AT_SWAP: return __atomic_exchange_n(q, v, __ATOMIC_SEQ_CST);
        default: break;
        }
        uint32_t o = __atomic_load_n(q, __ATOMIC_SEQ_CST);
        for (;;) {
            uint32_t n = rmw32(op, o, v, c);
            if (n == o && op != AT_SWAP) return o;      /* nothing to store (a failed compare-and-swap) */
            if (__atomic_compare_exchange_n(q, &o, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return o;
        }
    }
    uint32_t o = ld32(p);
    st32(p, rmw32(op, o, v, c));
    return o;
}
INLINE uint64_t atomic_rmw64(uint8_t* p, int op, uint64_t v, uint64_t c) {
    uint64_t* q = (uint64_t*)p;
    if (((uintptr_t)p & 7) == 0) {
        switch (op) {
        case AT_ADD: return __atomic_fetch_add(q, v, __ATOMIC_SEQ_CST);
        case AT_SUB: return __atomic_fetch_sub(q, v, __ATOMIC_SEQ_CST);
        case AT_AND: return __atomic_fetch_and(q, v, __ATOMIC_SEQ_CST);
        case AT_OR: return __atomic_fetch_or(q, v, __ATOMIC_SEQ_CST);
        case AT_XOR: return __atomic_fetch_xor(q, v, __ATOMIC_SEQ_CST);
        case AT_SWAP: return __atomic_exchange_n(q, v, __ATOMIC_SEQ_CST);
        default: break;
        }
        uint64_t o = __atomic_load_n(q, __ATOMIC_SEQ_CST);
        for (;;) {
            uint64_t n = rmw64(op, o, v, c);
            if (n == o) return o;
            if (__atomic_compare_exchange_n(q, &o, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return o;
        }
    }
    uint64_t o = ld64(p);
    st64(p, rmw64(op, o, v, c));
    return o;
}

#endif
