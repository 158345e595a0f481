"""pyhip.hiprtc beyond the scripts: failure codes, the compile cache, bundled bitcode and archives of bundles as
link inputs, and a clear error when no compiler is installed."""
import ctypes
import subprocess
import time

import numpy as np
import pytest

from pyhip import hip, hiprtc
from pyhip.hiprtc import toolchain as tc_mod

from conftest import require_tool

R = hiprtc.hiprtcResult
IT = hiprtc.hiprtcJITInputType


def ok(ret):
    assert ret[0] == 0, (ret, hiprtc.last_exception())
    return ret[1] if len(ret) == 2 else ret[1:]


def compiled(src: bytes, *opts: bytes):
    prog = ok(hiprtc.hiprtcCreateProgram(src, b"t.hip", 0, [], []))
    err, = hiprtc.hiprtcCompileProgram(prog, len(opts), list(opts))
    return prog, err


def test_failure_codes():
    assert hiprtc.hiprtcCreateProgram(b"", b"x", 0, [], [])[0] == R.HIPRTC_ERROR_INVALID_INPUT
    assert hiprtc.hiprtcCreateProgram(b"int x;", b"x", 2, [b"a"], [b"a.h"])[0] == R.HIPRTC_ERROR_INVALID_INPUT
    with pytest.raises(TypeError):                            # hip-python: the 5 parameters are required
        hiprtc.hiprtcCreateProgram(b"int x;", b"x")
    with pytest.raises(TypeError):
        hiprtc.hiprtcGetErrorString(6)
    prog = ok(hiprtc.hiprtcCreateProgram(b"__global__ void k(int* p) { *p = 1; }", b"k", 0, [], []))
    assert hiprtc.hiprtcGetLoweredName(prog, b"k")[0] == R.HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION
    ok(hiprtc.hiprtcAddNameExpression(prog, b"k"))
    ok(hiprtc.hiprtcCompileProgram(prog, 0, None))
    assert hiprtc.hiprtcAddNameExpression(prog, b"k")[0] == R.HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION
    assert str(ok(hiprtc.hiprtcGetLoweredName(prog, b"k"))) == "_Z1kPi"
    assert hiprtc.hiprtcGetBitcodeSize(prog)[0] == R.HIPRTC_ERROR_INVALID_PROGRAM      # not compiled -fgpu-rdc
    assert hiprtc.hiprtcGetCode(prog, None)[0] == R.HIPRTC_ERROR_INVALID_INPUT
    small = bytearray(16)                                  # a short Python buffer is never overrun
    ok(hiprtc.hiprtcGetCode(prog, small))
    assert small[:4] == b"\x7fELF"
    ok(hiprtc.hiprtcDestroyProgram(prog))
    assert hiprtc.hiprtcGetCodeSize(prog)[0] == R.HIPRTC_ERROR_INVALID_PROGRAM
    state = ok(hiprtc.hiprtcLinkCreate(0, None, None))
    assert hiprtc.hiprtcLinkComplete(state)[0] == R.HIPRTC_ERROR_LINKING
    assert hiprtc.hiprtcLinkAddFile(state, IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, b"/nonexistent.bc", 0, None, None)[0] \
        == R.HIPRTC_ERROR_PROGRAM_CREATION_FAILURE
    assert hiprtc.hiprtcLinkAddData(state, IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, b"junk", 0, b"j", 0, None, None)[0] \
        == R.HIPRTC_ERROR_INVALID_INPUT
    ok(hiprtc.hiprtcLinkAddData(state, IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, b"not llvm", 8, b"j", 0, None, None))
    err, code, size = hiprtc.hiprtcLinkComplete(state)
    assert err == R.HIPRTC_ERROR_LINKING and code is None
    ok(hiprtc.hiprtcLinkDestroy(state))
    with pytest.raises(TypeError):                         # input_type must be a hiprtcJITInputType
        hiprtc.hiprtcLinkAddData(state, 100, b"x", 1, b"x", 0, None, None)
    assert hiprtc.hiprtcLinkCreate(1, [hiprtc.hiprtcJIT_option.HIPRTC_JIT_MAX_REGISTERS], [])[0] == \
        R.HIPRTC_ERROR_INVALID_OPTION


def test_cache_keys_on_source_and_options():
    src = b'extern "C" __global__ void k(int* p) { p[threadIdx.x] = VALUE * (int)threadIdx.x; }'
    codes = {}
    for value in (b"3", b"5", b"3"):
        t = time.perf_counter()
        prog, err = compiled(src, b"-DVALUE=" + value)
        assert err == 0
        code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
        ok(hiprtc.hiprtcGetCode(prog, code))
        codes.setdefault(value, []).append((bytes(code), time.perf_counter() - t))
        mod = ok(hip.hipModuleLoadData(code))
        f = ok(hip.hipModuleGetFunction(mod, b"k"))
        d = ok(hip.hipMalloc(256))
        ok(hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, None, None, (d,)))
        out = np.zeros(64, np.int32)
        ok(hip.hipMemcpy(out, d, 256, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        assert np.array_equal(out, int(value) * np.arange(64))
        ok(hip.hipFree(d))
        ok(hip.hipModuleUnload(mod))
    assert codes[b"3"][0][0] == codes[b"3"][1][0] != codes[b"5"][0][0]
    assert codes[b"3"][1][1] < 0.5                         # the repeat is served from the cache


def test_bundled_bitcode_and_archives_link(tmp_path):
    arch = str(ok(hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeGcnArch, 0)))
    props = hip.hipDeviceProp_t()
    ok(hip.hipGetDeviceProperties(props, 0))
    target = props.gcnArchName.decode()
    kern, err = compiled(b'__device__ int f(int);\nextern "C" __global__ void k(int* p) { p[threadIdx.x] = '
                         b'f((int)threadIdx.x); }', b"-fgpu-rdc")
    assert err == 0 and arch
    lib, err = compiled(b"__device__ int f(int v) { return v * v + 7; }", b"-fgpu-rdc")
    assert err == 0
    blobs = []
    for prog in (kern, lib):
        bc = bytearray(ok(hiprtc.hiprtcGetBitcodeSize(prog)))
        ok(hiprtc.hiprtcGetBitcode(prog, bc))
        blobs.append(bytes(bc))
    (tmp_path / "host.bc").write_bytes(b"")
    (tmp_path / "dev.bc").write_bytes(blobs[1])
    subprocess.run([require_tool("clang-offload-bundler-19"), "-type=bc",
                    f"-targets=host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--{target}",
                    f"-input={tmp_path / 'host.bc'}", f"-input={tmp_path / 'dev.bc'}",
                    f"-output={tmp_path / 'lib.bc'}"], check=True, capture_output=True)
    bundled = (tmp_path / "lib.bc").read_bytes()
    assert bundled.startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    subprocess.run([require_tool("llvm-ar-19"), "rc", str(tmp_path / "libf.a"), str(tmp_path / "lib.bc")],
                   check=True, capture_output=True)
    for kind, data in ((IT.HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE, bundled),
                       (IT.HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE, (tmp_path / "libf.a").read_bytes())):
        state = ok(hiprtc.hiprtcLinkCreate(0, None, None))
        ok(hiprtc.hiprtcLinkAddData(state, IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, blobs[0], len(blobs[0]), b"k", 0, None,
                                    None))
        ok(hiprtc.hiprtcLinkAddData(state, kind, data, len(data), b"f", 0, None, None))
        code, size = ok(hiprtc.hiprtcLinkComplete(state))
        mod = ok(hip.hipModuleLoadData(code))
        ok(hiprtc.hiprtcLinkDestroy(state))
        f = ok(hip.hipModuleGetFunction(mod, b"k"))
        d = ok(hip.hipMalloc(256))
        ok(hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, None, None, (d,)))
        out = np.zeros(64, np.int32)
        ok(hip.hipMemcpy(out, d, 256, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        assert np.array_equal(out, np.arange(64) ** 2 + 7), kind
        ok(hip.hipFree(d))
        ok(hip.hipModuleUnload(mod))


def test_without_a_compiler_the_log_says_what_to_install(monkeypatch):
    monkeypatch.setattr(tc_mod, "_toolchain", None)
    monkeypatch.setattr(tc_mod, "_toolchain_error", None)
    monkeypatch.setenv("PYHIP_HIPRTC_CLANG", "/nonexistent/clang")
    prog, err = compiled(b"__global__ void k() {}")
    assert err == R.HIPRTC_ERROR_COMPILATION
    log = bytearray(ok(hiprtc.hiprtcGetProgramLogSize(prog)))
    ok(hiprtc.hiprtcGetProgramLog(prog, log))
    assert b"apt-get install clang-15" in log and b"rocm-device-libs" in log
    assert ok(hiprtc.hiprtcGetCodeSize(prog)) == 0
    state = ok(hiprtc.hiprtcLinkCreate(0, None, None))
    ok(hiprtc.hiprtcLinkAddData(state, IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, b"x", 1, b"x", 0, None, None))
    assert hiprtc.hiprtcLinkComplete(state)[0] == R.HIPRTC_ERROR_LINKING
    monkeypatch.setattr(tc_mod, "_toolchain_error", None)
    monkeypatch.delenv("PYHIP_HIPRTC_CLANG")
    monkeypatch.setenv("PYHIP_HIPRTC_DEVICE_LIBS", "/nonexistent")
    prog, err = compiled(b"__global__ void k() {}")
    log = bytearray(ok(hiprtc.hiprtcGetProgramLogSize(prog)))
    ok(hiprtc.hiprtcGetProgramLog(prog, log))
    assert err == R.HIPRTC_ERROR_COMPILATION and b"device libraries" in log
    monkeypatch.setattr(tc_mod, "_toolchain_error", None)   # the real toolchain is found again afterwards


def test_pointer_types_round_trip():
    p = hip.Pointer(ctypes.c_void_p(0x1234))
    ref = p.createRef()
    assert int(p) == 0x1234 and ctypes.c_void_p.from_address(int(ref)).value == 0x1234 and p[16]._ptr == 0x1244
    buf = bytearray(b"abc")
    assert int(hip.Pointer(buf)) == ctypes.addressof((ctypes.c_char * 3).from_buffer(buf))
    d = ok(hip.hipMalloc(64))
    assert int(hip.Pointer(d)) == int(d) == d.__cuda_array_interface__["data"][0]
    assert int(hip.DeviceArray(d)) == int(d)
    name = ok(hip.hipGetErrorName(hip.hipError_t.hipErrorOutOfMemory))
    assert str(name) == "hipErrorOutOfMemory" and name[0] == "h" and ctypes.string_at(int(name)) == bytes(name)
    ok(hip.hipFree(d))


# LLVM IR in a newer LLVM's syntax (memory(...) attributes, as hip-python's hiprtc_linking_llvm_ir.py writes it):
# clang-15 cannot read it, so the link falls back to a newer clang, whose default code object version (5) is not
# the one ROCm 5.2's device libraries were linked for (4)
NEWER_IR = b"""
target triple = "amdgcn-amd-amdhsa"
define hidden void @_Z8scale_opPff(ptr nocapture %0, float %1) local_unnamed_addr #0 {
  %3 = tail call i32 @llvm.amdgcn.workitem.id.x()
  %4 = zext i32 %3 to i64
  %5 = getelementptr inbounds float, ptr %0, i64 %4
  %6 = load float, ptr %5, align 4
  %7 = fmul contract float %6, %1
  store float %7, ptr %5, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x() #1
attributes #0 = { mustprogress nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
"""


def test_link_keeps_the_device_libraries_code_object_version(tmp_path, capfd):
    """Device printf (hostcall) in rdc bitcode linked with newer LLVM IR: the linked code object has the code
    object version the device libraries assume, so printf finds its hostcall buffer (it read address 0x18 of a
    V5 kernel's implicit arguments before)."""
    src = (b'__device__ void scale_op(float arr[], float factor);\n'
           b'extern "C" __global__ void scale(float arr[], float factor) {\n'
           b'  scale_op(arr, factor); unsigned i = threadIdx.x; printf("v%u=%f\\n", i, arr[i]); }\n')
    prog, err = compiled(src, b"-fgpu-rdc")
    assert err == 0
    bc = bytearray(ok(hiprtc.hiprtcGetBitcodeSize(prog)))
    ok(hiprtc.hiprtcGetBitcode(prog, bc))
    state = ok(hiprtc.hiprtcLinkCreate(0, None, None))
    for name, data in ((b"k", bytes(bc)), (b"ir", NEWER_IR)):
        ok(hiprtc.hiprtcLinkAddData(state, IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, data, len(data), name, 0, None, None))
    code, size = ok(hiprtc.hiprtcLinkComplete(state))
    co = bytes((ctypes.c_char * size).from_address(int(code)))
    (tmp_path / "linked.co").write_bytes(co)
    notes = subprocess.run([require_tool("llvm-readelf-19"), "--notes", str(tmp_path / "linked.co")],
                           capture_output=True, text=True, check=True).stdout
    abi = tc_mod.link_toolchains()[0].code_object_version(hip_arch())
    assert abi and f"amdhsa.version:\n  - 1\n  - {abi - 3}" in notes          # COV4: 1.1, COV5: 1.2
    mod = ok(hip.hipModuleLoadData(code))
    ok(hiprtc.hiprtcLinkDestroy(state))
    f = ok(hip.hipModuleGetFunction(mod, b"scale"))
    x = np.random.default_rng(7).uniform(1, 2, 40).astype(np.float32)
    d = ok(hip.hipMalloc(x.nbytes))
    ok(hip.hipMemcpy(d, x, x.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    capfd.readouterr()
    ok(hip.hipModuleLaunchKernel(f, 1, 1, 1, 40, 1, 1, 0, None, None, (d, ctypes.c_float(3.0))))
    ok(hip.hipDeviceSynchronize())
    y = np.empty_like(x)
    ok(hip.hipMemcpy(y, d, y.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(y, x * np.float32(3.0))
    printed = dict(line.split("=") for line in capfd.readouterr().out.split())
    assert {int(k[1:]): float(v) for k, v in printed.items()} == \
        {i: float(f"{v:f}") for i, v in enumerate(y.astype(np.float64))}
    ok(hip.hipFree(d))
    ok(hip.hipModuleUnload(mod))


def hip_arch() -> str:
    props = hip.hipDeviceProp_t()
    ok(hip.hipGetDeviceProperties(props, 0))
    return props.gcnArchName.decode().split(":")[0]
