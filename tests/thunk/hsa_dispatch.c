/* A plain HSA program (no HIP): agents, memory pools, a queue, a code object through hsa_executable, kernel
 * dispatch packets written by hand (body first, header last with a release store, then the doorbell), a
 * barrier-AND packet, signal waits and hsa_amd_memory_async_copy.  Run against AMD's ROCr over pyhip's
 * libhsakmt; prints PASS or the first failure.  argv[1]: a gfx90a code object with vadd(a, b, c, n) and
 * scale<float>(x, s, n) (tests/fixtures/src/basic.hip); argv[2] (optional): element count. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { hsa_status_t s_ = (x); if (s_ != HSA_STATUS_SUCCESS) { const char* m_ = "?"; \
    hsa_status_string(s_, &m_); printf("FAIL %s: %s (0x%x) at line %d\n", #x, m_, s_, __LINE__); exit(1); } } while (0)

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t vram_pool, kernarg_pool;
static int have_vram, have_kernarg;

static hsa_status_t find_agents(hsa_agent_t a, void* d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU && !cpu.handle) cpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pools(hsa_amd_memory_pool_t p, void* d) {
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (d == &vram_pool && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && !have_vram) {
    vram_pool = p; have_vram = 1;
  }
  if (d == &kernarg_pool && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !have_kernarg) {
    kernarg_pool = p; have_kernarg = 1;
  }
  return HSA_STATUS_SUCCESS;
}

static void* load_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) { printf("FAIL cannot open %s\n", path); exit(1); }
  fseek(f, 0, SEEK_END); *size = ftell(f); fseek(f, 0, SEEK_SET);
  void* p = malloc(*size);
  if (fread(p, 1, *size, f) != *size) { printf("FAIL short read\n"); exit(1); }
  fclose(f);
  return p;
}

static void kernel(hsa_executable_t exe, const char* name, uint64_t* object, uint32_t* kernarg_size) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, name, &gpu, &sym));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, object));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, kernarg_size));
}

/* Reserve a slot, write the body, publish the header with a release store, ring the doorbell. */
static void submit(hsa_queue_t* q, const void* pkt) {
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  while (index - hsa_queue_load_read_index_scacquire(q) >= q->size) {}
  uint32_t* slot = (uint32_t*)((char*)q->base_address + (index % q->size) * 64);
  memcpy(slot + 1, (const uint32_t*)pkt + 1, 60);
  __atomic_store_n(slot, ((const uint32_t*)pkt)[0], __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);
}

static void dispatch(hsa_queue_t* q, uint64_t object, void* kernarg, uint32_t n, int barrier, hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t p;
  memset(&p, 0, sizeof(p));
  p.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  p.workgroup_size_x = 256; p.workgroup_size_y = 1; p.workgroup_size_z = 1;
  p.grid_size_x = (n + 255) / 256 * 256; p.grid_size_y = 1; p.grid_size_z = 1;
  p.kernel_object = object;
  p.kernarg_address = kernarg;
  p.completion_signal = done;
  p.header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | (barrier << HSA_PACKET_HEADER_BARRIER) |
             (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
             (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  submit(q, &p);
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: %s CODE_OBJECT [N]\n", argv[0]); return 2; }
  uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 1000;
  CHECK(hsa_init());
  CHECK(hsa_iterate_agents(find_agents, NULL));
  if (!gpu.handle || !cpu.handle) { printf("FAIL no GPU/CPU agent\n"); return 1; }
  CHECK(hsa_amd_agent_iterate_memory_pools(gpu, find_pools, &vram_pool));
  CHECK(hsa_amd_agent_iterate_memory_pools(cpu, find_pools, &kernarg_pool));
  if (!have_vram || !have_kernarg) { printf("FAIL pools vram=%d kernarg=%d\n", have_vram, have_kernarg); return 1; }

  /* code object */
  size_t co_size;
  void* co = load_file(argv[1], &co_size);
  hsa_code_object_reader_t reader;
  hsa_executable_t exe;
  CHECK(hsa_code_object_reader_create_from_memory(co, co_size, &reader));
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  uint64_t vadd, scale;
  uint32_t vadd_ka, scale_ka;
  kernel(exe, "_Z4vaddPKfS0_Pfi.kd", &vadd, &vadd_ka);
  kernel(exe, "_Z5scaleIfEvPT_S0_i.kd", &scale, &scale_ka);

  /* data: random inputs in host memory from the system pool, poisoned output */
  size_t bytes = (size_t)n * 4;
  float *ha, *hb, *hc;
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, bytes, 0, (void**)&ha));
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, bytes, 0, (void**)&hb));
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, bytes, 0, (void**)&hc));
  hsa_agent_t both[2] = {gpu, cpu};
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, ha));
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, hb));
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, hc));
  srand(1234);
  for (uint32_t i = 0; i < n; ++i) { ha[i] = rand() / (float)RAND_MAX - 0.5f; hb[i] = rand() / (float)RAND_MAX; hc[i] = -1e30f; }
  float *da, *db, *dc;
  CHECK(hsa_amd_memory_pool_allocate(vram_pool, bytes, 0, (void**)&da));
  CHECK(hsa_amd_memory_pool_allocate(vram_pool, bytes, 0, (void**)&db));
  CHECK(hsa_amd_memory_pool_allocate(vram_pool, bytes, 0, (void**)&dc));

  hsa_signal_t copied, done, barrier_done;
  CHECK(hsa_signal_create(2, 0, NULL, &copied));
  CHECK(hsa_amd_memory_async_copy(da, gpu, ha, cpu, bytes, 0, NULL, copied));
  CHECK(hsa_amd_memory_async_copy(db, gpu, hb, cpu, bytes, 0, NULL, copied));
  if (hsa_signal_wait_scacquire(copied, HSA_SIGNAL_CONDITION_EQ, 0, 30000000000ull, HSA_WAIT_STATE_BLOCKED) != 0) {
    printf("FAIL host-to-device copies did not complete\n"); return 1;
  }
  /* fill the output with the poison through the GPU too (a copy from hc) */
  CHECK(hsa_signal_destroy(copied));
  CHECK(hsa_signal_create(1, 0, NULL, &copied));
  CHECK(hsa_amd_memory_async_copy(dc, gpu, hc, cpu, bytes, 0, NULL, copied));
  hsa_signal_wait_scacquire(copied, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);

  hsa_queue_t* q;
  CHECK(hsa_queue_create(gpu, 1024, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));

  /* kernargs: explicit arguments, the rest (hidden arguments) zero */
  struct { float* a; float* b; float* c; uint32_t n; } __attribute__((packed)) vargs = {da, db, dc, n};
  struct { float* x; float s; uint32_t n; } __attribute__((packed)) sargs = {dc, 3.0f, n};
  void *vka, *ska;
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, vadd_ka > 256 ? vadd_ka : 256, 0, &vka));
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, scale_ka > 256 ? scale_ka : 256, 0, &ska));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, vka));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, ska));
  memset(vka, 0, vadd_ka > 256 ? vadd_ka : 256); memcpy(vka, &vargs, sizeof(vargs));
  memset(ska, 0, scale_ka > 256 ? scale_ka : 256); memcpy(ska, &sargs, sizeof(sargs));

  CHECK(hsa_signal_create(2, 0, NULL, &done));
  dispatch(q, vadd, vka, n, 0, done);
  dispatch(q, scale, ska, n, 1, done);                 /* barrier bit: after vadd */
  /* a barrier-AND packet that waits for both dispatches and completes its own signal */
  CHECK(hsa_signal_create(1, 0, NULL, &barrier_done));
  hsa_barrier_and_packet_t b;
  memset(&b, 0, sizeof(b));
  b.dep_signal[0] = done;
  b.completion_signal = barrier_done;
  b.header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
             (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  submit(q, &b);
  if (hsa_signal_wait_scacquire(barrier_done, HSA_SIGNAL_CONDITION_EQ, 0, 60000000000ull, HSA_WAIT_STATE_BLOCKED) != 0) {
    printf("FAIL barrier packet did not complete (dispatch signal %ld)\n", (long)hsa_signal_load_relaxed(done));
    return 1;
  }
  if (hsa_signal_load_relaxed(done) != 0) { printf("FAIL dispatch signal %ld\n", (long)hsa_signal_load_relaxed(done)); return 1; }

  CHECK(hsa_signal_destroy(copied));
  CHECK(hsa_signal_create(1, 0, NULL, &copied));
  CHECK(hsa_amd_memory_async_copy(hc, cpu, dc, gpu, bytes, 0, NULL, copied));
  hsa_signal_wait_scacquire(copied, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  for (uint32_t i = 0; i < n; ++i) {
    float want = (ha[i] + hb[i]) * 3.0f;
    if (hc[i] != want) { printf("FAIL c[%u] = %g, want %g\n", i, hc[i], want); return 1; }
  }
  CHECK(hsa_signal_destroy(copied));
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_signal_destroy(barrier_done));
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_executable_destroy(exe));
  CHECK(hsa_code_object_reader_destroy(reader));
  CHECK(hsa_shut_down());
  printf("PASS %u\n", n);
  return 0;
}
