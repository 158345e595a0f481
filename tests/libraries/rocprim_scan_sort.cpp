// rocPRIM 5.3 (header-only: every kernel compiled here) for tests/libraries/test_rocprim.py: a device-wide
// inclusive scan (decoupled look-back across workgroups) and a radix sort (several kernels, temporary
// storage) of argv[1]'s int32 values; writes both results to argv[2].
#include <hip/hip_runtime.h>
#include <iostream>  // rocPRIM 5.3's device headers use std::cout without including it
#include <rocprim/device/device_scan.hpp>
#include <rocprim/device/device_radix_sort.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { fprintf(stderr, "%s: %s (line %d)\n", #x, hipGetErrorString(e_), __LINE__); exit(1); } } while (0)

int main(int argc, char** argv)
{
    if (argc < 3) { fprintf(stderr, "usage: %s IN OUT\n", argv[0]); return 2; }
    FILE* fp = fopen(argv[1], "rb");
    if (!fp) { perror(argv[1]); return 1; }
    std::vector<int> in;
    int v;
    while (fread(&v, 4, 1, fp) == 1) in.push_back(v);
    fclose(fp);
    const size_t n = in.size();
    int *d_in, *d_scan, *d_sorted;
    CHECK(hipMalloc(&d_in, n * 4)); CHECK(hipMalloc(&d_scan, n * 4)); CHECK(hipMalloc(&d_sorted, n * 4));
    CHECK(hipMemcpy(d_in, in.data(), n * 4, hipMemcpyHostToDevice));
    size_t scan_bytes = 0, sort_bytes = 0;
    CHECK(rocprim::inclusive_scan(nullptr, scan_bytes, d_in, d_scan, n, rocprim::plus<int>()));
    CHECK(rocprim::radix_sort_keys(nullptr, sort_bytes, d_in, d_sorted, n));
    void* temp;
    CHECK(hipMalloc(&temp, scan_bytes > sort_bytes ? scan_bytes : sort_bytes));
    CHECK(rocprim::inclusive_scan(temp, scan_bytes, d_in, d_scan, n, rocprim::plus<int>()));
    CHECK(rocprim::radix_sort_keys(temp, sort_bytes, d_in, d_sorted, n));
    CHECK(hipDeviceSynchronize());
    std::vector<int> scan(n), sorted(n);
    CHECK(hipMemcpy(scan.data(), d_scan, n * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(sorted.data(), d_sorted, n * 4, hipMemcpyDeviceToHost));
    fp = fopen(argv[2], "wb");
    if (!fp) { perror(argv[2]); return 1; }
    fwrite(scan.data(), 4, n, fp); fwrite(sorted.data(), 4, n, fp);
    fclose(fp);
    printf("PASS\n");
    return 0;
}
