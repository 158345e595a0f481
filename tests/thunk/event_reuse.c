/* A wait on an event that is destroyed while waited on, its id and slot taken at once by a new event that is
 * then set: the wait must fail (amdkfd: destroy_event clears the waiter's event, the wait returns an
 * error) — never return success for the new event's set, nor consume it.  Repeated: the waiter may wake
 * before or after the new event exists.  The waiter also waits on an auto-reset "gate" event that starts set:
 * its registration consumes the set, which is how the main thread knows the waiter holds the event before
 * destroying it.  Prints "reused R woke W failed F kept K" and PASS or FAIL. */
#include <hsakmt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static HsaEvent* events[2];             /* the gate, the event destroyed under the wait */
static HSAKMT_STATUS result;

static void* waiter(void* arg) {
  (void)arg;
  result = hsaKmtWaitOnMultipleEvents(events, 2, true, 3000);
  return NULL;
}

static HsaEvent* signal_event(bool set) {
  HsaEventDescriptor d;
  memset(&d, 0, sizeof d);
  d.EventType = HSA_EVENTTYPE_SIGNAL;
  HsaEvent* e = NULL;
  if (hsaKmtCreateEvent(&d, false, set, &e) != HSAKMT_STATUS_SUCCESS) return NULL;
  return e;
}

int main(void) {
  if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS) { printf("FAIL open\n"); return 1; }
  int rounds = 100, reused = 0, woke = 0, failed = 0, kept = 0;
  for (int r = 0; r < rounds; ++r) {
    HsaEvent* gate = events[0] = signal_event(true);
    HsaEvent* waited = events[1] = signal_event(false);
    uint32_t id = waited->EventId;
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    while (hsaKmtWaitOnEvent(gate, 0) == HSAKMT_STATUS_SUCCESS) {   /* not registered yet: set it again */
      hsaKmtSetEvent(gate);
      usleep(1000);
    }
    hsaKmtDestroyEvent(waited);
    HsaEvent* fresh = signal_event(false);         /* the lowest free id: the one just released */
    reused += fresh->EventId == id;
    hsaKmtSetEvent(fresh);
    hsaKmtSetEvent(gate);                          /* the wait is for both: only the destroyed one may fail it */
    pthread_join(t, NULL);
    woke += result == HSAKMT_STATUS_SUCCESS;
    failed += result == HSAKMT_STATUS_ERROR;
    kept += hsaKmtWaitOnEvent(fresh, 0) == HSAKMT_STATUS_SUCCESS;   /* the set is still there for its owner */
    hsaKmtDestroyEvent(fresh);
    hsaKmtDestroyEvent(gate);
  }
  hsaKmtCloseKFD();
  printf("reused %d woke %d failed %d kept %d\n", reused, woke, failed, kept);
  printf(reused == rounds && woke == 0 && failed == rounds && kept == rounds ? "PASS\n" : "FAIL\n");
  return 0;
}
