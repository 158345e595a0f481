/* hsa_queue_destroy under concurrent event traffic, on AMD's ROCr 5.2 over pyhip's libhsakmt.  ROCr 5.2 shares
 * one auto-reset KFD event among every queue's inactive signal; the queue destructor stores to that signal and
 * sleeps on the event until the async-events thread (which waits on it along with every async-handler signal)
 * has retired the queue's error handler and stored back.  Here QUEUE_THREADS threads create a queue, run a
 * barrier-AND packet through it (completion signal waited on, blocked) and destroy it, while EVENT_THREADS
 * threads keep the async-events thread busy: each creates an interrupt signal, registers an async handler on
 * it, fires it and waits (blocked) for the handler to answer on a second signal.  A destroy whose wake-up is
 * lost sleeps forever; the watchdog alarm then kills the program.  Prints PASS <queues> <handlers>.
 * argv[1]: rounds per queue thread (default 12), argv[2]: queue threads (default 2, at most 8), argv[3]: the
 * watchdog's seconds (default 240), argv[4]: threads that only burn CPU meanwhile (default 0, at most 4). */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_QUEUE_THREADS 8
#define EVENT_THREADS 2
#define CHECK(x) do { hsa_status_t s_ = (x); if (s_ != HSA_STATUS_SUCCESS) { const char* m_ = "?"; \
    hsa_status_string(s_, &m_); printf("FAIL %s: %s (0x%x) at line %d\n", #x, m_, s_, __LINE__); exit(1); } } while (0)

static hsa_agent_t gpu;
static int rounds = 12, queue_threads = 2;
static int queues_done, handlers_run, stop;

static hsa_status_t find_gpu(hsa_agent_t a, void* d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  return HSA_STATUS_SUCCESS;
}

static void* queue_thread(void* arg) {
  (void)arg;
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  for (int r = 0; r < rounds; ++r) {
    hsa_queue_t* q;
    CHECK(hsa_queue_create(gpu, 128, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
    hsa_signal_store_screlease(done, 1);
    hsa_barrier_and_packet_t p;
    memset(&p, 0, sizeof p);
    p.completion_signal = done;
    uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
    hsa_barrier_and_packet_t* slot = (hsa_barrier_and_packet_t*)q->base_address + (index % q->size);
    memcpy((char*)slot + 4, (char*)&p + 4, sizeof p - 4);
    uint32_t header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    __atomic_store_n((uint32_t*)slot, header, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, index);
    while (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) {}
    CHECK(hsa_queue_destroy(q));              /* where a lost wake-up sleeps forever */
    __atomic_add_fetch(&queues_done, 1, __ATOMIC_SEQ_CST);
  }
  CHECK(hsa_signal_destroy(done));
  return NULL;
}

static void* burner(void* arg) {             /* preemption inside the runtime's short windows */
  (void)arg;
  volatile uint64_t x = 0;
  while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) x++;
  return NULL;
}

static bool handler(hsa_signal_value_t value, void* arg) {
  (void)value;
  __atomic_add_fetch(&handlers_run, 1, __ATOMIC_SEQ_CST);
  hsa_signal_store_screlease(*(hsa_signal_t*)arg, 0);
  return false;                                /* one shot */
}

static void* event_thread(void* arg) {
  (void)arg;
  /* a fixed number of handlers, not until the queue threads finish: then the last destroys run without other
   * traffic, which would wake a sleeper whose wake-up was lost */
  for (int r = 0; r < 2 * rounds && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); ++r) {
    hsa_signal_t fire, answer;
    CHECK(hsa_signal_create(1, 0, NULL, &fire));
    CHECK(hsa_signal_create(1, 0, NULL, &answer));
    CHECK(hsa_amd_signal_async_handler(fire, HSA_SIGNAL_CONDITION_LT, 1, handler, &answer));
    hsa_signal_store_screlease(fire, 0);
    while (hsa_signal_wait_scacquire(answer, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) {}
    CHECK(hsa_signal_destroy(fire));
    CHECK(hsa_signal_destroy(answer));
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) rounds = atoi(argv[1]);
  if (argc > 2) queue_threads = atoi(argv[2]);
  if (rounds < 1 || queue_threads < 1 || queue_threads > MAX_QUEUE_THREADS) { printf("FAIL arguments\n"); return 1; }
  alarm(argc > 3 ? atoi(argv[3]) : 240);                                 /* a destroy that never returns fails, not hangs */
  CHECK(hsa_init());
  CHECK(hsa_iterate_agents(find_gpu, NULL));
  if (!gpu.handle) { printf("FAIL no GPU agent\n"); return 1; }
  pthread_t qt[MAX_QUEUE_THREADS], et[EVENT_THREADS];
  int burners = argc > 4 ? atoi(argv[4]) : 0;
  pthread_t bt[4];
  if (burners < 0 || burners > 4) { printf("FAIL arguments\n"); return 1; }
  for (int i = 0; i < burners; ++i) pthread_create(&bt[i], NULL, burner, NULL);
  for (int i = 0; i < EVENT_THREADS; ++i) pthread_create(&et[i], NULL, event_thread, NULL);
  for (int i = 0; i < queue_threads; ++i) pthread_create(&qt[i], NULL, queue_thread, NULL);
  for (int i = 0; i < queue_threads; ++i) pthread_join(qt[i], NULL);
  __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < EVENT_THREADS; ++i) pthread_join(et[i], NULL);
  for (int i = 0; i < burners; ++i) pthread_join(bt[i], NULL);
  CHECK(hsa_shut_down());
  if (queues_done != queue_threads * rounds || handlers_run < 1) {
    printf("FAIL %d queues, %d handlers\n", queues_done, handlers_run);
    return 1;
  }
  printf("PASS %d %d\n", queues_done, handlers_run);
  return 0;
}
