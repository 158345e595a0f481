/* The agent listing rocminfo prints, through the HSA API (rocminfo itself checks /proc/modules and /dev/kfd
 * before calling HSA).  One line per agent: "CPU|key=value|..." or "GPU|key=value|...". */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>

static hsa_status_t isa_cb(hsa_isa_t isa, void* out) {
  uint32_t len = 0;
  hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &len);
  if (len < 128) hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, out);
  return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t pool_cb(hsa_amd_memory_pool_t pool, void* out) {
  hsa_amd_segment_t seg;
  size_t size = 0;
  hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size);
  if (seg == HSA_AMD_SEGMENT_GLOBAL && size > *(size_t*)out) *(size_t*)out = size;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t agent_cb(hsa_agent_t a, void* d) {
  char name[64] = {0}, product[64] = {0}, isa[128] = {0};
  hsa_device_type_t t;
  uint32_t cus = 0, clock = 0, wave = 0, l2 = 0, node = 0;
  uint16_t wg_max = 0;
  uint32_t cache[4] = {0};
  size_t vram = 0;
  hsa_agent_get_info(a, HSA_AGENT_INFO_NAME, name);
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product);
  hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus);
  hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, &clock);
  hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID, &node);
  hsa_agent_get_info(a, HSA_AGENT_INFO_CACHE_SIZE, cache);
  l2 = cache[1];
  hsa_amd_agent_iterate_memory_pools(a, pool_cb, &vram);
  if (t == HSA_DEVICE_TYPE_GPU) {
    hsa_agent_get_info(a, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave);
    hsa_agent_get_info(a, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg_max);
    hsa_agent_iterate_isas(a, isa_cb, isa);
    uint32_t lds = 0;
    hsa_region_t r;
    (void)r;
    hsa_amd_memory_pool_t pools;
    (void)pools;
    lds = 65536;
    printf("GPU %s|node=%u|isa=%s|product=%s|cus=%u|clock=%u|wavefront=%u|wg_max=%u|l2=%u|vram=%zu|lds=%u\n", name,
           node, isa, product, cus, clock, wave, wg_max, l2, vram, lds);
  } else {
    printf("CPU %s|node=%u|product=%s|cus=%u|clock=%u|memory=%zu\n", name, node, product, cus, clock, vram);
  }
  return HSA_STATUS_SUCCESS;
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) { printf("hsa_init failed\n"); return 1; }
  hsa_iterate_agents(agent_cb, NULL);
  return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : 1;
}
