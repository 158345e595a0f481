"""``pyhip.hip``: HIP's runtime API, function for function, in hip-python's conventions.

Every call returns a tuple: ``(err,)`` or ``(err, value, ...)``, where ``err`` is a :class:`hipError_t`.
Names accept ``str`` or ``bytes``; device pointers are objects usable with ``int()``, and plain ints are
accepted wherever a pointer is.  Like HIP 5.2, each call stores its result as the thread's last error.
"""
from __future__ import annotations

from .._hip_enums import (hipDeviceAttribute_t, hipError_t, hipFuncAttribute, hipFunction_attribute,
                          hipFuncCache_t, hipJitOption, hipLimit_t, hipMemcpyKind, hipMemoryType,
                          hipSharedMemConfig)
from ..errors import HipError, error_name
from ..runtime import ops
from ..runtime.context import hipStreamPerThread, runtime
from ..runtime.memory import DevicePointer, HostPointer
from ..runtime.properties import device_attribute
from ..runtime.stream import (hipEventBlockingSync, hipEventDefault, hipEventDisableTiming,
                              hipEventInterprocess, hipStreamDefault, hipStreamNonBlocking)
from ._api import as_str, get_last_error, hip_api, last_exception
from .launch import (HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END,
                     hipFuncGetAttribute, hipFuncGetAttributes, hipModuleGetFunction, hipModuleGetGlobal,
                     hipModuleLaunchKernel, hipModuleLoad, hipModuleLoadData, hipModuleLoadDataEx,
                     hipModuleUnload, hipOccupancyMaxActiveBlocksPerMultiprocessor,
                     hipOccupancyMaxPotentialBlockSize)
from .streams import (hipEventCreate, hipEventCreateWithFlags, hipEventDestroy, hipEventElapsedTime,
                      hipEventQuery, hipEventRecord, hipEventSynchronize, hipLaunchHostFunc,
                      hipStreamAddCallback, hipStreamCreate, hipStreamCreateWithFlags,
                      hipStreamCreateWithPriority, hipStreamDestroy, hipStreamQuery, hipStreamSynchronize,
                      hipStreamWaitEvent)

from .breadth import *  # noqa: E402,F401,F403  (pitched/3-D memory, pointers, devices, peers, graphs...)

HIP_VERSION = 50221153
hipHostMallocDefault = 0
hipHostMallocPortable = 1
hipHostMallocMapped = 2
hipHostMallocWriteCombined = 4


# -- initialisation, versions, errors ------------------------------------------------------------
@hip_api()
def hipInit(flags: int = 0):
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


def hipGetErrorName(err):
    return (error_name(err).encode(),)


def hipGetErrorString(err):
    return (error_name(err).encode(),)      # HIP 5.2 returns the enumerator name here too


# -- devices -----------------------------------------------------------------------------------------
@hip_api(1)
def hipGetDeviceCount():
    n = len(runtime().devices)
    if n == 0:
        raise HipError(hipError_t.hipErrorNoDevice, "no devices")
    return n


@hip_api()
def hipSetDevice(device: int):
    runtime().set_device(int(device))


@hip_api(1)
def hipGetDevice():
    return runtime().current_index()


@hip_api()
def hipDeviceSynchronize():
    runtime().device().synchronize()


@hip_api()
def hipDeviceReset():
    runtime().device().reset()


@hip_api(1)
def hipGetDeviceProperties(device: int):
    return runtime().device(int(device)).props


@hip_api(1)
def hipDeviceGetAttribute(attr, device: int):
    return device_attribute(runtime().device(int(device)).props, int(attr))


# -- memory ------------------------------------------------------------------------------------------
@hip_api(1)
def hipMalloc(size: int):
    return ops.malloc(size)


@hip_api()
def hipFree(ptr):
    ops.free(ptr)


@hip_api(1)
def hipHostMalloc(size: int, flags: int = 0):
    return ops.host_malloc(size, flags)


@hip_api(1)
def hipMallocHost(size: int):
    return ops.host_malloc(size)


@hip_api()
def hipHostFree(ptr):
    ops.host_free(ptr)


@hip_api()
def hipMemcpy(dst, src, sizeBytes: int, kind):
    ops.memcpy(dst, src, sizeBytes, kind, None, sync=True)


@hip_api()
def hipMemcpyAsync(dst, src, sizeBytes: int, kind, stream=None):
    ops.memcpy(dst, src, sizeBytes, kind, stream, sync=False)


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
def hipMemset(dst, value: int, sizeBytes: int):
    _s8(dst, value, sizeBytes)


@hip_api()
def hipMemsetAsync(dst, value: int, sizeBytes: int, stream=None):
    _a8(dst, value, sizeBytes, stream)


@hip_api()
def hipMemsetD8(dst, value: int, count: int):
    _s8(dst, value, count)


@hip_api()
def hipMemsetD8Async(dst, value: int, count: int, stream=None):
    _a8(dst, value, count, stream)


@hip_api()
def hipMemsetD16(dst, value: int, count: int):
    _s16(dst, value, count)


@hip_api()
def hipMemsetD16Async(dst, value: int, count: int, stream=None):
    _a16(dst, value, count, stream)


@hip_api()
def hipMemsetD32(dst, value: int, count: int):
    _s32(dst, value, count)


@hip_api()
def hipMemsetD32Async(dst, value: int, count: int, stream=None):
    _a32(dst, value, count, stream)


@hip_api(2)
def hipMemGetInfo():
    return ops.mem_get_info()


__all__ = [n for n in dir() if n.startswith(("hip", "HIP_"))] + ["DevicePointer", "HostPointer", "last_exception"]
