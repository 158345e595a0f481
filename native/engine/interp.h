/* The interpreter: one instruction of one wave (step), a wave until it stops (run_wave), a workgroup's
 * waves around barriers (run_group), and the numpy engine's exact schedule for tests (run_lockstep). */
#ifndef PYHIP_INTERP_H
#define PYHIP_INTERP_H

#include "ops.h"
#include "vmem.h"
#include <time.h>

static int jump(Ctx* c, Wave* w, uint64_t target) {
    const Dispatch* d = c->d;
    uint64_t off = target - d->code_base;
    if (off < d->code_size && !(off & 3)) {
        int32_t idx = d->addr_index[off >> 2];
        if (idx >= 0) {
            w->ip = idx;
            return ST_CONT;
        }
    }
    return raise_fault(c, w, FK_JUMP, -1, target, 1, 0, 0);
}

/* ds._lds_io: ``size`` bytes per active lane at LDS addresses (base[l] + off) mod 2^32 (LDS addresses are 32
 * bits, ops_ds.h); a lane beyond the workgroup's LDS reads 0 / writes nothing (lds_lanes).  write: 0 a read, 1 a
 * write, 2 / 3 the write / read half of an atomic exchange (racecheck is told of the write, as an atomic) */
static int lds_io(Ctx* c, Wave* w, const uint32_t* base, int64_t off, int size, uint64_t m, uint8_t (*raw)[16], int write) {
    uint32_t o32 = (uint32_t)off, a[LANES];
    for (int l = 0; l < LANES; l++) a[l] = base[l] + o32;
    uint64_t keep = lds_lanes(c, w, a, size, m, write == 1 || write == 2);
    if (RACE_ON(c) && write != 3)
        race_lds(c, w, a, size, keep, write == 0 ? RK_READ : write == 1 ? RK_WRITE : RK_ATOMIC, (const uint8_t(*)[16])raw);
    write = write == 1 || write == 2;
    uint8_t* lds = w->g->lds;
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        uint8_t* p = lds + a[l];
        if (!(keep >> l & 1)) {
            if (!write) memset(raw[l], 0, size);
        } else if (write) memcpy(p, raw[l], size);
        else memcpy(raw[l], p, size);
    }
    return ST_CONT;
}

/* ---- the handlers: one function per native op, called through HANDLERS[op] ----------------------- */
#define H(name) static int h_##name(Ctx* c, Wave* w, const NInst* in)
#include "ops_scalar.h"
#include "ops_ds.h"
#include "ops_mfma.h"
#include "ops_format.h"
#include "ops_image.h"
#include "ops_sample.h"
H(vm_load) { return vm_load(c, w, in); }
H(vm_store) { return vm_store(c, w, in); }
H(vm_atomic) { return vm_atomic(c, w, in); }
H(vm_load_format) { return vm_load_format(c, w, in); }
H(vm_store_format) { return vm_store_format(c, w, in); }
/* vmem._load_lds: each active lane's value (zero/sign-extended to a dword) into LDS at M0[17:0] + offset +
 * 4 * lane (x = size; imm = the instruction offset, also counted in the LDS address except for SCRATCH) */
H(vm_load_lds) {
    VA va;
    uint8_t* ptr[LANES];
    int size = in->x;
    uint64_t m = exec_of(w);
    vm_address(c, w, in, &va);
    uint64_t sel = m;
    if (va.space == SP_BUFFER) sel = buf_inrange(&va, m, size);
    int st = vm_lanes(c, w, &va, sel, size, ptr, 0);
    if (st != ST_CONT) return st;
    if (INIT_ON()) init_lanes(c, w, va.a, 0, ptr, sel, size, 0);
    uint8_t raw[LANES][16];
    uint32_t base[LANES];
    int64_t m0 = w->s[M0] & 0x3FFFF;
    for (int l = 0; l < LANES; l++) {
        uint32_t v = 0;
        if (sel >> l & 1) {   /* the lane's access whole (state.h) */
            uint8_t b[16] = {0};
            sh_load(b, ptr[l], size);
            memcpy(&v, b, 4);
        }
        if (size < 4) {
            v &= (1u << (8 * size)) - 1;
            if (VA_SIGNED(in)) v = (uint32_t)(((int32_t)(v << (32 - 8 * size))) >> (32 - 8 * size));
        }
        memcpy(raw[l], &v, 4);
        base[l] = (uint32_t)(m0 + 4 * l);
    }
    return lds_io(c, w, base, VA_KIND(in) == AK_SCRATCH ? 0 : in->imm, 4, m, raw, 1);
}
H(badpc) {
    (void)in;
    return raise_fault(c, w, FK_JUMP, -1, (uint64_t)in->k[0] | (uint64_t)in->khi[0] << 32, 1, 0, 0);
}

/* an instruction only compiled code runs (generated from its description, pyhip/emu/jit): never interpreted */
H(described) {
    (void)in;
    return raise_fault(c, w, FK_UNSUPPORTED, -1, 0, 0, 0, 0);
}

typedef int (*Handler)(Ctx*, Wave*, const NInst*);
static const Handler HANDLERS[OP_COUNT] = {
#define OP_FN(n) h_##n,
    OP_LIST(OP_FN)
#undef OP_FN
};

INLINE int step(Ctx* c, Wave* w) {
    int ip = w->ip;
    const NInst* in = &c->code[ip];
    w->ip = in->next;
    c->cur_ip = ip;
    return HANDLERS[in->op](c, w, in);
}

static void dump_wave(const Dispatch* d, const Wave* w, WaveDump* out) {
    out->ip = w->ip;
    out->pc = w->ip >= 0 ? d->code_base + (uint64_t)(int64_t)(int32_t)d->code[w->ip].pc : 0;
    out->exec = exec_of(w);
    for (int i = 0; i < 4; i++) out->s[i] = w->s[i];
    out->v0 = d->nvgpr > 0 ? w->v[0] : 0;
    out->v1 = d->nvgpr > 1 ? w->v[LANES] : 0;
    out->wave = w->wave;
    memcpy(out->wg, w->g->id, sizeof out->wg);
}

/* the watchdog: the fault names ``w`` and dumps up to 8 live waves */
static int watchdog(Ctx* c, Wave* w, Wave* const* live, int nlive) {
    Dispatch* d = c->d;
    c->cur_ip = w->ip;
    int st = raise_fault(c, w, FK_WATCHDOG, -1, 0, 0, 0, d->max_steps);
    if (d->fault.kind == FK_WATCHDOG && d->fault.ndump == 0) {
        int n = 0;
        for (int i = 0; i < nlive && n < 8; i++)
            if (live[i]->state != WS_DONE) dump_wave(d, live[i], &d->fault.dump[n++]);
        d->fault.ndump = n;
    }
    return st;
}

static int run_wave(Ctx* c, Wave* w, int64_t budget, Wave* const* group_waves, int nw) {
    Dispatch* d = c->d;
    int64_t left = d->max_steps - w->count;
    int64_t lim = budget < left + 1 ? budget : left + 1;
    int64_t n = 0;
    int st;
    do {
        st = step(c, w);
        n++;
    } while (st == ST_CONT && n < lim);
    w->count += n;
    c->ninst += n;
    if (st == ST_CONT) {
        if (w->count > d->max_steps) return watchdog(c, w, group_waves, nw);
        return ST_SLICE;
    }
    return st;
}

/* ---- workgroup setup ------------------------------------------------------------------------------------ */
/* EXEC and the work-item id VGPRs of wave k of a (px, py, pz) workgroup (inactive lanes 0) */
static uint64_t wave_ids(const Dispatch* d, int k, uint32_t px, uint32_t py, uint32_t pz, uint32_t* v0, uint32_t* v1,
                         uint32_t* v2) {
    uint64_t active = (uint64_t)px * py * pz, ex = 0;
    int lanes = d->lanes == 32 ? 32 : LANES;
    uint64_t t0 = (uint64_t)k * lanes;            /* the first lane's (x, y, z); then counted up, no division */
    uint32_t cx = (uint32_t)(t0 % px), cy = (uint32_t)((t0 / px) % py), cz = (uint32_t)(t0 / ((uint64_t)px * py));
    for (int l = 0; l < LANES; l++) {
        uint64_t t = t0 + l;
        int on = l < lanes && t < active;
        uint32_t x = on ? cx : 0, y = on ? cy : 0, z = on ? cz : 0;
        if (++cx == px) {
            cx = 0;
            if (++cy == py) { cy = 0; cz++; }
        }
        if (on) ex |= 1ULL << l;
        if (d->vgpr_ids) {
            uint32_t val = x;
            if (d->wid >= 1) val |= y << 10;
            if (d->wid >= 2) val |= z << 20;
            v0[l] = val;
        } else {
            v0[l] = x;
            if (d->wid >= 1 && v1) v1[l] = y;
            if (d->wid >= 2 && v2) v2[l] = z;
        }
    }
    return ex;
}

/* the EXEC/VGPR pattern of every wave of a whole workgroup, computed once per dispatch */
static uint8_t* make_pattern(const Dispatch* d) {
    uint8_t* pat = calloc((size_t)d->waves_per_group, PATTERN_STRIDE);
    if (!pat) return NULL;
    for (int k = 0; k < d->waves_per_group; k++) {
        uint8_t* p = pat + (size_t)k * PATTERN_STRIDE;
        uint32_t* v0 = (uint32_t*)(p + 8);
        uint64_t ex = wave_ids(d, k, d->wg[0], d->wg[1], d->wg[2], v0, v0 + LANES, v0 + 2 * LANES);
        memcpy(p, &ex, 8);
    }
    return pat;
}

/* a wave's 128 SGPRs from the dispatch's initial values: vector moves (glibc's memcpy takes rep movsq for
 * 512 bytes, whose start-up cost was half of a small wave's setup) */
INLINE void copy_sgprs(uint32_t* dst, const uint32_t* src) {
#if defined(__AVX2__)
    for (int i = 0; i < NSGPR; i += 8)
        _mm256_storeu_si256((__m256i*)(dst + i), _mm256_loadu_si256((const __m256i*)(src + i)));
#elif defined(__SSE2__)
    for (int i = 0; i < NSGPR; i += 4)
        _mm_storeu_si128((__m128i*)(dst + i), _mm_loadu_si128((const __m128i*)(src + i)));
#else
    memcpy(dst, src, NSGPR * 4);
#endif
}

static void init_group(Ctx* c, Group* g, int64_t flat, Wave* waves, uint32_t* vgprs, uint8_t* priv, uint8_t* lds) {
    const Dispatch* d = c->d;
    uint32_t cx = d->counts[0], cy = d->counts[1];
    g->flat = flat;
    g->id[0] = (uint32_t)(flat % cx);
    g->id[1] = (uint32_t)((flat / cx) % cy);
    g->id[2] = (uint32_t)(flat / ((int64_t)cx * cy));
    g->w = waves;
    g->nw = d->waves_per_group;
    g->lds = lds;
    size_t ldsz = (d->lds_alloc + 3) / 4 * 4;
    memset(lds, 0, ldsz < 4 ? 4 : ldsz);
    uint32_t px = d->wg[0], py = d->wg[1], pz = d->wg[2];
    uint64_t rx = (uint64_t)d->grid[0] - (uint64_t)g->id[0] * d->wg[0];
    uint64_t ry = (uint64_t)d->grid[1] - (uint64_t)g->id[1] * d->wg[1];
    uint64_t rz = (uint64_t)d->grid[2] - (uint64_t)g->id[2] * d->wg[2];
    if (rx < px) px = (uint32_t)rx;
    if (ry < py) py = (uint32_t)ry;
    if (rz < pz) pz = (uint32_t)rz;
    int full = px == d->wg[0] && py == d->wg[1] && pz == d->wg[2];
    size_t vsize = (size_t)d->nvgpr * LANES;
    size_t psize = (size_t)d->private_size * LANES;
    for (int k = 0; k < g->nw; k++) {
        Wave* w = &waves[k];
        uint32_t* v = vgprs + vsize * k;
        if (d->capture) memset(v, 0, vsize * 4);
        uint8_t* p = priv ? priv + psize * k : NULL;
        if (p && w->priv == p) priv_clear(p, w->priv_hw);
        copy_sgprs(w->s, d->sgpr_init);
        w->v = v;
        w->priv = p;
        w->priv_hw = 0;
        w->g = g;
        w->wave = k;
        w->scc = 0;
        w->mode = d->mode;
        w->trap_sts = 0;
        w->ip = d->entry;
        w->state = WS_RUN;
        w->count = 0;
        w->mm_pending = 0;
        w->lane_mask = d->lanes == 32 ? 0xFFFFFFFFull : ~0ull;
        for (int i = 0; i < 3; i++)
            if (d->wgid_sgpr[i] >= 0) w->s[d->wgid_sgpr[i]] = g->id[i];
        if (d->wginfo_sgpr >= 0) w->s[d->wginfo_sgpr] = (uint32_t)g->nw | (k == 0 ? 0x80000000u : 0);
        uint64_t ex = 0;
        uint32_t* v0 = v;
        uint32_t* v1 = d->nvgpr > 1 ? v + LANES : NULL;
        uint32_t* v2 = d->nvgpr > 2 ? v + 2 * LANES : NULL;
        int nv = d->vgpr_ids ? 1 : (d->wid >= 2 ? 3 : d->wid + 1);
        if (d->pattern && full) {
            const uint8_t* pat = d->pattern + (size_t)k * PATTERN_STRIDE;
            memcpy(&ex, pat, 8);
            memcpy(v0, pat + 8, 256);
            if (nv > 1 && v1) memcpy(v1, pat + 8 + 256, 256);
            if (nv > 2 && v2) memcpy(v2, pat + 8 + 512, 256);
        } else {
            ex = wave_ids(d, k, px, py, pz, v0, v1, v2);
        }
        w->s[EXEC] = (uint32_t)ex;
        w->s[EXEC + 1] = (uint32_t)(ex >> 32);
    }
}

static void capture_group(const Dispatch* d, const Group* g) {
    if (!d->capture || !d->capture_buf) return;
    for (int k = 0; k < g->nw; k++) {
        const Wave* w = &g->w[k];
        uint8_t* out = d->capture_buf + (size_t)(g->flat * g->nw + k) * d->capture_stride;
        memcpy(out, w->s, NSGPR * 4);
        uint32_t extra[2] = {w->scc, w->mode};
        memcpy(out + NSGPR * 4, extra, 8);
        uint64_t pc = w->ip >= 0 ? d->code_base + (uint64_t)(int64_t)(int32_t)d->code[w->ip].pc : 0;
        memcpy(out + NSGPR * 4 + 8, &pc, 8);
        memcpy(out + NSGPR * 4 + 16, w->v, (size_t)d->nvgpr * LANES * 4);
    }
}

#define SLICE 4096

/* a wave of a compiled kernel (pyhip/emu/jit): the function runs from w->ip (a block's instruction index) until
 * the wave ends, waits at a barrier, faults, or its instruction count reaches c->jit_limit at a loop head */
typedef int (*JitFn)(Wave*, Ctx*);

static int run_wave_jit(Ctx* c, Wave* w, Wave* const* group_waves, int nw) {
    Dispatch* d = c->d;
    int64_t left = d->max_steps - w->count;
    int64_t budget = SLICE < left + 1 ? SLICE : left + 1;
    int64_t before = w->count;
    c->jit_limit = w->count + budget;
    int st = ((JitFn)d->jit_fn)(w, c);
    c->ninst += w->count - before;
    if (st == ST_SLICE && w->count > d->max_steps) return watchdog(c, w, group_waves, nw);
    return st;
}

/* waves of one workgroup, in turn, each until it stops (barrier, end, a time slice); barriers release when
 * every wave that has not ended waits at one */
static int run_group(Ctx* c, Group* g) {
    Dispatch* d = c->d;
    Wave* ptrs[64];
    int nw = g->nw < 64 ? g->nw : 64;
    for (int k = 0; k < nw; k++) ptrs[k] = &g->w[k];
    for (;;) {
        int nrun = 0, ndone = 0;
        for (int k = 0; k < g->nw; k++) {
            Wave* w = &g->w[k];
            if (w->state == WS_RUN) {
                int st = d->jit_fn ? run_wave_jit(c, w, ptrs, nw) : run_wave(c, w, SLICE, ptrs, nw);
                if (st == ST_FAULT) return ST_FAULT;
            }
            nrun += w->state == WS_RUN;
            ndone += w->state == WS_DONE;
        }
        if (ndone == g->nw) return ST_DONE;
        if (nrun == 0)
            for (int k = 0; k < g->nw; k++)
                if (g->w[k].state == WS_BARRIER) g->w[k].state = WS_RUN;
        if (__atomic_load_n(&d->abort_flag, __ATOMIC_RELAXED)) return ST_FAULT;
    }
}

/* The numpy engine's schedule (engine.Dispatch._run_batch_inner): the live waves at the lowest PC run one
 * straight-line block together, instruction by instruction, wave after wave; barriers release per
 * workgroup when no wave of the batch can run. */
static int block_length(const Dispatch* d, int ip) {
    int n = 0;
    for (;;) {
        const NInst* in = &d->code[ip];
        n++;
        if ((in->flags & F_BLOCK_END) || in->next < 0 || d->code[in->next].op == OP_badpc || n >= 256) return n;
        ip = in->next;
    }
}

/* release the workgroups whose live waves all wait at a barrier (racecheck told first) */
static void release_groups(Ctx* c, Group* groups, int ng) {
    int wpg = c->d->waves_per_group, ticked = 0;
    for (int gi = 0; gi < ng; gi++) {
        int live = 0, wait = 0;
        for (int k = 0; k < wpg; k++) {
            int s = groups[gi].w[k].state;
            live += s != WS_DONE;
            wait += s == WS_BARRIER;
        }
        if (live == wait && wait > 0) {
            if (RACE_ON(c)) {
                if (!ticked) race_tick();
                ticked = 1;
                race_barrier(c->d, &groups[gi]);
            }
            for (int k = 0; k < wpg; k++)
                if (groups[gi].w[k].state == WS_BARRIER) groups[gi].w[k].state = WS_RUN;
        }
    }
}

/* engine.py SPIN_TURNS / FAIR_TURNS (lockstep 2: the numpy engine's default schedule, with its fair turns) */
#define SPIN_TURNS 32
#define FAIR_TURNS 64

static int run_lockstep(Ctx* c, Group* groups, int ng) {
    Dispatch* d = c->d;
    int wpg = d->waves_per_group, n = ng * wpg, spins = 0, fair = 0, last = 0;
    Wave** all = malloc(sizeof(Wave*) * (size_t)n);
    Wave** sel = malloc(sizeof(Wave*) * (size_t)n);
    int status = ST_DONE;
    for (int gi = 0; gi < ng; gi++)
        for (int k = 0; k < wpg; k++) all[gi * wpg + k] = &groups[gi].w[k];
    for (;;) {
        int p = -1;
        for (int i = 0; i < n; i++)
            if (all[i]->state == WS_RUN && (p < 0 || all[i]->ip < p)) p = all[i]->ip;
        if (p < 0) {
            int any_bar = 0;
            for (int i = 0; i < n; i++) any_bar |= all[i]->state == WS_BARRIER;
            if (!any_bar) break;
            release_groups(c, groups, ng);
            continue;
        }
        if (fair) {                  /* fair turns: the lowest PC above the last pick, else the lowest */
            fair--;
            int q = -1;
            for (int i = 0; i < n; i++)
                if (all[i]->state == WS_RUN && all[i]->ip > last && (q < 0 || all[i]->ip < q)) q = all[i]->ip;
            if (q >= 0) p = q;
        }
        int ns = 0;
        for (int i = 0; i < n; i++)
            if (all[i]->state == WS_RUN && all[i]->ip == p) sel[ns++] = all[i];
        int len = block_length(d, p);
        d->steps += len;
        if (d->steps > d->max_steps) {
            Wave* live[8];
            int nl = 0;
            for (int i = 0; i < n && nl < 8; i++)
                if (all[i]->state != WS_DONE) live[nl++] = all[i];
            status = watchdog(c, sel[0], live, nl);
            break;
        }
        d->wave_instructions += (int64_t)ns * len;
        for (int j = 0; j < len && status != ST_FAULT; j++) {
            if (RACE_ON(c)) race_tick();
            for (int i = 0; i < ns; i++) {
                int st;
                if (d->jit_fn) {        /* compiled in lockstep form: one instruction per call */
                    c->cur_ip = sel[i]->ip;
                    st = ((JitFn)d->jit_fn)(sel[i], c);
                    if (st == ST_SLICE) st = ST_CONT;
                } else {
                    st = step(c, sel[i]);
                }
                sel[i]->count++;
                if (st == ST_FAULT) { status = ST_FAULT; break; }
            }
        }
        if (status == ST_FAULT) break;
        if (d->lockstep == 2) {      /* engine.py: some live waves looped back while others waited: maybe a spin */
            int all_live = ns == n, low = p + 1;
            for (int i = 0; i < ns; i++) if (sel[i]->ip >= 0 && sel[i]->ip < low) low = sel[i]->ip;
            if (all_live) spins = fair = 0;
            else if (low <= p && ++spins >= SPIN_TURNS) {
                spins = 0;
                fair = FAIR_TURNS;
                release_groups(c, groups, ng);
            }
            last = p;
        }
    }
    free(all);
    free(sel);
    return status;
}

#endif
