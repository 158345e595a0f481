"""hip-python style: hiprtc compile with options and headers, lowered names, extra tuples, kernelParams."""
import array
import ctypes
import math
import random

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


source = b"""\
#include "bias.h"
extern "C" __global__ void scale_vector(float factor, int n, short unused1, int unused2, float unused3, float *x) {
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  if (tid < n) x[tid] = x[tid] * factor + BIAS + (float)unused1 + unused3;
}
namespace ns {
template <typename T, int K> __global__ void poly(T* y, const T* x, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) { T v = x[i]; y[i] = v * v * T(K) - sin(v); }
}
}
"""
prog = hip_check(hiprtc.hiprtcCreateProgram(source, b"scale_vector", 1, [b"#define BIAS SCALE_BIAS\n"], [b"bias.h"]))
for expr in (b"ns::poly<float, 3>", b"&ns::poly<double, 2>"):
    hip_check(hiprtc.hiprtcAddNameExpression(prog, expr))
props = hip.hipDeviceProp_t()
hip_check(hip.hipGetDeviceProperties(props, 0))
cflags = [b"--offload-arch=" + props.gcnArchName, b"-DSCALE_BIAS=0.25f", b"-ffp-contract=off"]
err, = hiprtc.hiprtcCompileProgram(prog, len(cflags), cflags)
if err != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
    log_size = hip_check(hiprtc.hiprtcGetProgramLogSize(prog))
    log = bytearray(log_size)
    hip_check(hiprtc.hiprtcGetProgramLog(prog, log))
    raise RuntimeError(log.decode())
code_size = hip_check(hiprtc.hiprtcGetCodeSize(prog))
code = bytearray(code_size)
hip_check(hiprtc.hiprtcGetCode(prog, code))
module = hip_check(hip.hipModuleLoadData(code))
kernel = hip_check(hip.hipModuleGetFunction(module, b"scale_vector"))

n = 1000
x_h = array.array("f", [random.random() for _ in range(n)])
num_bytes = x_h.itemsize * len(x_h)
x_d = hip_check(hip.hipMalloc(num_bytes))
hip_check(hip.hipMemcpy(x_d, x_h, num_bytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
factor = 1.23
x_expected = np.frombuffer(x_h, np.float32) * np.float32(factor) + np.float32(0.25) + np.float32(5) + np.float32(5.6)
block = hip.dim3(x=32)
grid = hip.dim3(math.ceil(n / block.x))
hip_check(hip.hipModuleLaunchKernel(kernel, *grid, *block, sharedMemBytes=0, stream=None, kernelParams=None,
                                    extra=(ctypes.c_float(factor), ctypes.c_int(n), ctypes.c_short(5),
                                           ctypes.c_int(2), ctypes.c_float(5.6), x_d)))
hip_check(hip.hipMemcpy(x_h, x_d, num_bytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert np.allclose(np.frombuffer(x_h, np.float32), x_expected, rtol=1e-6), "scale_vector"

# lowered names of the template instantiations, launched through kernelParams (void**)
for expr, dtype, k in ((b"ns::poly<float, 3>", np.float32, 3), (b"&ns::poly<double, 2>", np.float64, 2)):
    name = hip_check(hiprtc.hiprtcGetLoweredName(prog, expr))
    assert str(name).startswith("_ZN2ns4poly"), name
    f = hip_check(hip.hipModuleGetFunction(module, name))
    xs = np.linspace(-2, 2, n).astype(dtype)
    xd = hip_check(hip.hipMalloc(xs.nbytes))
    yd = hip_check(hip.hipMalloc(xs.nbytes))
    hip_check(hip.hipMemcpy(xd, xs, xs.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    args = [ctypes.c_void_p(int(yd)), ctypes.c_void_p(int(xd)), ctypes.c_int(n)]
    params = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
    hip_check(hip.hipModuleLaunchKernel(f, *grid, *block, 0, None, params, None))
    ys = np.empty_like(xs)
    hip_check(hip.hipMemcpy(ys, yd, ys.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    ref = xs.astype(np.float64) ** 2 * k - np.sin(xs.astype(np.float64))
    assert np.allclose(ys, ref, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5 if dtype == np.float32 else 0)
    hip_check(hip.hipFree(xd))
    hip_check(hip.hipFree(yd))
err, name = hiprtc.hiprtcGetLoweredName(prog, b"ns::poly<int, 1>")
assert err == hiprtc.hiprtcResult.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID and name is None

# a compile error: the log says why
bad = hip_check(hiprtc.hiprtcCreateProgram(b"__global__ void k() { not_declared(); }", b"bad", 0, [], []))
err, = hiprtc.hiprtcCompileProgram(bad, 0, [])
assert err == hiprtc.hiprtcResult.HIPRTC_ERROR_COMPILATION
log = bytearray(hip_check(hiprtc.hiprtcGetProgramLogSize(bad)))
hip_check(hiprtc.hiprtcGetProgramLog(bad, log))
assert b"not_declared" in log, log
hip_check(hiprtc.hiprtcDestroyProgram(bad.createRef()))
hip_check(hip.hipFree(x_d))
hip_check(hip.hipModuleUnload(module))
hip_check(hiprtc.hiprtcDestroyProgram(prog.createRef()))
print("ok")
