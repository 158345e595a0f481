/* fork() in a program that uses the shim: the embedded interpreter's threads (one packet processor per
 * queue) do not exist in the child, and one of them may hold the GIL at the moment of the fork.  The
 * atfork handlers make the forking thread take the GIL (and the native launch table's lock) before the
 * fork and let the child reinitialise Python's thread state (PyOS_AfterFork_Child runs pyhip's
 * os.register_at_fork hooks: fresh devices, no parent streams). */
#include <pthread.h>

static PyGILState_STATE pyhip_fork_gil;
static int pyhip_fork_held;

/* A fork from Python (os.fork: its thread holds the GIL) has run PyOS_BeforeFork already and runs the after-fork
 * half itself: running them again would take every before-fork hook's lock twice (concurrent.futures' shutdown
 * lock is not re-entrant: the fork never returned).  Only a C program's fork() gets them here. */
static void pyhip_fork_prepare(void) {
    pthread_mutex_lock(&pyhip_fast_lock);
    pyhip_fork_held = Py_IsInitialized() && !PyGILState_Check();
    if (pyhip_fork_held) {
        pyhip_fork_gil = PyGILState_Ensure();
        PyOS_BeforeFork();
    }
}

static void pyhip_fork_parent(void) {
    if (pyhip_fork_held) {
        PyOS_AfterFork_Parent();
        PyGILState_Release(pyhip_fork_gil);
    }
    pthread_mutex_unlock(&pyhip_fast_lock);
}

static void pyhip_fork_child(void) {
    pthread_mutex_init(&pyhip_fast_lock, NULL);
    if (pyhip_fork_held) {
        PyOS_AfterFork_Child();
        PyGILState_Release(pyhip_fork_gil);
    }
}

__attribute__((constructor)) static void pyhip_fork_register(void) {
    pthread_atfork(pyhip_fork_prepare, pyhip_fork_parent, pyhip_fork_child);
}
