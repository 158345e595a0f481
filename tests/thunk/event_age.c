/* Event age (amdkfd's event_age, libhsakmt's hsaKmtWaitOnEvent_Ext / hsaKmtWaitOnMultipleEvents_Ext, which
 * Debian's 5.2 hsakmt.h does not declare): each semantic step checked against what kfd_events.c does, then the
 * lost wake-up that ages close — a "destroyer" thread (ROCr's queue destructor) and an "async" thread share one
 * auto-reset event; each round the async thread consumes the destroyer's set and answers with a set of its own
 * that it immediately consumes again itself before the destroyer sleeps.  With its age the destroyer's forever
 * wait returns at once; ignoring the age it sleeps for good (under strict-events the thunk has no spurious
 * wake-up), and the watchdog fails the program.  Prints PASS or FAIL <what>. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hsakmt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* looked up at run time: Debian's libhsakmt.so.1 (5.2), which the program links against, lacks them */
static HSAKMT_STATUS (*hsaKmtWaitOnEvent_Ext)(HsaEvent* Event, HSAuint32 Milliseconds, uint64_t* event_age);
static HSAKMT_STATUS (*hsaKmtWaitOnMultipleEvents_Ext)(HsaEvent* Events[], HSAuint32 NumEvents, bool WaitOnAll,
                                                       HSAuint32 Milliseconds, uint64_t* event_age);

#define CHECK(cond, what) do { if (!(cond)) { printf("FAIL %s (line %d)\n", what, __LINE__); return 1; } } while (0)
#define OK HSAKMT_STATUS_SUCCESS
#define TIMEOUT HSAKMT_STATUS_WAIT_TIMEOUT
#define FOREVER 0xFFFFFFFEu

static HsaEvent* make(HSA_EVENTTYPE type, bool manual) {
  HsaEventDescriptor d;
  memset(&d, 0, sizeof d);
  d.EventType = type;
  HsaEvent* e = NULL;
  return hsaKmtCreateEvent(&d, manual, false, &e) == OK ? e : NULL;
}

/* ---- the lost wake-up, many rounds ---- */
static HsaEvent* shared;
static int request, answer;            /* round r: the destroyer stored and set; the async thread answered */
static int rounds = 200;

static void* async_thread(void* arg) {
  (void)arg;
  for (int r = 0; r < rounds; ++r) {
    while (__atomic_load_n(&request, __ATOMIC_ACQUIRE) != r + 1) hsaKmtWaitOnEvent(shared, 1);   /* consumes */
    hsaKmtSetEvent(shared);              /* "handler done": meant for the destroyer, who is not asleep yet */
    hsaKmtWaitOnEvent(shared, 0);        /* the async loop's next wait consumes it */
    __atomic_store_n(&answer, r + 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

static HsaEvent* pair[2];
static int pair_started;
static HSAKMT_STATUS pair_status;

static void* wait_all_thread(void* arg) {
  (void)arg;
  __atomic_store_n(&pair_started, 1, __ATOMIC_RELEASE);
  pair_status = hsaKmtWaitOnMultipleEvents(pair, 2, true, 20000);
  return NULL;
}

int main(void) {
  alarm(90);                            /* a wait that never returns fails, not hangs */
  *(void**)&hsaKmtWaitOnEvent_Ext = dlsym(RTLD_DEFAULT, "hsaKmtWaitOnEvent_Ext");
  *(void**)&hsaKmtWaitOnMultipleEvents_Ext = dlsym(RTLD_DEFAULT, "hsaKmtWaitOnMultipleEvents_Ext");
  CHECK(hsaKmtWaitOnEvent_Ext && hsaKmtWaitOnMultipleEvents_Ext, "the libhsakmt has no event-age waits");
  CHECK(hsaKmtOpenKFD() == OK, "open");
  HsaEvent* e = make(HSA_EVENTTYPE_SIGNAL, false);
  CHECK(e, "create");
  uint64_t age = 1;                     /* a new event's age */
  CHECK(hsaKmtWaitOnEvent_Ext(e, 0, &age) == TIMEOUT && age == 1, "a new event has age 1 and is not signalled");
  CHECK(hsaKmtSetEvent(e) == OK, "set");
  CHECK(hsaKmtWaitOnEvent(e, 0) == OK, "a set without waiters stays signalled");        /* consumed here */
  CHECK(hsaKmtWaitOnEvent(e, 0) == TIMEOUT, "auto-reset");
  age = 0;
  CHECK(hsaKmtWaitOnEvent_Ext(e, 0, &age) == TIMEOUT && age == 0, "age 0 is the old semantics");
  age = 1;
  CHECK(hsaKmtWaitOnEvent_Ext(e, 0, &age) == OK, "a set since the age given wakes at once, even consumed");
  CHECK(age == 2, "the wait hands back the event's age");
  CHECK(hsaKmtWaitOnEvent_Ext(e, 0, &age) == TIMEOUT && age == 2, "no set since: no wake-up, age unchanged");
  CHECK(hsaKmtWaitOnEvent_Ext(e, 20, &age) == TIMEOUT && age == 2, "timed wait");
  for (int i = 0; i < 3; ++i) CHECK(hsaKmtSetEvent(e) == OK, "set");
  age = 2;
  CHECK(hsaKmtWaitOnEvent_Ext(e, FOREVER, &age) == OK && age == 5, "three sets: age 5");
  CHECK(hsaKmtWaitOnEvent(e, 0) == TIMEOUT, "the aged wait consumed the pending set (init_event_waiter)");

  /* several events: only activated signal events get their age back */
  HsaEvent* f = make(HSA_EVENTTYPE_SIGNAL, true);
  HsaEvent* m = make(HSA_EVENTTYPE_MEMORY, false);
  CHECK(f && m, "create more");
  HsaEvent* evs[3] = {e, f, m};
  uint64_t ages[3] = {5, 1, 77};
  CHECK(hsaKmtSetEvent(f) == OK, "set manual");
  CHECK(hsaKmtWaitOnMultipleEvents_Ext(evs, 3, false, 0, ages) == OK, "any: the manual-reset event");
  CHECK(ages[0] == 5 && ages[1] == 2 && ages[2] == 77, "ages back for the activated signal event only");
  CHECK(hsaKmtWaitOnMultipleEvents_Ext(evs, 2, true, 0, ages) == TIMEOUT, "all: e was not set");
  CHECK(ages[0] == 5 && ages[1] == 2, "a wait that does not complete hands back nothing");
  ages[1] = 1;                           /* f still signalled (manual reset), and set since age 1 */
  CHECK(hsaKmtSetEvent(e) == OK, "set");
  CHECK(hsaKmtWaitOnEvent(e, 0) == OK, "consume e");
  CHECK(hsaKmtWaitOnMultipleEvents_Ext(evs, 2, true, FOREVER, ages) == OK && ages[0] == 6 && ages[1] == 2,
        "all: e set since its age (consumed), f signalled");
  CHECK(hsaKmtDestroyEvent(f) == OK && hsaKmtDestroyEvent(m) == OK, "destroy");

  /* a waiter activated at once is not on the event's wait queue (init_event_waiter): while it sleeps for the
   * other event of a wait-all, a new set of the first stays signalled for the next waiter */
  HsaEvent* g = make(HSA_EVENTTYPE_SIGNAL, false);
  CHECK(g, "create g");
  CHECK(hsaKmtSetEvent(e) == OK, "set");
  pair[0] = e;
  pair[1] = g;
  pthread_t w;
  pthread_create(&w, NULL, wait_all_thread, NULL);
  while (!__atomic_load_n(&pair_started, __ATOMIC_ACQUIRE)) usleep(100);
  usleep(300000);                        /* the waiter consumed e's set and sleeps for g */
  CHECK(hsaKmtSetEvent(e) == OK, "set again");
  CHECK(hsaKmtWaitOnEvent(e, 0) == OK, "the set while an activated waiter sleeps stays signalled");
  CHECK(hsaKmtSetEvent(g) == OK, "set g");
  pthread_join(w, NULL);
  CHECK(pair_status == OK, "the wait-all completes");
  CHECK(hsaKmtDestroyEvent(g) == OK, "destroy g");

  /* the lost wake-up: the destroyer stores, sets, checks its value, then sleeps "forever" with its age */
  shared = e;
  pthread_t t;
  pthread_create(&t, NULL, async_thread, NULL);
  for (int r = 0; r < rounds; ++r) {
    uint64_t a = 1;
    CHECK(hsaKmtWaitOnEvent_Ext(shared, 0, &a) == OK, "the first aged wait returns the current age");
    __atomic_store_n(&request, r + 1, __ATOMIC_RELEASE);
    hsaKmtSetEvent(shared);
    while (__atomic_load_n(&answer, __ATOMIC_ACQUIRE) != r + 1) usleep(10);   /* the window: set and consumed */
    CHECK(hsaKmtWaitOnEvent_Ext(shared, FOREVER, &a) == OK, "forever wait with an age");      /* hangs without */
  }
  pthread_join(t, NULL);
  CHECK(hsaKmtDestroyEvent(e) == OK, "destroy");
  hsaKmtCloseKFD();
  printf("PASS\n");
  return 0;
}
