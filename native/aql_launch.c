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
 * while a full queue is waited for.  Nothing is published unless every argument was packed.
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
} pyhip_launch_entry;

/* Reserve, copy the template then the explicit bytes, publish.  1: published; 0: the entry is stale or the
 * queue closed. */
static int launch_publish(pyhip_launch_entry* e, const uint8_t* args, uint32_t nbytes) {
    uint64_t* inflight = e->generation_word + 1;
    __atomic_fetch_add(inflight, 1, __ATOMIC_SEQ_CST);      /* then the generation: see pyhip_launch_quiesce */
    if (__atomic_load_n(e->generation_word, __ATOMIC_SEQ_CST) != e->generation) {
        __atomic_fetch_sub(inflight, 1, __ATOMIC_RELEASE);
        return 0;
    }
    int64_t idx = e->foreign ? pyhip_foreign_reserve(e->queue, -1) : pyhip_queue_reserve(e->queue, -1);
    if (idx < 0) {
        __atomic_fetch_sub(inflight, 1, __ATOMIC_RELEASE);
        return 0;
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
    return launch_publish(e, args, nbytes);
}

/* The explicit arguments behind a C ``extra`` config array {HIP_LAUNCH_PARAM_BUFFER_POINTER (1), buf,
 * HIP_LAUNCH_PARAM_BUFFER_SIZE (2), &size, HIP_LAUNCH_PARAM_END (3)}: published when the array is well formed
 * and its size is the entry's (or larger, when the explicit arguments are the whole segment: HIP copies the
 * segment's size).  0: anything else (the full path reads it again and reports). */
int pyhip_launch_publish_config(pyhip_launch_entry* e, const void* const* cfg, int whole) {
    if (!cfg || (uintptr_t)cfg[0] != 1 || (uintptr_t)cfg[2] != 2 || (uintptr_t)cfg[4] != 3 || !cfg[3]) return 0;
    size_t size = *(const size_t*)cfg[3];
    if ((size && !cfg[1]) || !(size == e->explicit_size || (whole && size > e->explicit_size))) return 0;
    return launch_publish(e, (const uint8_t*)cfg[1], e->explicit_size);
}

/* ---- the CPython side ------------------------------------------------------------------------------------ */
/* One value as struct packs it with `code` (struct's integer ranges, its float-to-f32 overflow refusal).
 * 0: refused (the Python error is cleared). */
static int pack_one(uint8_t* out, const pyhip_launch_arg* a, PyObject* v) {
    int code = a->code;
    if (code == A_F32 || code == A_F64) {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return 0;
        if (code == A_F64) { memcpy(out, &d, 8); return 1; }
        float f = (float)d;
        if (isinf(f) && !isinf(d)) return 0;                  /* struct: float too large to pack with f */
        memcpy(out, &f, 4);
        return 1;
    }
    if (code == A_BUF) {                                      /* a ctypes value's own bytes (buffer protocol) */
        PyObject* b = PyBytes_FromObject(v);                   /* bytes(v), in C (the limited API has no Py_buffer) */
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
    PyObject* i = PyNumber_Index(v);
    if (!i) return 0;
    int ok = 1;
    if (code == A_U64) {
        unsigned long long u = PyLong_AsUnsignedLongLong(i);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) ok = 0;
        else memcpy(out, &u, 8);
    } else {
        long long s = PyLong_AsLongLong(i);
        if (s == -1 && PyErr_Occurred()) ok = 0;
        else {
            static const long long lo[] = {0, -128, 0, -32768, 0, -2147483648LL, 0, LLONG_MIN};
            static const long long hi[] = {0, 127, 255, 32767, 65535, 2147483647LL, 4294967295LL, LLONG_MAX};
            if (s < lo[code] || s > hi[code]) ok = 0;
            else memcpy(out, &s, a->size);                    /* little-endian: the low bytes */
        }
    }
    Py_DECREF(i);
    return ok;
}

/* launch(entry address, args: list or tuple) -> bool */
static PyObject* py_launch(PyObject* self, PyObject* pargs) {
    PyObject *addr, *seq;
    if (!PyArg_ParseTuple(pargs, "OO", &addr, &seq)) return NULL;
    pyhip_launch_entry* e = (pyhip_launch_entry*)PyLong_AsVoidPtr(addr);
    if (!e) return NULL;
    int is_list = PyList_Check(seq);
    if (!is_list && !PyTuple_Check(seq)) Py_RETURN_FALSE;
    Py_ssize_t n = is_list ? PyList_Size(seq) : PyTuple_Size(seq);
    if (n != (Py_ssize_t)e->nargs) Py_RETURN_FALSE;
    uint8_t buf[PYHIP_LAUNCH_MAX_KERNARG];
    memset(buf, 0, e->explicit_size);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject* v = is_list ? PyList_GetItem(seq, k) : PyTuple_GetItem(seq, k);
        const pyhip_launch_arg* a = &e->arg[k];
        if ((void*)Py_TYPE(v) != a->type) Py_RETURN_FALSE;
        int ok;
        if (a->conv) {
            PyObject* c = PyObject_CallFunctionObjArgs((PyObject*)a->conv, v, NULL);
            if (!c) { PyErr_Clear(); Py_RETURN_FALSE; }
            ok = pack_one(buf + a->offset, a, c);
            Py_DECREF(c);
        } else {
            ok = pack_one(buf + a->offset, a, v);
        }
        if (!ok) { PyErr_Clear(); Py_RETURN_FALSE; }
    }
    int done;
    Py_BEGIN_ALLOW_THREADS
    done = launch_publish(e, buf, e->explicit_size);
    Py_END_ALLOW_THREADS
    if (done) Py_RETURN_TRUE;
    Py_RETURN_FALSE;
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
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject* c = PyTuple_GetItem(convs, k);
        e->arg[k].type = PyTuple_GetItem(types, k);
        e->arg[k].conv = c == Py_None ? NULL : c;
    }
    Py_RETURN_NONE;
}

static PyMethodDef pyhip_launch_methods[] = {
    {"launch", py_launch, METH_VARARGS, "launch(entry, args) -> bool: publish a repeat launch"},
    {"bind", py_bind, METH_VARARGS, "bind(entry, types, readers): the Python objects of an entry's arguments"},
};

/* The two builtins above as a new reference to a (launch, bind) tuple; cffi hands Python objects to no C
 * function, so Python takes this one as a py_object (pyhip/runtime/fastlaunch.py). */
void* pyhip_launch_functions(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject* out = Py_BuildValue("(NN)", PyCFunction_NewEx(&pyhip_launch_methods[0], NULL, NULL),
                                  PyCFunction_NewEx(&pyhip_launch_methods[1], NULL, NULL));
    PyGILState_Release(g);
    return out;
}
