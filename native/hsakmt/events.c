/* KFD events, the event page and the clocks of pyhip's drop-in libhsakmt, in C: ROCr's async-event
 * thread and its signal waits block in hsaKmtWaitOnMultipleEvents without holding Python's GIL, and the
 * emulated command processor raises "interrupts" through pyhip_kfd_interrupt.
 *
 * Semantics follow amdkfd (kfd_events.c):
 *  - signal (and debug) events get ids 0..KFD_SIGNAL_EVENT_LIMIT-1 and a 64-bit slot in the event page;
 *    HWData2 is the slot's address (the "mailbox" ROCr stores in amd_signal_t.event_mailbox_ptr) and
 *    HWData3 the value the CP writes there (the event id).  An unsignalled slot holds all ones.
 *  - other event types are system events: ids from 0x80000000 up, no slot; user code cannot set them.
 *  - an interrupt for an event id acknowledges its slot (back to all ones) and sets the event.
 *  - setting an auto-reset event with waiters wakes them and leaves it unsignalled; a wait consumes the
 *    auto-reset events it was given when it starts (as init_event_waiter does).
 *  - a GPU memory fault sets every memory event of the process and attaches the fault to it; the wait
 *    that returns it copies the fault into HsaEvent.EventData.MemoryAccessFault.
 *  - event age (amdkfd's event_age, KFD ioctl 1.14; libhsakmt's hsaKmtWaitOnMultipleEvents_Ext and
 *    hsaKmtWaitOnEvent_Ext): every event counts its sets, from 1 at creation (a wrap skips the reserved 0 and 1).
 *    A waiter on a signal event that passes a non-zero last-seen age is activated at once if the age differs
 *    (the event was set since, even if another waiter consumed that set); a wait that completes hands back the
 *    current age of each activated signal event it passed an age for, the others' ages stay as given.  Age 0
 *    (and the 5.2 functions without _Ext) keep the old semantics.  ROCr 5.2 imports only the functions without
 *    _Ext: it never passes an age.
 *  - deviation (default; the quirk strict-events turns it off, pyhip_kfd_set_strict_events): a wait of an hour
 *    or more (ROCr's "forever": 0xFFFFFFFE ms, or INFINITE) in which no event has an age returns
 *    HSAKMT_STATUS_WAIT_TIMEOUT after FOREVER_SLICE_MS with nothing set, where amdkfd would go on sleeping.
 *    ROCr re-checks its signal values after every return (InterruptSignal::WaitRelaxed, Signal::WaitAny), so
 *    to it this is a spurious wake-up; it ends a lost wake-up of ROCr 5.2's own: its queue destructor and its
 *    async-events thread wait on the queue's inactive signal, ONE auto-reset event shared by every queue, and
 *    when the async thread's store sets it before the destructor sleeps, the async thread's next wait can
 *    consume the set — the destructor then sleeps forever (seen in hsa_queue_destroy on this loaded box;
 *    tests/thunk/event_forever.c, queue_destroy_stress.c).  Later ROCr closes that window with event ages;
 *    a wait that passes one gets amdkfd's forever.
 *  - a wait holds the events it was given, not their ids or table entries: an event destroyed while waited
 *    on fails the wait (destroy_event clears each waiter's event, test_event_condition then fails), even
 *    when a new event took its id and entry at once — each entry's generation changes at destruction, so a
 *    waiter never wakes on, consumes, or counts itself a waiter of the event that reused the slot. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KFD_SIGNAL_EVENT_LIMIT 4096
#define KFD_FIRST_SYSTEM_EVENT_ID 0x80000000u
#define UNSIGNALED_SLOT (~(uint64_t)0)
#define MAX_EVENTS 8192
#define FOREVER_MS 3600000u         /* a wait at least this long is ROCr's "forever" (see the deviation above) */
#define FOREVER_SLICE_MS 50u

#define ST_SUCCESS 0
#define ST_ERROR 1
#define ST_INVALID_PARAMETER 3
#define ST_INVALID_HANDLE 4
#define ST_NOT_OPEN 20
#define ST_WAIT_TIMEOUT 31

#define EVENTTYPE_SIGNAL 0
#define EVENTTYPE_DEBUG 5
#define EVENTTYPE_MEMORY 8
#define EVENTTYPE_MAXID 9

typedef struct {
    int used;
    uint32_t id, type;
    int auto_reset, signaled, waiters;
    uint64_t age;                   /* amdkfd's event_age: 1 at creation, bumped by every set */
    uint64_t generation;            /* bumped when the event is destroyed: the entry is another event then */
    int has_fault;
    HsaMemoryAccessFault fault;
} kfd_event;

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond;
static int ev_cond_ready;
static kfd_event ev_table[MAX_EVENTS];
static uint64_t* ev_page;           /* KFD_SIGNAL_EVENT_LIMIT slots */
static uint32_t next_system_id = KFD_FIRST_SYSTEM_EVENT_ID;
static int kfd_open_count;
static int strict_events;          /* the quirk strict-events: no FOREVER_SLICE_MS deviation */

void pyhip_kfd_set_strict_events(int strict) { __atomic_store_n(&strict_events, strict, __ATOMIC_RELEASE); }

static uint64_t now_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The emulated GPU's clock (s_memrealtime, dispatch timestamps): 100 MHz like MI200/MI300's. */
uint64_t pyhip_kfd_gpu_clock(void) { return now_ns(CLOCK_MONOTONIC) / 10; }

int pyhip_kfd_is_open(void) { return __atomic_load_n(&kfd_open_count, __ATOMIC_ACQUIRE) > 0; }
void pyhip_kfd_set_open(int open) { __atomic_store_n(&kfd_open_count, open, __ATOMIC_RELEASE); }

static void ev_init_locked(void) {
    if (!ev_cond_ready) {
        pthread_condattr_t a;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&ev_cond, &a);
        pthread_condattr_destroy(&a);
        ev_cond_ready = 1;
    }
    if (!ev_page) {
        ev_page = aligned_alloc(4096, KFD_SIGNAL_EVENT_LIMIT * 8);
        if (ev_page)
            for (int i = 0; i < KFD_SIGNAL_EVENT_LIMIT; ++i) ev_page[i] = UNSIGNALED_SLOT;
    }
}

static kfd_event* ev_find_locked(uint32_t id) {
    for (int i = 0; i < MAX_EVENTS; ++i)
        if (ev_table[i].used && ev_table[i].id == id) return &ev_table[i];
    return NULL;
}

static void ev_set_locked(kfd_event* e) {
    if (++e->age == 0) e->age = 2;  /* never back to the reserved ages 0 and 1 */
    e->signaled = !e->auto_reset || e->waiters == 0;
    pthread_cond_broadcast(&ev_cond);
}

HSAKMT_STATUS hsaKmtGetClockCounters(uint32_t NodeId, HsaClockCounters* Counters) {
    if (!pyhip_kfd_is_open()) return ST_NOT_OPEN;
    if (!Counters) return ST_INVALID_PARAMETER;
    (void)NodeId;
    Counters->GPUClockCounter = pyhip_kfd_gpu_clock();
    Counters->CPUClockCounter = now_ns(CLOCK_MONOTONIC_RAW);
    Counters->SystemClockCounter = now_ns(CLOCK_BOOTTIME);
    Counters->SystemClockFrequencyHz = 1000000000ull;
    return ST_SUCCESS;
}

HSAKMT_STATUS hsaKmtCreateEvent(HsaEventDescriptor* EventDesc, bool ManualReset, bool IsSignaled, HsaEvent** Event) {
    if (!pyhip_kfd_is_open()) return ST_NOT_OPEN;
    if (!EventDesc || !Event || EventDesc->EventType >= EVENTTYPE_MAXID) return ST_INVALID_PARAMETER;
    int is_signal = EventDesc->EventType == EVENTTYPE_SIGNAL || EventDesc->EventType == EVENTTYPE_DEBUG;
    HsaEvent* out = calloc(1, sizeof(HsaEvent));
    if (!out) return ST_ERROR;
    pthread_mutex_lock(&ev_lock);
    ev_init_locked();
    kfd_event* e = NULL;
    uint32_t id = 0;
    if (is_signal) {      /* lowest free signal id: it indexes the event page */
        for (id = 0; id < KFD_SIGNAL_EVENT_LIMIT && ev_find_locked(id); ++id) {}
        if (id == KFD_SIGNAL_EVENT_LIMIT || !ev_page) goto fail;
    } else {
        id = next_system_id++;
    }
    for (int i = 0; i < MAX_EVENTS; ++i)
        if (!ev_table[i].used) { e = &ev_table[i]; break; }
    if (!e) goto fail;
    uint64_t generation = e->generation;
    memset(e, 0, sizeof(*e));
    e->generation = generation;
    e->used = 1;
    e->id = id;
    e->type = EventDesc->EventType;
    e->auto_reset = !ManualReset;
    e->age = 1;
    if (is_signal) {
        ev_page[id] = UNSIGNALED_SLOT;
        out->EventData.HWData2 = (uint64_t)(uintptr_t)&ev_page[id];
        if (IsSignaled) e->signaled = 1;
    }
    pthread_mutex_unlock(&ev_lock);
    out->EventId = id;
    out->EventData.EventType = EventDesc->EventType;
    out->EventData.HWData1 = id;
    out->EventData.HWData3 = id;
    out->EventData.EventData.SyncVar = EventDesc->SyncVar;
    *Event = out;
    return ST_SUCCESS;
fail:
    pthread_mutex_unlock(&ev_lock);
    free(out);
    *Event = NULL;
    return ST_ERROR;
}

HSAKMT_STATUS hsaKmtDestroyEvent(HsaEvent* Event) {
    if (!pyhip_kfd_is_open()) return ST_NOT_OPEN;
    if (!Event) return ST_INVALID_HANDLE;
    pthread_mutex_lock(&ev_lock);
    kfd_event* e = ev_find_locked(Event->EventId);
    if (!e) { pthread_mutex_unlock(&ev_lock); return ST_ERROR; }
    e->used = 0;
    e->generation++;
    pthread_cond_broadcast(&ev_cond);       /* waiters on it give up (as after KFD destroys it) */
    pthread_mutex_unlock(&ev_lock);
    free(Event);
    return ST_SUCCESS;
}

static int is_system_type(uint32_t t) { return t != EVENTTYPE_SIGNAL && t != EVENTTYPE_DEBUG; }

static HSAKMT_STATUS set_or_reset(HsaEvent* Event, int set) {
    if (!pyhip_kfd_is_open()) return ST_NOT_OPEN;
    if (!Event) return ST_INVALID_HANDLE;
    if (is_system_type(Event->EventData.EventType)) return ST_ERROR;
    pthread_mutex_lock(&ev_lock);
    kfd_event* e = ev_find_locked(Event->EventId);
    if (e) {
        if (set) ev_set_locked(e);
        else e->signaled = 0;
    }
    pthread_mutex_unlock(&ev_lock);
    return e ? ST_SUCCESS : ST_ERROR;
}

HSAKMT_STATUS hsaKmtSetEvent(HsaEvent* Event) { return set_or_reset(Event, 1); }
HSAKMT_STATUS hsaKmtResetEvent(HsaEvent* Event) { return set_or_reset(Event, 0); }

HSAKMT_STATUS hsaKmtQueryEventState(HsaEvent* Event) {
    if (!pyhip_kfd_is_open()) return ST_NOT_OPEN;
    return Event ? ST_SUCCESS : ST_INVALID_HANDLE;
}

/* amdkfd's kfd_wait_on_events, with libhsakmt's event_age array (NULL: no ages). */
static HSAKMT_STATUS wait_events(HsaEvent* Events[], uint32_t NumEvents, bool WaitOnAll, uint32_t Milliseconds,
                                 uint64_t* event_age) {
    if (!pyhip_kfd_is_open()) return ST_NOT_OPEN;
    if (!Events) return ST_INVALID_HANDLE;
    if (NumEvents == 0) return ST_INVALID_PARAMETER;
    for (uint32_t i = 0; i < NumEvents; ++i)
        if (!Events[i]) return ST_INVALID_HANDLE;
    kfd_event** evs = calloc(NumEvents, sizeof(kfd_event*));
    uint64_t* seen = calloc(NumEvents, sizeof(uint64_t));
    uint64_t* gens = calloc(NumEvents, sizeof(uint64_t));
    char* flags = calloc(NumEvents, 1);
    if (!evs || !seen || !gens || !flags) { free(evs); free(seen); free(gens); free(flags); return ST_ERROR; }
    enum { ACTIVE = 1, QUEUED = 2, AGED = 4 };  /* activated; on the event's wait queue; age given */
    HSAKMT_STATUS st = ST_SUCCESS;
    int any_age = 0;
    pthread_mutex_lock(&ev_lock);
    ev_init_locked();
    for (uint32_t i = 0; i < NumEvents; ++i) {      /* init_event_waiter */
        kfd_event* e = evs[i] = ev_find_locked(Events[i]->EventId);
        if (!e) { st = ST_INVALID_PARAMETER; break; }
        gens[i] = e->generation;
        seen[i] = e->age;
        if (e->signaled) flags[i] |= ACTIVE;
        if (e->signaled && e->auto_reset) e->signaled = 0;
        if (event_age && e->type == EVENTTYPE_SIGNAL && Events[i]->EventData.EventType == EVENTTYPE_SIGNAL &&
            event_age[i]) {
            flags[i] |= AGED;
            any_age = 1;
            if (e->age != event_age[i]) flags[i] |= ACTIVE;
        }
        if (!(flags[i] & ACTIVE)) { flags[i] |= QUEUED; e->waiters++; }
    }
    struct timespec deadline;
    int forever = Milliseconds >= FOREVER_MS;
    if (forever && !any_age && !__atomic_load_n(&strict_events, __ATOMIC_ACQUIRE)) {
        Milliseconds = FOREVER_SLICE_MS;
        forever = 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += Milliseconds / 1000;
    deadline.tv_nsec += (long)(Milliseconds % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
    if (st == ST_SUCCESS) {
        for (;;) {
            uint32_t n = 0;
            for (uint32_t i = 0; i < NumEvents; ++i) {
                if (!evs[i]->used || evs[i]->generation != gens[i]) { st = ST_ERROR; break; }   /* destroyed */
                if (!(flags[i] & ACTIVE) && evs[i]->age != seen[i]) flags[i] |= ACTIVE;
                n += flags[i] & ACTIVE;
            }
            if (st != ST_SUCCESS || (WaitOnAll ? n == NumEvents : n > 0)) break;
            if (Milliseconds == 0) { st = ST_WAIT_TIMEOUT; break; }
            if (forever) pthread_cond_wait(&ev_cond, &ev_lock);
            else if (pthread_cond_timedwait(&ev_cond, &ev_lock, &deadline) == ETIMEDOUT) { st = ST_WAIT_TIMEOUT; break; }
        }
    }
    for (uint32_t i = 0; i < NumEvents; ++i) {       /* copy_signaled_event_data, free_waiters */
        kfd_event* e = evs[i];
        if (!e) break;
        if (!e->used || e->generation != gens[i]) continue;      /* destroyed: the entry is not ours */
        if (flags[i] & QUEUED) e->waiters--;
        if (st != ST_SUCCESS || !(flags[i] & ACTIVE)) continue;
        if (e->type == EVENTTYPE_MEMORY && e->has_fault) {
            Events[i]->EventData.EventData.MemoryAccessFault = e->fault;
            e->has_fault = 0;
        }
        if (flags[i] & AGED) event_age[i] = e->age;
    }
    pthread_mutex_unlock(&ev_lock);
    free(evs); free(seen); free(gens); free(flags);
    return st;
}

HSAKMT_STATUS hsaKmtWaitOnMultipleEvents(HsaEvent* Events[], uint32_t NumEvents, bool WaitOnAll,
                                         uint32_t Milliseconds) {
    return wait_events(Events, NumEvents, WaitOnAll, Milliseconds, NULL);
}

HSAKMT_STATUS hsaKmtWaitOnMultipleEvents_Ext(HsaEvent* Events[], uint32_t NumEvents, bool WaitOnAll,
                                             uint32_t Milliseconds, uint64_t* event_age) {
    return wait_events(Events, NumEvents, WaitOnAll, Milliseconds, event_age);
}

HSAKMT_STATUS hsaKmtWaitOnEvent(HsaEvent* Event, uint32_t Milliseconds) {
    if (!Event) return ST_INVALID_HANDLE;
    return wait_events(&Event, 1, true, Milliseconds, NULL);
}

HSAKMT_STATUS hsaKmtWaitOnEvent_Ext(HsaEvent* Event, uint32_t Milliseconds, uint64_t* event_age) {
    if (!Event) return ST_INVALID_HANDLE;
    return wait_events(&Event, 1, true, Milliseconds, event_age);
}

/* ---- what the emulated hardware calls ----------------------------------------------------------- */

/* The CP wrote the event id into an event mailbox and raised an interrupt carrying that id (a RELEASE_MEM
 * with an interrupt, as the completion of a packet whose signal has a mailbox).  Returns 1 if an event
 * was set. */
int pyhip_kfd_interrupt(uint32_t event_id) {
    int hit = 0;
    pthread_mutex_lock(&ev_lock);
    ev_init_locked();
    kfd_event* e = ev_find_locked(event_id);
    if (e && event_id < KFD_SIGNAL_EVENT_LIMIT && ev_page[event_id] != UNSIGNALED_SLOT) {
        ev_page[event_id] = UNSIGNALED_SLOT;        /* acknowledge the slot, then set the event */
        ev_set_locked(e);
        hit = 1;
    } else if (!e) {                                /* unknown id: scan the page like KFD does */
        for (uint32_t i = 0; i < KFD_SIGNAL_EVENT_LIMIT; ++i) {
            if (ev_page[i] == UNSIGNALED_SLOT) continue;
            kfd_event* f = ev_find_locked(i);
            if (!f) continue;
            ev_page[i] = UNSIGNALED_SLOT;
            ev_set_locked(f);
            hit = 1;
        }
    }
    pthread_mutex_unlock(&ev_lock);
    return hit;
}

/* The event page (the signal events' mailboxes, KFD_SIGNAL_EVENT_LIMIT u64 slots): the Python side maps it
 * to every GPU, as libhsakmt allocates it GPU-mapped (a wave's signal update stores an event id there). */
void* pyhip_kfd_event_page(void) {
    pthread_mutex_lock(&ev_lock);
    ev_init_locked();
    void* page = ev_page;
    pthread_mutex_unlock(&ev_lock);
    return page;
}

/* A GPU VM fault: every memory event of the process is set and carries the fault (kfd_signal_vm_fault_event).
 * failure: HsaAccessAttributeFailure bits.  Returns the number of memory events that were set. */
int pyhip_kfd_memory_fault(uint32_t node_id, uint64_t va, uint32_t failure, uint32_t flags) {
    int n = 0;
    pthread_mutex_lock(&ev_lock);
    ev_init_locked();
    for (int i = 0; i < MAX_EVENTS; ++i) {
        kfd_event* e = &ev_table[i];
        if (!e->used || e->type != EVENTTYPE_MEMORY) continue;
        e->fault.NodeId = node_id;
        e->fault.VirtualAddress = va;
        e->fault.Failure = failure;
        e->fault.Flags = flags;
        e->has_fault = 1;
        ev_set_locked(e);
        ++n;
    }
    pthread_mutex_unlock(&ev_lock);
    return n;
}

/* Events still allocated (tests: ROCr destroys what it creates). */
int pyhip_kfd_event_count(void) {
    int n = 0;
    pthread_mutex_lock(&ev_lock);
    for (int i = 0; i < MAX_EVENTS; ++i) n += ev_table[i].used;
    pthread_mutex_unlock(&ev_lock);
    return n;
}
