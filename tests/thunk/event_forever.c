/* The lost wake-up of ROCr's queue destructor (native/hsakmt/events.c, the deviation): two threads wait on one
 * auto-reset event "forever" (ROCr's 0xFFFFFFFE ms, and INFINITE); the one set meant for the first is consumed
 * by the second's wait.  The first must come back (HSAKMT_STATUS_WAIT_TIMEOUT: ROCr then re-checks its signal
 * values) instead of sleeping for good; a watchdog alarm fails the program if it does not.  Waits with an
 * ordinary timeout keep amdkfd's behaviour.  Prints PASS or FAIL. */
#include <hsakmt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static HsaEvent* ev;
static HSAKMT_STATUS first;

static void* forever_waiter(void* arg) {
  first = hsaKmtWaitOnEvent(ev, (uint32_t)(uintptr_t)arg);
  return NULL;
}

int main(void) {
  alarm(60);                                              /* a wait that never returns fails, not hangs */
  if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS) { printf("FAIL open\n"); return 1; }
  HsaEventDescriptor d;
  memset(&d, 0, sizeof d);
  d.EventType = HSA_EVENTTYPE_SIGNAL;
  if (hsaKmtCreateEvent(&d, false, false, &ev) != HSAKMT_STATUS_SUCCESS) { printf("FAIL create\n"); return 1; }
  uint32_t forevers[2] = {0xFFFFFFFEu, 0xFFFFFFFFu};
  for (int k = 0; k < 2; ++k) {
    if (hsaKmtSetEvent(ev) != HSAKMT_STATUS_SUCCESS) { printf("FAIL set\n"); return 1; }   /* nobody waits yet */
    if (hsaKmtWaitOnEvent(ev, forevers[k]) != HSAKMT_STATUS_SUCCESS) {   /* the other waiter consumes the set */
      printf("FAIL the pending set was not seen\n");
      return 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, forever_waiter, (void*)(uintptr_t)forevers[k]);
    pthread_join(t, NULL);                                /* hung here before */
    if (first != HSAKMT_STATUS_WAIT_TIMEOUT) { printf("FAIL forever wait %u returned %d\n", forevers[k], first); return 1; }
  }
  if (hsaKmtWaitOnEvent(ev, 30) != HSAKMT_STATUS_WAIT_TIMEOUT) { printf("FAIL 30 ms wait\n"); return 1; }
  if (hsaKmtSetEvent(ev) != HSAKMT_STATUS_SUCCESS || hsaKmtWaitOnEvent(ev, 0xFFFFFFFEu) != HSAKMT_STATUS_SUCCESS) {
    printf("FAIL a set event did not end a forever wait\n");
    return 1;
  }
  hsaKmtDestroyEvent(ev);
  hsaKmtCloseKFD();
  printf("PASS\n");
  return 0;
}
