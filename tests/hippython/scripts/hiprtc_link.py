"""hip-python style: -fgpu-rdc bitcode of two HIP sources plus hand-written LLVM IR, linked with the hiprtc link
API into one code object, launched with an extra tuple and checked against numpy."""
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


def rdc_bitcode(name: bytes, source: bytes, arch: bytes) -> bytearray:
    prog = hip_check(hiprtc.hiprtcCreateProgram(source, name, 0, [], []))
    cflags = [b"--offload-arch=" + arch, b"-fgpu-rdc"]
    err, = hiprtc.hiprtcCompileProgram(prog, len(cflags), cflags)
    if err != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        log = bytearray(hip_check(hiprtc.hiprtcGetProgramLogSize(prog)))
        hip_check(hiprtc.hiprtcGetProgramLog(prog, log))
        raise RuntimeError(log.decode())
    assert hip_check(hiprtc.hiprtcGetCodeSize(prog)) == 0          # rdc stops at bitcode
    bc = bytearray(hip_check(hiprtc.hiprtcGetBitcodeSize(prog)))
    hip_check(hiprtc.hiprtcGetBitcode(prog, bc))
    hip_check(hiprtc.hiprtcDestroyProgram(prog.createRef()))
    return bc


kernel_hip = b"""
__device__ float scale_op(float v, float factor);   // LLVM IR below
__device__ float shift_op(float v);                 // second HIP source
extern "C" __global__ void scale(float arr[], float factor, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) arr[i] = shift_op(scale_op(arr[i], factor));
}
"""
shift_hip = b"__device__ float shift_op(float v) { return expf(v) - 1.0f; }\n"
scale_ll = b"""
target triple = "amdgcn-amd-amdhsa"
define hidden float @_Z8scale_opff(float %v, float %f) {
  %m = fmul float %v, %f
  %a = fadd float %m, 0.5
  ret float %a
}
"""
props = hip.hipDeviceProp_t()
hip_check(hip.hipGetDeviceProperties(props, 0))
arch = props.gcnArchName
inputs = [(b"kernel", rdc_bitcode(b"kernel", kernel_hip, arch)), (b"shift", rdc_bitcode(b"shift", shift_hip, arch)),
          (b"scale_op", scale_ll)]
link_state = hip_check(hiprtc.ext.hiprtcLinkCreate2(HIPRTC_JIT_OPTIMIZATION_LEVEL=3))
for name, data in inputs:
    hip_check(hiprtc.hiprtcLinkAddData(link_state, hiprtc.hiprtcJITInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE,
                                       data, len(data), name, 0, None, None))
err, = hiprtc.hiprtcLinkAddData(link_state, hiprtc.hiprtcJITInputType.HIPRTC_JIT_INPUT_PTX, b"x", 1, b"ptx", 0,
                                None, None)
assert err == hiprtc.hiprtcResult.HIPRTC_ERROR_INVALID_INPUT
code, code_size = hip_check(hiprtc.hiprtcLinkComplete(link_state))
assert code_size > 0
module = hip_check(hip.hipModuleLoadData(code))
hip_check(hiprtc.hiprtcLinkDestroy(link_state))
kernel = hip_check(hip.hipModuleGetFunction(module, b"scale"))

n = 3000
x = np.random.default_rng(3).uniform(-1, 1, n).astype(np.float32)
xd = hip_check(hip.hipMalloc(x.nbytes))
hip_check(hip.hipMemcpy(xd, x, x.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
hip_check(hip.hipModuleLaunchKernel(kernel, (n + 255) // 256, 1, 1, 256, 1, 1, sharedMemBytes=0, stream=None,
                                    kernelParams=None, extra=(xd, ctypes.c_float(1.75), ctypes.c_int(n))))
hip_check(hip.hipDeviceSynchronize())
y = np.empty_like(x)
hip_check(hip.hipMemcpy(y, xd, y.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
ref = np.expm1((x.astype(np.float64) * np.float32(1.75)).astype(np.float32) + 0.5)
assert np.allclose(y, ref, rtol=2e-6, atol=2e-6), np.abs(y - ref).max()
hip_check(hip.hipFree(xd))
hip_check(hip.hipModuleUnload(module))
print("ok")
