"""hip-python style: streams, events, host callbacks (C function pointers via ctypes), function attributes,
module globals and occupancy, on a hiprtc-compiled kernel; results checked against numpy."""
import ctypes

import numpy as np

from pyhip import hip, hiprtc


def hip_check(call_result):
    err = call_result[0]
    result = call_result[1:]
    if len(result) == 1:
        result = result[0]
    if isinstance(err, hip.hipError_t) and err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    elif isinstance(err, hiprtc.hiprtcResult) and err != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        raise RuntimeError(str(err))
    return result


src = b"""
__device__ int table[4] = {1, 2, 3, 4};
extern "C" __global__ void gather_add(int* out, const int* idx, int n) {
  __shared__ int tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? table[idx[i] & 3] : 0;
  __syncthreads();
  if (i < n) out[i] += tile[threadIdx.x] + tile[(threadIdx.x + 1) % blockDim.x];
}
"""
prog = hip_check(hiprtc.hiprtcCreateProgram(src, b"gather", 0, [], []))
hip_check(hiprtc.hiprtcCompileProgram(prog, 0, []))            # no --offload-arch: the current device's ISA
code = bytearray(hip_check(hiprtc.hiprtcGetCodeSize(prog)))
hip_check(hiprtc.hiprtcGetCode(prog, code))
module = hip_check(hip.hipModuleLoadData(code))
kernel = hip_check(hip.hipModuleGetFunction(module, b"gather_add"))

attrs = hip.hipFuncAttributes()
hip_check(hip.hipFuncGetAttributes(attrs, kernel))
assert attrs.sharedSizeBytes == 1024 and attrs.maxThreadsPerBlock >= 256 and attrs.numRegs > 0
assert hip_check(hip.hipFuncGetAttribute(hip.hipFunction_attribute.HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                         kernel)) == 1024
grid_size, block_size = hip_check(hip.hipOccupancyMaxPotentialBlockSize(kernel, 0, 0))
assert grid_size > 0 and block_size % 64 == 0
table, table_bytes = hip_check(hip.hipModuleGetGlobal(module, b"table"))
assert table_bytes == 16
new_table = np.array([10, 20, 30, 40], np.int32)
hip_check(hip.hipMemcpy(table, new_table, 16, hip.hipMemcpyKind.hipMemcpyHostToDevice))

n = 5000
idx = np.random.default_rng(11).integers(0, 1000, n).astype(np.int32)
idx_d, out_d = hip_check(hip.hipMalloc(idx.nbytes)), hip_check(hip.hipMalloc(idx.nbytes))
stream = hip_check(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
start, stop = hip_check(hip.hipEventCreate()), hip_check(hip.hipEventCreate())
calls = []
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
tag = ctypes.c_int(1234)


@CALLBACK
def on_done(stream_handle, status, user_data):
    calls.append((status, ctypes.cast(user_data, ctypes.POINTER(ctypes.c_int))[0]))


HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
host_calls = []
host_fn = HOSTFN(lambda user_data: host_calls.append(user_data))

hip_check(hip.hipEventRecord(start, stream))
hip_check(hip.hipMemcpyAsync(idx_d, idx, idx.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice, stream))
hip_check(hip.hipMemsetAsync(out_d, 0, idx.nbytes, stream))
for _ in range(2):
    hip_check(hip.hipModuleLaunchKernel(kernel, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, None,
                                        (out_d, idx_d, ctypes.c_int(n))))
hip_check(hip.hipStreamAddCallback(stream, ctypes.cast(on_done, ctypes.c_void_p), ctypes.addressof(tag), 0))
hip_check(hip.hipLaunchHostFunc(stream, host_fn, 77))
hip_check(hip.hipEventRecord(stop, stream))
hip_check(hip.hipEventSynchronize(stop))
hip_check(hip.hipStreamSynchronize(stream))
assert calls == [(0, 1234)] and host_calls == [77], (calls, host_calls)
assert hip_check(hip.hipEventElapsedTime(start, stop)) >= 0.0
out = np.empty_like(idx)
hip_check(hip.hipMemcpy(out, out_d, out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
vals = new_table[idx & 3]
nxt = np.empty_like(vals)
for b in range(0, n, 256):                                   # the neighbour within each 256-thread block
    blk = np.zeros(256, np.int32)
    blk[:min(256, n - b)] = vals[b:b + 256]
    nxt[b:b + 256] = np.roll(blk, -1)[:min(256, n - b)]
assert np.array_equal(out, 2 * (vals + nxt))
for ev in (start, stop):
    hip_check(hip.hipEventDestroy(ev))
hip_check(hip.hipStreamDestroy(stream))
hip_check(hip.hipFree(idx_d))
hip_check(hip.hipFree(out_d))
hip_check(hip.hipModuleUnload(module))
hip_check(hiprtc.hiprtcDestroyProgram(prog.createRef()))
print("ok")
