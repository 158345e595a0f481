/* Repeat kernel launches from Python in one native call (pyhip/runtime/fastlaunch.py).
 *
 * A launch entry is what a launch that went through the runtime's full path leaves for its repeats: the
 * kernarg segment with every hidden argument filled, the AQL packet (completion = the stream's counter
 * signal), the queue, the stream's kernarg ring (one slot per queue slot) and, per explicit argument, its
 * offset, the struct code the runtime's rule gives it (kernargs.encode_arg / fastlaunch.plan), the Python
 * type the entry was prepared for and the reader that turns such a value into what is packed (None: the
 * value itself).
 *
 * pyhip_launch_publish(entry, bytes, n): the explicit arguments come packed (``extra``, a void** kernelParams).
 * The launch function (a CPython builtin, see pyhip_launch_functions) takes the argument values: each must
 * be of its slot's type exactly (anything else: False, and the caller takes the full path, which checks and
 * reports); it is read and packed as ``struct`` packs it (same ranges, same refusals: a refusal is False too)
 * or, for hip-python's ``extra`` tuple of ctypes values, copied from the value's buffer (A_BUF),
 * then the segment is copied to the packet slot's kernarg buffer and the packet published — the GIL released
 * only while a full queue is waited for.  Nothing is published unless every argument was packed.
 * hml / kcall are hipModuleLaunchKernel's and Kernel.__call__'s repeats as a whole: the entry looked up in
 * Function.fast, the null stream's device checked, then the same packing and publishing.
 */
#include <Python.h>
#include <float.h>
#include <math.h>

#define PYHIP_LAUNCH_MAX_ARGS 64
#define PYHIP_LAUNCH_MAX_KERNARG 2048

/* struct codes of the explicit arguments */
enum { A_PAD = 0, A_I8, A_U8, A_I16, A_U16, A_I32, A_U32, A_I64, A_U64, A_F32, A_F64, A_BYTES, A_BUF };

typedef struct {
    uint16_t offset;
    uint16_t size;
    uint8_t code;
    uint8_t read;              /* R_*: how a value of `type` is read when not by `conv` (ctypes' own types) */
    uint8_t read_size;         /* the bytes such a value holds */
    void* type;                /* PyTypeObject*, borrowed (the Python entry keeps it) */
    void* conv;                /* the reader (PyObject*, borrowed) or NULL */
} pyhip_launch_arg;

typedef struct {
    uint32_t nargs;
    uint32_t kernarg_size;
    uint32_t explicit_size;
    pyhip_launch_arg arg[PYHIP_LAUNCH_MAX_ARGS];
    uint8_t kernarg[PYHIP_LAUNCH_MAX_KERNARG];
    uint8_t packet[64];
    void* queue;               /* amd_queue_t */
    uint8_t* ring;             /* kernarg buffers: host address == device address */
    uint64_t slot_size;
    uint64_t queue_mask;
    void* counter;             /* the stream's counter signal */
    uint64_t* launches;        /* the stream's count of native launches */
    uint64_t hits;             /* launches published through this entry */
    uint64_t* generation_word; /* the device's launch generation, then its launches in progress (device.py) */
    uint64_t generation;       /* its value when the entry was made: moved on = the entry is stale */
    uint32_t foreign;          /* ROCr's queue and signal (the HSA backend): reserved, counted and published as
                                * the C ABI does there (pyhip_foreign_*, pyhip_raw_signal_add) */
    int32_t device;            /* the device index (a launch on the null stream checks the thread's current one) */
    uint32_t kind;             /* E_*: what the slots were bound for */
    uint32_t whole;            /* the explicit arguments are the whole segment (a longer config buffer is cut) */
    void* tls;                 /* the runtime's thread-locals (PyObject*, borrowed: the Python entry keeps it) */
    uint32_t has_conv;         /* a slot has a reader (Python code may run while the values are read) */
} pyhip_launch_entry;

/* what an entry's slots were bound for (fastlaunch.py): nothing (prepacked buffers only), the argument values of
 * a kernelParams list / Kernel call, hip-python's ``extra`` tuple */
enum { E_RAW = 0, E_ARGS = 1, E_EXTRA = 2 };
/* how a slot's value is read: by `conv` or as it is; ctypes' own integer, unsigned, floating types and ctypes
 * objects' bytes, read from the object's buffer (what ``.value`` / ``bytes(memoryview(v))`` give); numpy's
 * integer and floating scalars, read from the value they hold after their object header (numpy's
 * PyArrayScalar_VAL: what ``__index__`` / ``__float__`` give) */
enum { R_VALUE = 0, R_CT_INT, R_CT_UINT, R_CT_FLOAT, R_CT_BYTES, R_NP_INT, R_NP_UINT, R_NP_FLOAT };

/* Reserve (waiting up to timeout_ns for a slot, < 0: no limit), copy the template then the explicit bytes,
 * publish.  1: published; 0: the entry is stale or the queue closed; -1: no slot within the timeout (nothing
 * published). */
static int launch_publish(pyhip_launch_entry* e, const uint8_t* args, uint32_t nbytes, int64_t timeout_ns) {
    uint64_t* inflight = e->generation_word + 1;
    __atomic_fetch_add(inflight, 1, __ATOMIC_SEQ_CST);      /* then the generation: see pyhip_launch_quiesce */
    if (__atomic_load_n(e->generation_word, __ATOMIC_SEQ_CST) != e->generation) {
        __atomic_fetch_sub(inflight, 1, __ATOMIC_RELEASE);
        return 0;
    }
    int64_t idx = e->foreign ? pyhip_foreign_reserve(e->queue, timeout_ns) : pyhip_queue_reserve(e->queue, timeout_ns);
    if (idx < 0) {
        __atomic_fetch_sub(inflight, 1, __ATOMIC_RELEASE);
        return idx == -1 && timeout_ns >= 0 ? -1 : 0;
    }
    uint8_t* ka = e->ring + ((uint64_t)idx & e->queue_mask) * e->slot_size;
    memcpy(ka, e->kernarg, e->kernarg_size);
    memcpy(ka, args, nbytes);
    uint8_t pkt[64];
    memcpy(pkt, e->packet, 64);
    uint64_t kaddr = (uint64_t)(uintptr_t)ka;
    memcpy(pkt + 40, &kaddr, 8);
    if (e->foreign)
        pyhip_raw_signal_add(e->counter, 1);
    else
        pyhip_signal_add(e->counter, 1);
    __atomic_fetch_add(e->launches, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&e->hits, 1, __ATOMIC_RELAXED);
    if (e->foreign)
        pyhip_foreign_publish(e->queue, (uint64_t)idx, pkt);
    else
        pyhip_queue_publish(e->queue, (uint64_t)idx, pkt);
    __atomic_fetch_sub(inflight, 1, __ATOMIC_RELEASE);
    return 1;
}

/* A device's launch generation moves on (word[0] = generation, word[1] = launches in progress): store it, then
 * wait until no launch that may have read the old value is still publishing.  Afterwards every launch through
 * an older entry is either published (and counted on its stream) or refused.  The GIL is released (cffi). */
void pyhip_launch_quiesce(uint64_t* word, uint64_t generation) {
    __atomic_store_n(word, generation, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(word + 1, __ATOMIC_SEQ_CST)) spin_step();
}

int pyhip_launch_publish(pyhip_launch_entry* e, const uint8_t* args, uint32_t nbytes) {
    if (nbytes != e->explicit_size) return 0;
    return launch_publish(e, args, nbytes, -1) == 1;
}

/* The explicit arguments behind a C ``extra`` config array {HIP_LAUNCH_PARAM_BUFFER_POINTER (1), buf,
 * HIP_LAUNCH_PARAM_BUFFER_SIZE (2), &size, HIP_LAUNCH_PARAM_END (3)}: published when the array is well formed
 * and its size is the entry's (or larger, when the explicit arguments are the whole segment: HIP copies the
 * segment's size).  0: anything else (the full path reads it again and reports). */
int pyhip_launch_publish_config(pyhip_launch_entry* e, const void* const* cfg, int whole) {
    if (!cfg || (uintptr_t)cfg[0] != 1 || (uintptr_t)cfg[2] != 2 || (uintptr_t)cfg[4] != 3 || !cfg[3]) return 0;
    size_t size = *(const size_t*)cfg[3];
    if ((size && !cfg[1]) || !(size == e->explicit_size || (whole && size > e->explicit_size))) return 0;
    return launch_publish(e, (const uint8_t*)cfg[1], e->explicit_size, -1) == 1;
}

/* ---- the CPython side ------------------------------------------------------------------------------------ */
/* Built with the full C API (build_aql.py defines _CFFI_NO_LIMITED_API): ctypes objects are read through their
 * b_ptr (checked at import by fastlaunch.py) or the buffer protocol.  Under the limited API a ctypes value is
 * read by its slot's reader (`conv`) unless the b_ptr layout was confirmed. */
#ifndef Py_LIMITED_API
#define PYHIP_BUFFERS 1
#else
#define PYHIP_BUFFERS 0
#endif

_Static_assert(sizeof(long) == 8, "pack_one reads Python ints as C longs (LP64)");

static const long long int_lo[] = {0, -128, 0, -32768, 0, -2147483648LL, 0, LLONG_MIN};
static const long long int_hi[] = {0, 127, 255, 32767, 65535, 2147483647LL, 4294967295LL, LLONG_MAX};

/* An integer as struct packs it with `code` (its ranges: a refusal is 0). */
static int pack_signed(uint8_t* out, const pyhip_launch_arg* a, long long s) {
    if (a->code == A_U64) {
        if (s < 0) return 0;
        memcpy(out, &s, 8);
        return 1;
    }
    if (a->code > A_I64 || s < int_lo[a->code] || s > int_hi[a->code]) return 0;
    memcpy(out, &s, a->size);                                 /* little-endian: the low bytes */
    return 1;
}

static int pack_unsigned(uint8_t* out, const pyhip_launch_arg* a, unsigned long long u) {
    if (a->code == A_U64) { memcpy(out, &u, 8); return 1; }
    if (u > (unsigned long long)LLONG_MAX) return 0;
    return pack_signed(out, a, (long long)u);
}

static int pack_double(uint8_t* out, const pyhip_launch_arg* a, double d) {
    if (a->code == A_F64) { memcpy(out, &d, 8); return 1; }
    if (a->code != A_F32) return 0;
    float f = (float)d;
    if (isinf(f) && !isinf(d)) return 0;                      /* struct: float too large to pack with f */
    memcpy(out, &f, 4);
    return 1;
}

/* One value as struct packs it with `code` (struct's integer ranges, its float-to-f32 overflow refusal).
 * 0: refused (the Python error is cleared by the caller). */
static int pack_one(uint8_t* out, const pyhip_launch_arg* a, PyObject* v) {
    int code = a->code;
    if (code == A_F32 || code == A_F64) {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return 0;
        return pack_double(out, a, d);
    }
    if (code == A_BUF) {                                      /* a ctypes value's own bytes (buffer protocol) */
#if PYHIP_BUFFERS
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) == 0) {
            int ok = view.len == a->size;
            if (ok) memcpy(out, view.buf, (size_t)view.len);
            PyBuffer_Release(&view);
            return ok;
        }
        PyErr_Clear();                                        /* not one contiguous buffer: as bytes(v) reads it */
#endif
        PyObject* b = PyBytes_FromObject(v);
        if (!b) return 0;
        char* p;
        Py_ssize_t n;
        int ok = PyBytes_AsStringAndSize(b, &p, &n) == 0 && n == a->size;
        if (ok) memcpy(out, p, (size_t)n);
        Py_DECREF(b);
        return ok;
    }
    if (code == A_BYTES) {
        char* p;
        Py_ssize_t n;
        if (!PyBytes_Check(v) || PyBytes_AsStringAndSize(v, &p, &n) < 0 || n != a->size) return 0;
        memcpy(out, p, (size_t)n);
        return 1;
    }
    if (PyLong_Check(v)) {                                    /* int, bool: what __index__ gives */
        /* (PyLong_AsLongAndOverflow reads the digits itself; PyLong_AsLongLong goes through a byte array for
         * any value of more than one digit, such as an address) */
        int overflow;
        long s = PyLong_AsLongAndOverflow(v, &overflow);
        if (s == -1 && PyErr_Occurred()) return 0;
        if (!overflow) return pack_signed(out, a, (long long)s);
        if (overflow < 0 || code != A_U64) return 0;          /* below LLONG_MIN, or above every signed range */
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        return !(u == (unsigned long long)-1 && PyErr_Occurred()) && pack_unsigned(out, a, u);
    }
    PyObject* i = PyNumber_Index(v);
    if (!i) return 0;
    int ok = pack_one(out, a, i);
    Py_DECREF(i);
    return ok;
}

/* A value of `size` bytes at `p` (R_CT_INT/UINT/FLOAT's reading, R_CT_BYTES's bytes) packed as struct packs
 * what ``.value`` gives. */
static int pack_memory(uint8_t* out, const pyhip_launch_arg* a, int read, const uint8_t* p) {
    switch (read) {
    case R_CT_INT: {
        long long s = 0;
        switch (a->read_size) {
        case 1: { int8_t x; memcpy(&x, p, 1); s = x; break; }
        case 2: { int16_t x; memcpy(&x, p, 2); s = x; break; }
        case 4: { int32_t x; memcpy(&x, p, 4); s = x; break; }
        case 8: { int64_t x; memcpy(&x, p, 8); s = x; break; }
        default: return 0;
        }
        return pack_signed(out, a, s);
    }
    case R_CT_UINT: {
        unsigned long long u = 0;
        switch (a->read_size) {
        case 1: { uint8_t x; memcpy(&x, p, 1); u = x; break; }
        case 2: { uint16_t x; memcpy(&x, p, 2); u = x; break; }
        case 4: { uint32_t x; memcpy(&x, p, 4); u = x; break; }
        case 8: { uint64_t x; memcpy(&x, p, 8); u = x; break; }
        default: return 0;
        }
        return pack_unsigned(out, a, u);
    }
    case R_CT_FLOAT: {
        double d;
        if (a->read_size == 4) { float f; memcpy(&f, p, 4); d = f; }
        else if (a->read_size == 8) memcpy(&d, p, 8);
        else return 0;
        return pack_double(out, a, d);
    }
    case R_CT_BYTES:
        if ((a->code != A_BYTES && a->code != A_BUF) || a->read_size != a->size) return 0;
        memcpy(out, p, a->size);
        return 1;
    }
    return 0;
}

/* ctypes objects keep their buffer's address right after the object header (CDataObject's b_ptr): fastlaunch.py
 * checks it against ctypes.addressof for ctypes' own types and sets this; otherwise the buffer protocol. */
static int g_ctypes_bptr;

/* A value of one of the read kinds (the slot's `read`): a numpy scalar's value after its header, a ctypes
 * object's from its buffer. */
static int pack_read(uint8_t* out, const pyhip_launch_arg* a, PyObject* v) {
    if (a->read >= R_NP_INT)
        return pack_memory(out, a, a->read - R_NP_INT + R_CT_INT, (const uint8_t*)v + sizeof(PyObject));
    if (g_ctypes_bptr) {
        const uint8_t* p;
        memcpy(&p, (const uint8_t*)v + sizeof(PyObject), sizeof(p));
        return p && pack_memory(out, a, a->read, p);
    }
#if PYHIP_BUFFERS
    Py_buffer view;
    if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) return 0;
    int ok = view.len == a->read_size && pack_memory(out, a, a->read, (const uint8_t*)view.buf);
    PyBuffer_Release(&view);
    return ok;
#else
    return 0;
#endif
}

/* Every value of `items[0..n)` read and packed into `buf` (the entry's explicit bytes).  1: all packed; 0: a
 * value of another type than its slot's, or one refused (no Python error is left set). */
static int pack_args(pyhip_launch_entry* e, PyObject* const* items, Py_ssize_t n, uint8_t* buf) {
    if (n != (Py_ssize_t)e->nargs) return 0;
    memset(buf, 0, e->explicit_size);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject* v = items[k];
        const pyhip_launch_arg* a = &e->arg[k];
        if ((void*)Py_TYPE(v) != a->type) return 0;
        int ok;
        if (a->read) {
            ok = pack_read(buf + a->offset, a, v);
        } else if (a->conv) {
            PyObject* c = PyObject_CallOneArg((PyObject*)a->conv, v);
            if (!c) { PyErr_Clear(); return 0; }
            ok = pack_one(buf + a->offset, a, c);
            Py_DECREF(c);
        } else {
            ok = pack_one(buf + a->offset, a, v);
        }
        if (!ok) { PyErr_Clear(); return 0; }
    }
    return 1;
}

/* Publish with the GIL held while a slot is free (the usual case: no GIL hand-over per launch), released while
 * a full queue is waited for. */
static int publish(pyhip_launch_entry* e, const uint8_t* args) {
    int done = launch_publish(e, args, e->explicit_size, 0);
    if (done >= 0) return done;
    Py_BEGIN_ALLOW_THREADS
    done = launch_publish(e, args, e->explicit_size, -1);
    Py_END_ALLOW_THREADS
    return done == 1;
}

static int launch_seq(pyhip_launch_entry* e, PyObject* seq) {
    uint8_t buf[PYHIP_LAUNCH_MAX_KERNARG];
    PyObject* const* items;
    Py_ssize_t n;
    if (PyList_CheckExact(seq)) { items = ((PyListObject*)seq)->ob_item; n = PyList_GET_SIZE(seq); }
    else if (PyTuple_Check(seq)) { items = ((PyTupleObject*)seq)->ob_item; n = PyTuple_GET_SIZE(seq); }
    else return 0;
    if (n != (Py_ssize_t)e->nargs) return 0;
    if (!e->has_conv || !PyList_CheckExact(seq))
        return pack_args(e, items, n, buf) && publish(e, buf);
    /* a reader may run Python code that changes the list: pack from references of our own */
    PyObject* local[PYHIP_LAUNCH_MAX_ARGS];
    for (Py_ssize_t k = 0; k < n; k++) { local[k] = items[k]; Py_INCREF(local[k]); }
    int ok = pack_args(e, local, n, buf);
    for (Py_ssize_t k = 0; k < n; k++) Py_DECREF(local[k]);
    return ok && publish(e, buf);
}

/* launch(entry address, args: list or tuple) -> bool */
static PyObject* py_launch(PyObject* self, PyObject* pargs) {
    PyObject *addr, *seq;
    if (!PyArg_ParseTuple(pargs, "OO", &addr, &seq)) return NULL;
    pyhip_launch_entry* e = (pyhip_launch_entry*)PyLong_AsVoidPtr(addr);
    if (!e) return NULL;
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) Py_RETURN_FALSE;
    if (PyList_Check(seq) && !PyList_CheckExact(seq)) {       /* a list subclass: its items as a tuple */
        PyObject* t = PySequence_Tuple(seq);
        if (!t) { PyErr_Clear(); Py_RETURN_FALSE; }
        int ok = launch_seq(e, t);
        Py_DECREF(t);
        return PyBool_FromLong(ok);
    }
    return PyBool_FromLong(launch_seq(e, seq));
}

/* bind(entry address, types: tuple, convs: tuple of callables or None): the Python objects of each slot,
 * borrowed (the caller keeps both tuples alive as long as the entry). */
static PyObject* py_bind(PyObject* self, PyObject* pargs) {
    PyObject *addr, *types, *convs;
    if (!PyArg_ParseTuple(pargs, "OO!O!", &addr, &PyTuple_Type, &types, &PyTuple_Type, &convs)) return NULL;
    pyhip_launch_entry* e = (pyhip_launch_entry*)PyLong_AsVoidPtr(addr);
    if (!e) return NULL;
    Py_ssize_t n = PyTuple_Size(types);
    if (n != (Py_ssize_t)e->nargs || PyTuple_Size(convs) != n) {
        PyErr_SetString(PyExc_ValueError, "one type and one reader per argument");
        return NULL;
    }
    e->has_conv = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject* c = PyTuple_GetItem(convs, k);
        e->arg[k].type = PyTuple_GetItem(types, k);
        e->arg[k].conv = c == Py_None ? NULL : c;
#if !PYHIP_BUFFERS
        if (!g_ctypes_bptr && e->arg[k].read < R_NP_INT)
            e->arg[k].read = R_VALUE;                         /* no buffers: the reader reads it */
#endif
        if (c != Py_None && !e->arg[k].read) e->has_conv = 1;
    }
    Py_RETURN_NONE;
}

/* ---- the repeat launch's whole Python face: hipModuleLaunchKernel, Kernel.__call__ ------------------------ */
static PyObject *g_function_type, *g_array_type, *g_api_tls, *g_ok, *g_success, *g_empty;
static PyObject *s_fast, *s_address, *s_dict, *s_device, *s_last;

/* The native entry of f.fast[key] (a new reference to the Python entry in *held), or NULL (no Python error set). */
static pyhip_launch_entry* lookup(PyObject* fast, PyObject* key, PyObject** held) {
    PyObject* ent = PyDict_GetItemWithError(fast, key);      /* an unhashable key: no entry */
    if (!ent) { PyErr_Clear(); return NULL; }
    PyObject* addr = PyObject_GetAttr(ent, s_address);
    if (!addr) { PyErr_Clear(); return NULL; }
    pyhip_launch_entry* e = (pyhip_launch_entry*)PyLong_AsVoidPtr(addr);
    Py_DECREF(addr);
    if (!e) { PyErr_Clear(); return NULL; }
    Py_INCREF(ent);
    *held = ent;
    return e;
}

/* On the null stream an entry serves its device only: the thread's current device (the runtime's thread-local
 * ``device``, 0 when unset) must be the entry's. */
static int on_current_device(pyhip_launch_entry* e) {
    if (!e->tls) return 0;
    PyObject* d = PyObject_GetAttr((PyObject*)e->tls, s_dict);
    if (!d) { PyErr_Clear(); return 0; }
    long dev = 0;
    PyObject* v = PyDict_GetItemWithError(d, s_device);
    if (v) dev = PyLong_AsLong(v);
    int ok = !PyErr_Occurred() && dev == (long)e->device;
    PyErr_Clear();
    Py_DECREF(d);
    return ok;
}

/* hml(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams,
 * extra): a repeat of hipModuleLaunchKernel.  (hipSuccess,) when published (the thread's last error set to
 * hipSuccess); False: the runtime's full path decides (no entry, another device, other argument types, a
 * refused value, a stale entry); None: the Python side decides (hip/launch.py: an ``extra`` tuple not bound
 * yet, prepacked kernelParams). */
static PyObject* py_hml(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 11 || !g_function_type) Py_RETURN_FALSE;
    PyObject *f = args[0], *stream = args[8], *kp = args[9], *extra = args[10];
    if ((PyObject*)Py_TYPE(f) != g_function_type) Py_RETURN_FALSE;
    PyObject* fast = PyObject_GetAttr(f, s_fast);
    if (!fast) { PyErr_Clear(); Py_RETURN_FALSE; }
    PyObject* key = PyTuple_New(8);
    if (!key) { Py_DECREF(fast); return NULL; }
    for (int i = 0; i < 8; i++) {
        Py_INCREF(args[1 + i]);
        PyTuple_SET_ITEM(key, i, args[1 + i]);
    }
    PyObject* held = NULL;
    pyhip_launch_entry* e = PyDict_CheckExact(fast) ? lookup(fast, key, &held) : NULL;
    Py_DECREF(key);
    Py_DECREF(fast);
    if (!e) Py_RETURN_FALSE;
    PyObject* res = Py_False;
    if (stream != Py_None || on_current_device(e)) {
        if (extra == Py_None) {
            if (kp == Py_None || PyList_CheckExact(kp) || PyTuple_CheckExact(kp)) {
                if (e->kind == E_ARGS)
                    res = launch_seq(e, kp == Py_None ? g_empty : kp)
                          ? g_success : Py_False;
            } else {
                res = Py_None;                                /* a void** or a list subclass */
            }
        } else if (kp == Py_None) {
            if (PyTuple_CheckExact(extra)) {
                if (e->kind == E_EXTRA && launch_seq(e, extra)) res = g_success;
                else res = Py_None;                           /* bound here, or packed in Python */
            } else {
                int is_array = PyObject_IsInstance(extra, g_array_type);
                if (is_array < 0) { PyErr_Clear(); is_array = 0; }
                if (is_array) {                               /* the C config array */
#if PYHIP_BUFFERS
                    Py_buffer view;
                    if (PyObject_GetBuffer(extra, &view, PyBUF_SIMPLE) == 0) {
                        int ok = 0;
                        const void* const* cfg = (const void* const*)view.buf;
                        if (view.len >= 5 * (Py_ssize_t)sizeof(void*) && cfg && (uintptr_t)cfg[0] == 1 &&
                            (uintptr_t)cfg[2] == 2 && (uintptr_t)cfg[4] == 3 && cfg[3]) {
                            size_t size = *(const size_t*)cfg[3];
                            if (!((size && !cfg[1]) || !(size == e->explicit_size || (e->whole && size > e->explicit_size))))
                                ok = publish(e, (const uint8_t*)cfg[1]);
                        }
                        PyBuffer_Release(&view);
                        res = ok ? g_success : Py_False;
                    } else {
                        PyErr_Clear();
                        res = Py_None;
                    }
#else
                    res = Py_None;
#endif
                } else {
                    res = Py_None;
                }
            }
        } else {
            res = Py_False;                                   /* both: the full path reports it */
        }
    }
    Py_DECREF(held);
    if (res == g_success && PyObject_SetAttr(g_api_tls, s_last, g_ok) < 0) return NULL;
    Py_INCREF(res);
    return res;
}

/* kcall(fast, grid, block, shared, stream, args: tuple) -> bool: a repeat of Kernel.__call__ (api.py), keyed
 * (grid, block, shared, stream) with int or tuple geometry; False: the full path decides. */
static PyObject* py_kcall(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 6 || !PyDict_CheckExact(args[0]) || !PyTuple_CheckExact(args[5])) Py_RETURN_FALSE;
    PyObject *grid = args[1], *block = args[2], *stream = args[4];
    if (!(PyLong_CheckExact(grid) || PyTuple_CheckExact(grid)) || !(PyLong_CheckExact(block) || PyTuple_CheckExact(block)))
        Py_RETURN_FALSE;
    PyObject* key = PyTuple_Pack(4, grid, block, args[3], stream);
    if (!key) return NULL;
    PyObject* held = NULL;
    pyhip_launch_entry* e = lookup(args[0], key, &held);
    Py_DECREF(key);
    if (!e) Py_RETURN_FALSE;
    int ok = e->kind == E_ARGS && (stream != Py_None || on_current_device(e)) && launch_seq(e, args[5]);
    Py_DECREF(held);
    return PyBool_FromLong(ok);
}

/* configure(Function type, ctypes.Array, hip's thread-locals, hipSuccess, (hipSuccess,)) for hml. */
static PyObject* py_configure(PyObject* self, PyObject* pargs) {
    PyObject *ft, *at, *tls, *ok, *success;
    if (!PyArg_ParseTuple(pargs, "OOOOO", &ft, &at, &tls, &ok, &success)) return NULL;
    Py_INCREF(ft); Py_INCREF(at); Py_INCREF(tls); Py_INCREF(ok); Py_INCREF(success);
    Py_XSETREF(g_function_type, ft);
    Py_XSETREF(g_array_type, at);
    Py_XSETREF(g_api_tls, tls);
    Py_XSETREF(g_ok, ok);
    Py_XSETREF(g_success, success);
    Py_RETURN_NONE;
}

/* ctypes_layout(flag): whether ctypes objects' buffer address follows their header (fastlaunch.py checks). */
static PyObject* py_ctypes_layout(PyObject* self, PyObject* flag) {
    g_ctypes_bptr = PyObject_IsTrue(flag) == 1;
    Py_RETURN_NONE;
}

static PyMethodDef pyhip_launch_methods[] = {
    {"launch", py_launch, METH_VARARGS, "launch(entry, args) -> bool: publish a repeat launch"},
    {"bind", py_bind, METH_VARARGS, "bind(entry, types, readers): the Python objects of an entry's arguments"},
    {"hml", (PyCFunction)(void (*)(void))py_hml, METH_FASTCALL,
     "hml(f, gx, gy, gz, bx, by, bz, shared, stream, kernelParams, extra): a repeat hipModuleLaunchKernel"},
    {"kcall", (PyCFunction)(void (*)(void))py_kcall, METH_FASTCALL,
     "kcall(fast, grid, block, shared, stream, args) -> bool: a repeat Kernel call"},
    {"configure", py_configure, METH_VARARGS, "configure(Function, ctypes.Array, tls, hipSuccess, (hipSuccess,))"},
    {"ctypes_layout", py_ctypes_layout, METH_O, "ctypes_layout(flag): ctypes objects' b_ptr follows their header"},
};

/* The builtins above as a new reference to a (launch, bind, hml, kcall, configure, ctypes_layout) tuple; cffi hands Python
 * objects to no C function, so Python takes this one as a py_object (pyhip/runtime/fastlaunch.py). */
void* pyhip_launch_functions(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    if (!s_fast) {                                            /* the names kcall and hml look up */
        s_fast = PyUnicode_InternFromString("fast");
        s_address = PyUnicode_InternFromString("address");
        s_dict = PyUnicode_InternFromString("__dict__");
        s_device = PyUnicode_InternFromString("device");
        s_last = PyUnicode_InternFromString("last");
        g_empty = PyTuple_New(0);
    }
    PyObject* out = (s_fast && s_address && s_dict && s_device && s_last && g_empty) ? PyTuple_New(6) : NULL;
    for (int i = 0; out && i < 6; i++)
        PyTuple_SET_ITEM(out, i, PyCFunction_NewEx(&pyhip_launch_methods[i], NULL, NULL));
    PyGILState_Release(g);
    return out;
}
