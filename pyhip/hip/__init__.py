"""``pyhip.hip``: HIP's runtime API, function for function, in hip-python's conventions.

Every call returns a tuple: ``(err,)`` or ``(err, value, ...)``, where ``err`` is a :class:`hipError_t`.
Names accept ``str`` or ``bytes``; device pointers are objects usable with ``int()``, and plain ints are
accepted wherever a pointer is.  Like HIP 5.2, each call stores its result as the thread's last error.
"""
from __future__ import annotations

from .._hip_enums import (HIPaddress_mode, HIPaddress_mode_enum, HIPfilter_mode, HIPfilter_mode_enum,
                          HIPresourcetype, HIPresourcetype_enum, HIPresourceViewFormat, HIPresourceViewFormat_enum,
                          hipArray_Format, hipChannelFormatKind, hipDeviceAttribute_t, hipError_t,
                          hipFuncAttribute, hipFunction_attribute, hipFuncCache_t, hipJitOption, hipLimit_t,
                          hipMemcpyKind, hipMemoryType, hipResourceType, hipResourceViewFormat, hipSharedMemConfig,
                          hipTextureAddressMode, hipTextureFilterMode, hipTextureReadMode)
from ..errors import HipError, error_name
from ..runtime import ops
from ..runtime.context import hipStreamPerThread, runtime
from ..runtime.idlecopy import copy_now, fill_now
from ..runtime.memory import DevicePointer, HostPointer
from ..runtime.properties import device_attribute
from ..runtime.module import Function, Module
from ..runtime.event import (Event, hipEventBlockingSync, hipEventDefault, hipEventDisableTiming,
                             hipEventInterprocess)
from ..runtime.stream import Stream, hipStreamDefault, hipStreamNonBlocking
from . import structs
from ._api import SUCCESS, as_str, fast_path_of, get_last_error, hip_api, last_exception
from .pointers import HostMemory
from ..runtime.kernargs import HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END
from .launch import (hipFuncGetAttribute, hipLaunchCooperativeKernel, hipFuncGetAttributes, hipModuleGetFunction, hipModuleGetGlobal,
                     hipModuleLaunchKernel, hipModuleLoad, hipModuleLoadData, hipModuleLoadDataEx,
                     hipModuleUnload, hipOccupancyMaxActiveBlocksPerMultiprocessor,
                     hipOccupancyMaxPotentialBlockSize)
from .texture_types import (HIP_RESOURCE_DESC, HIP_RESOURCE_VIEW_DESC, HIP_TEXTURE_DESC, __hip_surface,
                            __hip_texture, hipArray_const_t, hipArray_t, hipMipmappedArray_const_t,
                            hipMipmappedArray_t, hipSurfaceObject_t, hipTextureObject_t, make_hipExtent,
                            make_hipPitchedPtr, make_hipPos)
from .texrefs import (hipBindTexture, hipBindTexture2D, hipBindTextureToArray, hipBindTextureToMipmappedArray,
                      hipGetTextureAlignmentOffset, hipModuleGetTexRef, hipTexRefGetAddress, hipTexRefGetAddressMode,
                      hipTexRefGetFilterMode, hipTexRefGetFlags, hipTexRefGetFormat, hipTexRefSetAddress,
                      hipTexRefSetAddress2D, hipTexRefSetAddressMode, hipTexRefSetArray, hipTexRefSetFilterMode,
                      hipTexRefSetFlags, hipTexRefSetFormat, hipUnbindTexture)
from .textures import (hipArray3DCreate, hipArrayCreate, hipArrayDestroy, hipCreateChannelDesc,
                       hipCreateTextureObject, hipDestroyTextureObject, hipFreeArray, hipFreeMipmappedArray,
                       hipGetChannelDesc, hipGetMipmappedArrayLevel, hipGetTextureObjectResourceDesc,
                       hipGetTextureObjectResourceViewDesc, hipGetTextureObjectTextureDesc, hipMalloc3DArray,
                       hipMallocArray, hipMallocMipmappedArray, hipMemcpy2DFromArray, hipMemcpy2DFromArrayAsync,
                       hipMemcpy2DToArray, hipMemcpy2DToArrayAsync, hipMemcpy3D, hipMemcpy3DAsync, hipMemcpyAtoH,
                       hipMemcpyFromArray, hipMemcpyHtoA, hipMemcpyToArray, hipMipmappedArrayCreate,
                       hipMipmappedArrayDestroy, hipMipmappedArrayGetLevel)
from .driver_textures import (hipTexObjectCreate, hipTexObjectDestroy, hipTexObjectGetResourceDesc,
                              hipTexObjectGetResourceViewDesc, hipTexObjectGetTextureDesc)
from . import ext  # noqa: F401  (HIP functions hip-python lacks: hipCreateSurfaceObject, hipDestroySurfaceObject)
from .ipc import (hipIpcCloseMemHandle, hipIpcGetEventHandle, hipIpcGetMemHandle, hipIpcOpenEventHandle,
                  hipIpcOpenMemHandle)
from .streams import (hipEventCreate, hipEventCreateWithFlags, hipEventDestroy, hipEventElapsedTime,
                      hipEventQuery, hipEventRecord, hipEventSynchronize, hipLaunchHostFunc,
                      hipStreamAddCallback, hipStreamCreate, hipStreamCreateWithFlags,
                      hipStreamCreateWithPriority, hipStreamDestroy, hipStreamQuery, hipStreamSynchronize,
                      hipStreamWaitEvent, hipStreamGetFlags, hipStreamGetPriority, hipStreamWaitValue32,
                      hipStreamWaitValue64, hipStreamWriteValue32, hipStreamWriteValue64)

from ._constants import *  # noqa: F401,F403  (HIP 5.2's #define constants, generated)
from ._constants import HIP_VERSION
from .pointers import CStr, DeviceArray, NDBuffer, Pointer
from .structs import *  # noqa: F401,F403  (hipDeviceProp_t, dim3, ...: HIP 5.2 layouts)
from .structs import fill_device_prop

# hip-python's handle types: pyhip's runtime objects (int() is the handle, as_c_void_p() its pointer)
ihipStream_t = hipStream_t = Stream
ihipEvent_t = hipEvent_t = Event
ihipModule_t = hipModule_t = Module
ihipModuleSymbol_t = hipFunction_t = Function

ROCM_VERSION_TUPLE = rocm_version_tuple = (5, 2, 3)
ROCM_VERSION = 50200003                 # hip-python's encoding: major * 10**7 + minor * 10**5 + patch (5.4.3: 50400003)
ROCM_VERSION_NAME = rocm_version_name = "5.2.3"
HIP_VERSION_NAME = hip_version_name = \
    f"{HIP_VERSION_MAJOR}.{HIP_VERSION_MINOR}.{HIP_VERSION_PATCH}-{HIP_VERSION_GITHASH.decode()}"   # noqa: F405
HIP_VERSION_TUPLE = hip_version_tuple = (HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH,  # noqa: F405
                                         HIP_VERSION_GITHASH.decode())  # noqa: F405
from .memory import *  # noqa: E402,F401,F403  (copies with streams, peers, pointer attributes, host/managed memory)
from .memory2d import *  # noqa: E402,F401,F403  (pitched and 3-D memory)
from .devices import *  # noqa: E402,F401,F403  (device identity, peers, limits, cache configuration)
from .graphs import *  # noqa: E402,F401,F403  (stream capture and graphs)
from .. import _hip_enums as _enums  # noqa: E402  (hip-python's hip module has every HIP enum)

globals().update({n: v for n, v in vars(_enums).items() if n.startswith("hip") and isinstance(v, type)})


# -- initialisation, versions, errors ------------------------------------------------------------
@hip_api()
def hipInit(flags):
    if flags != 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "hipInit flags must be 0")
    runtime()


@hip_api(1)
def hipDriverGetVersion():
    return HIP_VERSION


@hip_api(1)
def hipRuntimeGetVersion():
    return HIP_VERSION


def hipGetLastError():
    return (get_last_error(reset=True),)


def hipPeekAtLastError():
    return (get_last_error(reset=False),)


def _error_name(err) -> CStr:
    if not isinstance(err, hipError_t):
        raise TypeError("argument 'hip_error' must be of type '_hipError_t__Base'")
    return CStr(error_name(err))


def hipGetErrorName(hip_error):
    """``(hipSuccess, name)``; the name is a CStr (bytes that print as str)."""
    return (hipError_t.hipSuccess, _error_name(hip_error))


def hipGetErrorString(hipError):
    """HIP 5.2 returns the enumerator name here too."""
    return (hipError_t.hipSuccess, _error_name(hipError))


# -- devices -----------------------------------------------------------------------------------------
@hip_api()
def hipSetDevice(deviceId):
    runtime().set_device(deviceId)


@hip_api(1)
def hipGetDevice():
    return runtime().current_index()


@hip_api()
def hipDeviceSynchronize():
    runtime().device().synchronize()


@fast_path_of(hipDeviceSynchronize)
def hipDeviceSynchronize():
    """An armed device (only native launches since a synchronize left it idle) waits in one native call."""
    return SUCCESS if runtime().device().sync_if_armed() else None


@hip_api()
def hipDeviceReset():
    runtime().device().reset()


@hip_api()
def hipGetDeviceProperties(prop, deviceId):
    """Fills ``prop`` (a hipDeviceProp_t, or the address of one) in place."""
    props = runtime().device(deviceId).props
    if prop is None:
        raise HipError(hipError_t.hipErrorInvalidValue, "prop is NULL")
    fill_device_prop(prop, props)


@hip_api(1)
def hipDeviceGetAttribute(attr, deviceId):
    return device_attribute(runtime().device(deviceId).props, int(attr))


# -- memory ------------------------------------------------------------------------------------------
@hip_api(1)
def hipMalloc(size):
    """A DeviceArray: ``configure(typestr=..., shape=...)``, indexing, ``__cuda_array_interface__``."""
    p = ops.malloc(size)
    return DeviceArray.from_allocation(p) if int(p) else None


@hip_api()
def hipFree(ptr):
    ops.free(ptr)


@hip_api(1)
def hipHostMalloc(size, flags):
    """Pinned host memory: a Pointer (real host address, device-visible) with ``.array``, a numpy view."""
    return HostMemory(ops.host_malloc(size, flags))


@hip_api(1)
def hipMallocHost(size):
    return HostMemory(ops.host_malloc(size))


@hip_api()
def hipHostFree(ptr):
    ops.host_free(ptr)


@hip_api()
def hipMemcpy(dst, src, sizeBytes, kind):
    """The direction comes from the pointers, as in ROCm; ``kind`` only matters between two host buffers."""
    ops.memcpy(dst, src, sizeBytes, kind, None, sync=True)


_SIZE_T = 1 << 64


def _copied(dst, src, n, kind, stream, sync):
    """SUCCESS when a copy whose arguments hip-python's checks pass as they are was done at once on an armed,
    idle device (runtime/idlecopy.py) with no argument binding; None: the full path."""
    if type(kind) is hipMemcpyKind and type(n) is int and 0 < n < _SIZE_T and copy_now(dst, src, n, kind, stream, sync):
        return SUCCESS
    return None


def _filled(dst, value, n, stream, sync):
    """Like :func:`_copied` for a byte fill (``value``: a C int)."""
    if type(value) is int and -(1 << 31) <= value < 1 << 31 and type(n) is int and 0 < n < _SIZE_T and \
            fill_now(dst, value, n, 1, stream, sync):
        return SUCCESS
    return None


@fast_path_of(hipMemcpy)
def hipMemcpy(dst, src, sizeBytes, kind):
    return _copied(dst, src, sizeBytes, kind, None, True)


@hip_api()
def hipMemcpyAsync(dst, src, sizeBytes, kind, stream):
    ops.memcpy(dst, src, sizeBytes, kind, stream, sync=False)


@fast_path_of(hipMemcpyAsync)
def hipMemcpyAsync(dst, src, sizeBytes, kind, stream):
    return _copied(dst, src, sizeBytes, kind, stream, False)


def _memset(width):
    def sync(dst, value, count):
        ops.memset(dst, value, count, width, None, sync=True)

    def asynchronous(dst, value, count, stream=None):
        ops.memset(dst, value, count, width, stream, sync=False)
    return sync, asynchronous


_s8, _a8 = _memset(1)
_s16, _a16 = _memset(2)
_s32, _a32 = _memset(4)


@hip_api()
def hipMemset(dst, value, sizeBytes):
    _s8(dst, value, sizeBytes)


@fast_path_of(hipMemset)
def hipMemset(dst, value, sizeBytes):
    return _filled(dst, value, sizeBytes, None, True)


@hip_api()
def hipMemsetAsync(dst, value, sizeBytes, stream):
    _a8(dst, value, sizeBytes, stream)


@fast_path_of(hipMemsetAsync)
def hipMemsetAsync(dst, value, sizeBytes, stream):
    return _filled(dst, value, sizeBytes, stream, False)


@hip_api()
def hipMemsetD8(dest, value, count):
    _s8(dest, value, count)


@hip_api()
def hipMemsetD8Async(dest, value, count, stream):
    _a8(dest, value, count, stream)


@hip_api()
def hipMemsetD16(dest, value, count):
    _s16(dest, value, count)


@hip_api()
def hipMemsetD16Async(dest, value, count, stream):
    _a16(dest, value, count, stream)


@hip_api()
def hipMemsetD32(dest, value, count):
    _s32(dest, value, count)


@hip_api()
def hipMemsetD32Async(dst, value, count, stream):
    _a32(dst, value, count, stream)


@hip_api(2)
def hipMemGetInfo():
    return ops.mem_get_info()


__all__ = [n for n in dir() if n.startswith(("hip", "HIP", "ROCM", "rocm", "ihip", "make_hip")) and n != "hip_api"] + \
    [n for n in structs.__all__ if n not in ("Struct",)] + \
    ["DevicePointer", "HostPointer", "HostMemory", "Pointer", "CStr", "NDBuffer", "DeviceArray", "last_exception",
     "__hip_texture", "__hip_surface", "ext"]
