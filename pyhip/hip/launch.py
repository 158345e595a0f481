"""``pyhip.hip`` modules, functions and launches."""
from __future__ import annotations

import os
import struct

from .._hip_enums import hipFunction_attribute as FA
from ..errors import HipError, LoaderError, hipError_t
from ..runtime.context import runtime
from ..runtime.module import Function, Module
from ._api import as_str, hip_api

HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03


def _module(m) -> Module:
    if not isinstance(m, Module):
        raise HipError(hipError_t.hipErrorInvalidHandle, f"not a module: {m!r}")
    if m.unloaded:
        raise HipError(hipError_t.hipErrorNotFound, "module was unloaded")
    return m


def _function(f) -> Function:
    if not isinstance(f, Function):
        raise HipError(hipError_t.hipErrorInvalidResourceHandle, f"not a function: {f!r}")
    return f


@hip_api(1)
def hipModuleLoad(fname):
    path = as_str(fname) if not isinstance(fname, os.PathLike) else os.fspath(fname)
    return Module(runtime().device(), path)


@hip_api(1)
def hipModuleLoadData(image):
    return Module(runtime().device(), bytes(image))


@hip_api(1)
def hipModuleLoadDataEx(image, numOptions: int = 0, options=None, optionValues=None):
    return Module(runtime().device(), bytes(image))   # JIT options do not apply to code objects


@hip_api()
def hipModuleUnload(module):
    _module(module).unload()


@hip_api(1)
def hipModuleGetFunction(module, name):
    return _module(module).function(as_str(name))


@hip_api(2)
def hipModuleGetGlobal(module, name):
    return _module(module).global_var(as_str(name))


def parse_extra(extra) -> bytes:
    """``extra`` = [HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, size,
    HIP_LAUNCH_PARAM_END] (buf: bytes-like; size: int), or simply a packed bytes-like buffer."""
    if isinstance(extra, (bytes, bytearray, memoryview)):
        return bytes(extra)
    items = list(extra)
    if len(items) != 5 or int(items[0]) != HIP_LAUNCH_PARAM_BUFFER_POINTER or \
            int(items[2]) != HIP_LAUNCH_PARAM_BUFFER_SIZE or int(items[4]) != HIP_LAUNCH_PARAM_END:
        raise HipError(hipError_t.hipErrorInvalidValue, "extra must be [BUFFER_POINTER, buf, BUFFER_SIZE, size, END]")
    buf, size = items[1], items[3]
    size = int(size if not isinstance(size, (bytes, bytearray)) else struct.unpack("<Q", size)[0])
    data = bytes(memoryview(buf).cast("B"))
    if size > len(data):
        raise HipError(hipError_t.hipErrorInvalidValue, f"BUFFER_SIZE {size} exceeds the {len(data)}-byte buffer")
    return data[:size]


@hip_api()
def hipModuleLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes=0, stream=None, kernelParams=None, extra=None):
    func = _function(f)
    if kernelParams is not None and extra is not None:
        raise HipError(hipError_t.hipErrorInvalidValue, "pass either kernelParams or extra, not both")
    st = runtime().resolve_stream(stream)
    grid, block = (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ)
    if extra is not None:
        func.launch(st, grid, block, int(sharedMemBytes), raw=parse_extra(extra))
    else:
        params = list(kernelParams) if kernelParams is not None else []
        if func.packer.explicit and kernelParams is None:
            raise HipError(hipError_t.hipErrorInvalidValue, "kernel has parameters but neither kernelParams nor extra was given")
        func.launch(st, grid, block, int(sharedMemBytes), args=params)


class FuncAttributes:
    """``hipFuncAttributes``."""

    def __init__(self, func: Function):
        k = func.kernel
        self.binaryVersion = func.module.code_object.version * 10
        self.cacheModeCA = 0
        # what ROCr counts as a module's constant variables: those in writable sections (its IsConst quirk),
        # hipcc's one-byte __hip_cuid_* markers aside
        self.constSizeBytes = sum(g.size for g in func.module.code_object.globals
                                  if g.section in (".bss", ".data") and not g.name.startswith("__hip_cuid_"))
        self.localSizeBytes = k.private_segment_fixed_size
        self.maxDynamicSharedSizeBytes = 65536 - k.group_segment_fixed_size
        self.maxThreadsPerBlock = k.max_flat_workgroup_size
        self.numRegs = k.vgpr_count
        self.preferredShmemCarveout = 0
        self.ptxVersion = self.binaryVersion
        self.sharedSizeBytes = k.group_segment_fixed_size


@hip_api(1)
def hipFuncGetAttributes(func):
    return FuncAttributes(_function(func))


@hip_api(1)
def hipFuncGetAttribute(attrib, hfunc):
    a = FuncAttributes(_function(hfunc))
    table = {FA.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: a.maxThreadsPerBlock,
             FA.HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: a.sharedSizeBytes,
             FA.HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: a.constSizeBytes,
             FA.HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: a.localSizeBytes,
             FA.HIP_FUNC_ATTRIBUTE_NUM_REGS: a.numRegs, FA.HIP_FUNC_ATTRIBUTE_PTX_VERSION: a.ptxVersion,
             FA.HIP_FUNC_ATTRIBUTE_BINARY_VERSION: a.binaryVersion,
             FA.HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: a.cacheModeCA,
             FA.HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: a.maxDynamicSharedSizeBytes,
             FA.HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: a.preferredShmemCarveout}
    try:
        return table[FA(int(attrib))]
    except (ValueError, KeyError):
        raise HipError(hipError_t.hipErrorInvalidValue, f"unknown function attribute {attrib}") from None


def _occupancy(func: Function, block: int, dyn_shared: int) -> int:
    """Work-groups per CU (runtime/cooperative.py: waves per SIMD from VGPRs × 4 SIMDs, LDS, 32 slots)."""
    from ..runtime.cooperative import blocks_per_cu

    return blocks_per_cu(func.kernel, block, dyn_shared)


@hip_api(1)
def hipOccupancyMaxActiveBlocksPerMultiprocessor(f, blockSize: int, dynSharedMemPerBlk: int = 0):
    func = _function(f)
    if int(blockSize) <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "block size must be positive")
    return _occupancy(func, int(blockSize), int(dynSharedMemPerBlk))


@hip_api(2)
def hipOccupancyMaxPotentialBlockSize(f, dynSharedMemPerBlk: int = 0, blockSizeLimit: int = 0):
    """Returns ``(gridSize, blockSize)``: the block size with the best occupancy, and the grid that
    fills every CU at that occupancy."""
    func = _function(f)
    limit = min(func.kernel.max_flat_workgroup_size, func.device.props.maxThreadsPerBlock)
    if int(blockSizeLimit) > 0:
        limit = min(limit, int(blockSizeLimit))
    best_block, best = 0, -1
    wave = func.kernel.wavefront_size
    for b in range(wave, limit + 1, wave):
        occ = _occupancy(func, b, int(dynSharedMemPerBlk)) * b
        if occ >= best:
            best, best_block = occ, b
    if best_block == 0:
        best_block = limit
    groups = max(1, _occupancy(func, best_block, int(dynSharedMemPerBlk)))
    return groups * func.device.props.multiProcessorCount, best_block
