/* pyhip native execution engine: the entry points Python calls (through cffi, which releases the GIL for
 * the whole call) and the pool of threads workgroups are spread over.  One translation unit: the handlers
 * in the included headers are inlined into the interpreter loop. */
#include "interp.h"
#include <unistd.h>
#include <errno.h>
#include <time.h>

#define ENGINE_ABI 2

/* ---- per-thread workgroup buffers --------------------------------------------------------------------- */
typedef struct TL {
    Wave* waves;
    size_t nw_cap;
    uint32_t* vgprs;
    size_t v_cap;          /* words */
    uint8_t* priv;
    size_t p_cap;          /* bytes, zero outside what waves wrote (cleared when a workgroup ends) */
    uint8_t* lds;
    size_t l_cap;
    const Region** rcache;  /* Ctx.rcache: one slot per instruction */
    size_t r_cap;
} TL;

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_free(void* p) {
    TL* t = p;
    if (!t) return;
    free(t->waves);
    free(t->vgprs);
    free(t->priv);
    free(t->lds);
    free(t->rcache);
    free(t);
}
static void tl_init(void) { pthread_key_create(&tl_key, tl_free); }

static TL* tl_get(void) {
    pthread_once(&tl_once, tl_init);
    TL* t = pthread_getspecific(tl_key);
    if (!t) {
        t = calloc(1, sizeof *t);
        pthread_setspecific(tl_key, t);
    }
    return t;
}

/* buffers for ``ng`` workgroups of the dispatch; 0 on allocation failure */
static int tl_reserve(TL* t, const Dispatch* d, int64_t ng) {
    size_t nw = (size_t)(ng * d->waves_per_group);
    size_t vw = nw * (size_t)d->nvgpr * LANES;
    size_t pb = nw * (size_t)d->private_size * LANES;
    size_t lb = (size_t)ng * (((size_t)d->lds_alloc + 3) / 4 * 4 + 4);
    if (nw > t->nw_cap) {
        Wave* n = calloc(nw, sizeof(Wave));
        if (!n) return 0;
        free(t->waves);
        t->waves = n;
        t->nw_cap = nw;
    }
    if (vw > t->v_cap) {
        uint32_t* n = aligned_alloc(64, (vw * 4 + 63) / 64 * 64);
        if (!n) return 0;
        free(t->vgprs);
        t->vgprs = n;
        t->v_cap = vw;
    }
    if (pb > t->p_cap) {
        uint8_t* n = calloc(pb, 1);
        if (!n) return 0;
        free(t->priv);
        t->priv = n;
        t->p_cap = pb;
        for (size_t i = 0; i < t->nw_cap; i++) t->waves[i].priv = NULL, t->waves[i].priv_hw = 0;
    }
    size_t nc = d->ncode > 0 ? (size_t)d->ncode : 1;
    if (nc > t->r_cap) {
        const Region** n = malloc(nc * sizeof *n);
        if (!n) return 0;
        free(t->rcache);
        t->rcache = n;
        t->r_cap = nc;
    }
    memset(t->rcache, 0, nc * sizeof *t->rcache);   /* the region table may differ from the last dispatch's */
    if (lb > t->l_cap) {
        uint8_t* n = malloc(lb);
        if (!n) return 0;
        free(t->lds);
        t->lds = n;
        t->l_cap = lb;
    }
    return 1;
}

/* a workgroup's private memory back to zero (only the bytes its waves may have written) */
static void finish_group(const Dispatch* d, Group* g) {
    (void)d;
    for (int k = 0; k < g->nw; k++) {
        Wave* w = &g->w[k];
        priv_clear(w->priv, w->priv_hw);
        w->priv_hw = 0;
    }
}

static int64_t total_groups(const Dispatch* d) {
    return (int64_t)d->counts[0] * d->counts[1] * d->counts[2];
}

static void set_group(TL* t, const Dispatch* d, Group* g, int64_t slot, int64_t flat, Ctx* c) {
    size_t wpg = (size_t)d->waves_per_group;
    size_t ldsz = ((size_t)d->lds_alloc + 3) / 4 * 4 + 4;
    init_group(c, g, flat, t->waves + slot * wpg, t->vgprs + slot * wpg * (size_t)d->nvgpr * LANES,
               d->private_size ? t->priv + slot * wpg * (size_t)d->private_size * LANES : NULL, t->lds + slot * ldsz);
}

static void work(Dispatch* d) {
    TL* t = tl_get();
    Ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.code = d->code;
    if (!tl_reserve(t, d, 1)) {
        raise_fault(&c, NULL, FK_INTERNAL, -1, 0, 0, 0, 1);
        return;
    }
    c.rcache = t->rcache;
    int64_t total = d->total_groups;
    int64_t chunk = d->batch_groups > 0 ? d->batch_groups : 1;
    Group g;
    for (;;) {
        if (__atomic_load_n(&d->abort_flag, __ATOMIC_RELAXED)) break;
        int64_t start = __atomic_fetch_add(&d->next_group, chunk, __ATOMIC_RELAXED);
        if (start >= total) break;
        int64_t end = start + chunk < total ? start + chunk : total;
        int failed = 0;
        for (int64_t f = start; f < end; f++) {
            set_group(t, d, &g, 0, f, &c);
            int st = run_group(&c, &g);
            capture_group(d, &g);
            finish_group(d, &g);
            if (st == ST_FAULT) { failed = 1; break; }
        }
        if (failed) break;
    }
    __atomic_fetch_add(&d->wave_instructions, c.ninst, __ATOMIC_RELAXED);
}

static void run_lockstep_dispatch(Dispatch* d) {
    TL* t = tl_get();
    Ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.code = d->code;
    int64_t total = d->total_groups, per = d->batch_groups > 0 ? d->batch_groups : 1;
    if (!tl_reserve(t, d, per < total ? per : total)) {
        raise_fault(&c, NULL, FK_INTERNAL, -1, 0, 0, 0, 1);
        return;
    }
    c.rcache = t->rcache;
    Group* groups = calloc((size_t)per, sizeof(Group));
    if (d->race_pc) race_begin(d);       /* racecheck: one such dispatch at a time (check.h) */
    for (int64_t start = 0; start < total; start += per) {
        int64_t ng = start + per < total ? per : total - start;
        for (int64_t i = 0; i < ng; i++) set_group(t, d, &groups[i], i, start + i, &c);
        if (d->race_pc) race_batch(d, groups, ng);
        int st = run_lockstep(&c, groups, (int)ng);
        for (int64_t i = 0; i < ng; i++) {
            capture_group(d, &groups[i]);
            finish_group(d, &groups[i]);
        }
        if (st == ST_FAULT) break;
    }
    if (d->race_pc) race_end();
    free(groups);
}

/* ---- the thread pool ------------------------------------------------------------------------------------ */
typedef struct Job {
    Dispatch* d;
    int workers, max_workers;
    struct Job* next;
} Job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv, done;
    Job* head;
    int nthreads;          /* threads a dispatch may use, the caller included */
    int started;           /* helper threads running */
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0};

static int default_threads(void) {
    const char* e = getenv("PYHIP_ENGINE_THREADS");
    if (e && atoi(e) > 0) return atoi(e);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static Job* find_job(void) {
    for (Job* j = P.head; j; j = j->next)
        if (j->workers < j->max_workers && !j->d->abort_flag &&
            __atomic_load_n(&j->d->next_group, __ATOMIC_RELAXED) < j->d->total_groups)
            return j;
    return NULL;
}

static void* helper(void* arg) {
    (void)arg;
    pthread_mutex_lock(&P.mu);
    for (;;) {
        Job* j;
        while (!(j = find_job())) pthread_cond_wait(&P.cv, &P.mu);
        j->workers++;
        pthread_mutex_unlock(&P.mu);
        work(j->d);
        pthread_mutex_lock(&P.mu);
        if (--j->workers == 0) pthread_cond_broadcast(&P.done);
    }
    return NULL;
}

static void ensure_helpers(int n) {
    /* called with P.mu held */
    while (P.started < n - 1) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 8 << 20);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &attr, helper, NULL);
        pthread_attr_destroy(&attr);
        if (rc) break;
        P.started++;
    }
}

int pyhip_engine_threads(void) {
    pthread_mutex_lock(&P.mu);
    if (!P.nthreads) P.nthreads = default_threads();
    int n = P.nthreads;
    pthread_mutex_unlock(&P.mu);
    return n;
}

void pyhip_engine_set_threads(int n) {
    pthread_mutex_lock(&P.mu);
    P.nthreads = n > 0 ? n : default_threads();
    pthread_mutex_unlock(&P.mu);
}

static int run_dispatch(Dispatch* d);

/* Run a whole dispatch.  Returns 0, or 1 with d->fault describing the first fault. */
int pyhip_engine_run(Dispatch* d) {
    d->failed = 0;
    d->abort_flag = 0;
    d->next_group = 0;
    d->wave_instructions = 0;
    d->steps = 0;
    memset(&d->fault, 0, sizeof d->fault);
    d->total_groups = total_groups(d);
    if (d->total_groups == 0) return 0;
    d->pattern = make_pattern(d);
    int failed = run_dispatch(d);
    free(d->pattern);
    d->pattern = NULL;
    return failed;
}

static int run_dispatch(Dispatch* d) {
    if (d->lockstep) {
        run_lockstep_dispatch(d);
        return d->failed;
    }
    int n = d->nthreads > 0 ? d->nthreads : pyhip_engine_threads();
    if (n > d->total_groups) n = (int)d->total_groups;
    if (d->batch_groups <= 0) {
        int64_t per = d->total_groups / ((int64_t)n * 16);
        d->batch_groups = per < 1 ? 1 : per > 64 ? 64 : per;
    }
    if (n <= 1) {
        work(d);
        return d->failed;
    }
    Job job = {d, 1, n, NULL};
    pthread_mutex_lock(&P.mu);
    ensure_helpers(n);
    job.next = P.head;
    P.head = &job;
    pthread_cond_broadcast(&P.cv);
    pthread_mutex_unlock(&P.mu);
    work(d);
    pthread_mutex_lock(&P.mu);
    for (Job** pj = &P.head; *pj; pj = &(*pj)->next)
        if (*pj == &job) { *pj = job.next; break; }
    job.workers--;
    while (job.workers > 0) pthread_cond_wait(&P.done, &P.mu);
    pthread_mutex_unlock(&P.mu);
    return d->failed;
}

/* ---- what compiled kernels call (pyhip/emu/jit) ------------------------------------------------------------ */
/* one instruction by its lowered record (instructions the compiled code does not generate itself) */
int pyhip_jit_step(Ctx* c, Wave* w, int32_t ip) {
    const NInst* in = &c->code[ip];
    c->cur_ip = ip;
    w->ip = in->next;
    return HANDLERS[in->op](c, w, in);
}

/* the host address of [a, a + size) inside one allocation for instruction ``ip`` (its region cache slot), or
 * NULL: the compiled code's whole-wave global copies (pyhip/emu/jit/kernel.py, _global_copy) */
uint8_t* pyhip_jit_xlate(Ctx* c, int32_t ip, uint64_t a, uint32_t size) {
    c->cur_ip = ip;
    if (INIT_ON() || RACE_ON(c)) return NULL;   /* initcheck, racecheck: every access through its handler (check.h) */
    return xlate(c, a, size);
}

/* a fault the compiled code detected itself (kind: enum FaultKind) at instruction ``ip`` */
int pyhip_jit_fault(Ctx* c, Wave* w, int32_t ip, int32_t kind, uint64_t address, int32_t has_address) {
    c->cur_ip = ip;
    w->ip = ip;
    return raise_fault(c, w, kind, -1, address, has_address, 0, 0);
}

/* ---- LLVM, shared by every thread that compiles (pyhip/emu/jit/compiler.py) ---------------------------------
 * One thread at a time runs LLVM (its global context and target machine are not thread-safe), and a process
 * that exits while a kernel compiles must not run LLVM's static destructors under the compiling thread.  LLVM
 * registers destructors as it first uses things (function-local statics), during compiles, and exit handlers
 * run in reverse order of registration: so the handler that takes the lock (and keeps it) is registered again
 * after every section, after whatever that section registered; it acts once.  What a section registers is
 * destroyed before that handler runs if the process exits during it (a first use of something: the warm-ups
 * take those early), so once the exit has begun no section starts again — a thread that wins the lock from
 * the waiting exit handler (the lock is not fair) used to start its next compile on LLVM's destroyed statics
 * (the real file system, freed: "Reference count was already zero" in ~PassBuilder, AMD's HIP over the thunk).
 * The mutex is robust: a thread that ends holding it (Python ends daemon threads at shutdown) leaves it to
 * the next taker. */
static pthread_mutex_t g_llvm_mu;
static pthread_once_t g_llvm_once = PTHREAD_ONCE_INIT;
static int g_llvm_exiting;
static pthread_t g_llvm_exit_thread;

static void llvm_mu_take(void) {
    if (pthread_mutex_lock(&g_llvm_mu) == EOWNERDEAD) pthread_mutex_consistent(&g_llvm_mu);
}
/* At exit: wait (at most 60 s) for a compile in progress.  A thread exiting from Python code (os._exit is not
 * this, sys.exit in an embedded interpreter, a C exit() called back from Python) may hold the GIL the
 * compiling thread needs between LLVM calls: it lets go of it while waiting. */
static void llvm_at_exit(void) {
    if (__atomic_exchange_n(&g_llvm_exiting, 1, __ATOMIC_SEQ_CST)) return;
    g_llvm_exit_thread = pthread_self();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    int r = pthread_mutex_timedlock(&g_llvm_mu, &until);
    if (r == EOWNERDEAD) pthread_mutex_consistent(&g_llvm_mu);
}
static void llvm_mu_init(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&g_llvm_mu, &a);
    pthread_mutexattr_destroy(&a);
}
static void llvm_first_use(void) {
    llvm_mu_init();
    atexit(llvm_at_exit);           /* the first compile may still run at exit (leave registers it again, later) */
}
/* 1: this thread may use LLVM until pyhip_llvm_leave.  0: the process is exiting and this is the thread
 * running the exit handlers (which hold the lock): no LLVM, the caller gives up.  Any other thread that
 * comes in once the exit has begun never returns (it lets go of the lock and sleeps until the process ends:
 * no compile can be finished or used by then). */
int pyhip_llvm_enter(void) {
    pthread_once(&g_llvm_once, llvm_first_use);
    if (__atomic_load_n(&g_llvm_exiting, __ATOMIC_SEQ_CST) && pthread_equal(g_llvm_exit_thread, pthread_self()))
        return 0;
    llvm_mu_take();
    if (__atomic_load_n(&g_llvm_exiting, __ATOMIC_SEQ_CST)) {
        pthread_mutex_unlock(&g_llvm_mu);
        for (;;) pause();
    }
    return 1;
}
/* in a forked child (pyhip/emu/jit: the parent held the lock's Python side, so no thread was inside) */
void pyhip_llvm_after_fork(void) {
    pthread_once(&g_llvm_once, llvm_first_use);
    llvm_mu_init();
}
void pyhip_llvm_leave(void) {
    if (!__atomic_load_n(&g_llvm_exiting, __ATOMIC_SEQ_CST)) atexit(llvm_at_exit);
    pthread_mutex_unlock(&g_llvm_mu);
}

/* ---- introspection for the Python side ---------------------------------------------------------------- */
int pyhip_engine_abi(void) { return ENGINE_ABI; }
int pyhip_engine_op_count(void) { return OP_COUNT; }
const char* pyhip_engine_op_name(int i) { return i >= 0 && i < OP_COUNT ? OP_NAMES[i] : ""; }

void pyhip_engine_set_fp8(const double* fp8, const double* bf8) {
    memcpy(g_fp8, fp8, sizeof g_fp8);
    memcpy(g_bf8, bf8, sizeof g_bf8);
}

#include "agent.h"
