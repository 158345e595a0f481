"""``pyhip.hip`` modules, functions and launches."""
from __future__ import annotations

import ctypes
import functools
import os

from .._hip_enums import hipFunction_attribute as FA
from ..errors import HipError, hipError_t
from ..hipapi import launch as api
from ..loader.extent import image_at
from ..runtime import pointers
from ..runtime.context import runtime
from ..runtime.fastlaunch import native_configure, native_hml
from ..runtime.module import Function, Module
from ._api import _tls as _api_tls, hip_api
from .packed_args import _entry as extra_layout, parse_extra
from .pointers import Pointer, address_of, as_name
from .structs import classes as _structs


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
    path = os.fspath(fname) if isinstance(fname, os.PathLike) else as_name(fname)
    if not path:                                 # HIP 5.2: no file name and no image is an invalid value
        raise HipError(hipError_t.hipErrorInvalidValue, "empty file name")
    return runtime().load_module(path)


def image_bytes(image) -> bytes:
    """A code object / offload bundle from a buffer (bytes, bytearray, numpy...) or from a bare address (int,
    Pointer, ctypes.c_void_p, what hiprtcLinkComplete returns), whose extent is read from its headers."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    if not hasattr(image, "__hip_pointer__") and not isinstance(image, (int, ctypes.c_void_p)):
        try:
            return bytes(memoryview(image).cast("B"))
        except TypeError:
            pass
    addr = address_of(image)
    pointers.check_host_address(addr)
    return image_at(addr)


@hip_api(1)
def hipModuleLoadData(image):
    return runtime().load_module(image_bytes(image))


@hip_api(1)
def hipModuleLoadDataEx(image, numOptions, options, optionValues):
    return runtime().load_module(image_bytes(image))   # JIT options do not apply to code objects


@hip_api()
def hipModuleUnload(module):
    _module(module).unload()


@hip_api(1)
def hipModuleGetFunction(module, kname):
    return _module(module).function(as_name(kname))


@hip_api(2)
def hipModuleGetGlobal(hmod, name):
    addr, size = _module(hmod).global_var(as_name(name))
    return Pointer(addr), size


def read_kernel_params(func: Function, params) -> bytes:
    """``kernelParams`` as C passes it: the address of a ``void*[n]`` array, one pointer per argument."""
    return func.packer.gather(address_of(params))


def _hipModuleLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes, stream, kernelParams, extra):
    """``extra`` as in hip-python (see hip/packed_args.py); ``kernelParams`` a ``void**`` (address, ctypes array) or,
    as a pyhip extension, a Python list of argument values converted by the kernel's signature."""
    func = _function(f)
    if kernelParams is not None and extra is not None:
        raise HipError(hipError_t.hipErrorInvalidValue, "pass either kernelParams or extra, not both")
    rt = runtime()
    st = rt.resolve_stream(stream)
    grid, block = (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ)
    key = (gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream)
    try:
        hash(key)
    except TypeError:
        key = None
    if extra is not None:
        api.launch(func, st, grid, block, sharedMemBytes, raw=parse_extra(extra), cache_key=key)
    elif kernelParams is not None and not isinstance(kernelParams, (list, tuple)):
        api.launch(func, st, grid, block, sharedMemBytes, raw=read_kernel_params(func, kernelParams), cache_key=key)
    else:
        if func.packer.explicit and kernelParams is None:
            raise HipError(hipError_t.hipErrorInvalidValue, "kernel has parameters but neither kernelParams nor extra was given")
        api.launch(func, st, grid, block, sharedMemBytes, args=list(kernelParams or ()), cache_key=key)


_hipModuleLaunchKernel.__name__ = _hipModuleLaunchKernel.__qualname__ = "hipModuleLaunchKernel"
_hipModuleLaunchKernel = hip_api()(_hipModuleLaunchKernel)      # hip-python's argument checks, by that name


_OK = hipError_t.hipSuccess          # (an enum member read through its class costs ~0.2 µs per launch)
_SUCCESS = (_OK,)
native_configure(Function, ctypes.Array, _api_tls, _OK, _SUCCESS)


def _packed(func, kernelParams, extra):
    """The prepacked explicit arguments of a repeat (``extra``, a ``void**`` kernelParams) as the full path
    reads them, or None when reading them fails (the full path then reports it)."""
    try:
        return parse_extra(extra) if extra is not None else read_kernel_params(func, kernelParams)
    except Exception:
        return None


def hipModuleLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                          stream, kernelParams, extra):
    """A repeat of a launch that went through the runtime with the same function, geometry, shared memory and
    stream — and the same argument types, or a prepacked argument buffer of the same size — is published
    natively (pyhip/runtime/fastlaunch.py); everything else, errors included, takes the full path."""
    # native_hml (native/aql_launch.c): the entry lookup, the null stream's device, the argument values' types,
    # packing and publishing in one call: (hipSuccess,) published, False the full path, None the cases below
    r = native_hml(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream,
                   kernelParams, extra)
    if r is None:
        # an ``extra`` tuple whose types the entry is not bound for yet, prepacked kernelParams (a void**)
        e = f.fast.get((gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream))
        if e is None:                       # another thread dropped it meanwhile
            ok = False
        elif type(extra) is tuple and e.launch_extra(extra, extra_layout):
            ok = True                                                       # hip-python's tuple, packed natively
        else:
            blob = _packed(f, kernelParams, extra)
            ok = blob is not None and e.launch_raw(blob)
        if ok:
            _api_tls.last = _OK
            return _SUCCESS
    elif r:
        return r
    return _hipModuleLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                  stream, kernelParams, extra)


functools.update_wrapper(hipModuleLaunchKernel, _hipModuleLaunchKernel)


def func_attributes(func: Function):
    """``hipFuncAttributes`` of a kernel (HIP 5.2 struct)."""
    k = func.kernel
    a = _structs["hipFuncAttributes"]()
    a.binaryVersion = func.module.code_object.version * 10
    a.cacheModeCA = 0
    # what ROCr counts as a module's constant variables: those in writable sections (its IsConst quirk),
    # hipcc's one-byte __hip_cuid_* markers aside
    a.constSizeBytes = sum(g.size for g in func.module.code_object.globals
                           if g.section in (".bss", ".data") and not g.name.startswith("__hip_cuid_"))
    a.localSizeBytes = k.private_segment_fixed_size
    a.maxDynamicSharedSizeBytes = 65536 - k.group_segment_fixed_size
    a.maxThreadsPerBlock = k.max_flat_workgroup_size
    a.numRegs = k.vgpr_count
    a.preferredShmemCarveout = 0
    a.ptxVersion = a.binaryVersion
    a.sharedSizeBytes = k.group_segment_fixed_size
    return a


@hip_api()
def hipFuncGetAttributes(attr, func):
    """Fills ``attr`` (a hipFuncAttributes, or its address) in place."""
    dst = _structs["hipFuncAttributes"].fromObj(attr) if attr is not None else None
    if dst is None:
        raise HipError(hipError_t.hipErrorInvalidValue, "attr is NULL")
    src = func_attributes(_function(func))
    ctypes.memmove(int(dst), int(src), src.c_sizeof())


@hip_api(1)
def hipFuncGetAttribute(attrib, hfunc):
    a = func_attributes(_function(hfunc))
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
def hipOccupancyMaxActiveBlocksPerMultiprocessor(f, blockSize, dynSharedMemPerBlk):
    func = _function(f)
    if int(blockSize) <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "block size must be positive")
    return _occupancy(func, int(blockSize), int(dynSharedMemPerBlk))


@hip_api(2)
def hipOccupancyMaxPotentialBlockSize(f, dynSharedMemPerBlk, blockSizeLimit):
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


def _dim3(d) -> tuple:
    if hasattr(d, "x"):
        return int(d.x), int(getattr(d, "y", 1)), int(getattr(d, "z", 1))
    t = tuple(int(v) for v in (d if isinstance(d, (tuple, list)) else (d,)))
    return t + (1,) * (3 - len(t))


@hip_api()
def hipLaunchCooperativeKernel(f, gridDim, blockDimX, kernelParams, sharedMemBytes, stream):
    """A cooperative launch (every work-group resident at once; grid-wide sync works).  ``f`` is a
    hipFunction_t (pyhip.hip has no host function pointers); ``kernelParams`` the argument list; the
    dimensions dim3 objects or tuples."""
    from ..runtime.module import Function
    if not isinstance(f, Function):
        raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "not a hipFunction_t")
    api.launch(f, stream, _dim3(gridDim), _dim3(blockDimX), sharedMemBytes, args=list(kernelParams or ()),
               cooperative=True)
