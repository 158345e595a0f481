"""``pyhip.hip``: the HIP 5.2 API beyond the basics — pitched/3-D memory and its copies and fills, driver-style
and peer copies, pointer attributes, host registration, managed and stream-ordered memory, device queries,
peer access, stream flags and priorities, cooperative launches, stream capture and graph launch.

Parameter names and return tuples follow hip-python (its generated API table); struct parameters are
read and filled through their fields (hip-python's struct objects, or anything with the same attributes:
``hipPitchedPtr.ptr/pitch/xsize/ysize``, ``hipExtent.width/height/depth``, ``hipPos.x/y/z``, ...).
The work is the runtime's (runtime/copies.py, pointers.py, pools.py, peer.py, cooperative.py, graph.py),
shared with the C ABI.
"""
from __future__ import annotations

from .._hip_enums import hipError_t
from ..errors import HipError
from ..runtime import copies, memops, ops, peer, pointers, pools
from ..runtime.context import runtime
from ..runtime.memory import DevicePointer, as_address
from ._api import hip_api


def _invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


def _addr(p) -> int:
    """A pointer's address; a host buffer (numpy array, bytearray...) gives the address of its bytes."""
    a = as_address(p)
    if a is None:
        import numpy as np
        try:
            a = np.frombuffer(memoryview(p).cast("B"), dtype=np.uint8).ctypes.data
        except (TypeError, ValueError):
            raise _invalid(f"{type(p).__name__} is neither a pointer nor a buffer") from None
    return int(a)


def _dim3(d) -> tuple:
    if hasattr(d, "x"):
        return int(d.x), int(getattr(d, "y", 1)), int(getattr(d, "z", 1))
    t = tuple(int(v) for v in (d if isinstance(d, (tuple, list)) else (d,)))
    return t + (1,) * (3 - len(t))


def _get(obj, *names, default=0):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


# -- pitched and 3-D memory ------------------------------------------------------------------------------
def _malloc_pitch(width: int, height: int, depth: int):
    width, height, depth = int(width), int(height), int(depth)
    if width == 0 or height == 0 or depth == 0:
        return DevicePointer(0), 0
    rt = runtime()
    align = rt.device().props.texturePitchAlignment
    pitch = -(-width // align) * align
    p = ops.malloc(pitch * height * depth)
    rt.pitched[int(p)] = (pitch, width, height, depth)
    return p, pitch


@hip_api(2)
def hipMallocPitch(width, height):
    return _malloc_pitch(width, height, 1)


@hip_api()
def hipMalloc3D(pitchedDevPtr, extent):
    p, pitch = _malloc_pitch(extent.width, extent.height, extent.depth)
    pitchedDevPtr.ptr = p
    if int(p):
        pitchedDevPtr.pitch, pitchedDevPtr.xsize, pitchedDevPtr.ysize = pitch, extent.width, extent.height


def _copy2d(dst, dpitch, src, spitch, width, height, kind, stream, sync):
    if not 0 <= int(kind) <= 4:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"kind {int(kind)}")
    for pitch in (dpitch, spitch):
        if int(pitch) == 0 or int(pitch) < int(width):
            raise HipError(hipError_t.hipErrorInvalidPitchValue, f"pitch {int(pitch)} < width {int(width)}")
    h = int(height)
    copies.copy3d(dst, int(dpitch), int(dpitch) * h, src, int(spitch), int(spitch) * h, int(width), h, 1,
                  stream, sync, int(kind))


@hip_api()
def hipMemcpy2D(dst, dpitch, src, spitch, width, height, kind):
    _copy2d(dst, dpitch, src, spitch, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream):
    _copy2d(dst, dpitch, src, spitch, width, height, kind, stream, False)


def _fill2d(dst, pitch, value, width, height, depth, ysize, stream, sync):
    pitch, width, height = int(pitch), int(width), int(height)
    copies.fill3d(dst, pitch, pitch * (ysize or height), value, width, height, depth, 1, stream, sync)


@hip_api()
def hipMemset2D(dst, pitch, value, width, height):
    _fill2d(dst, pitch, value, width, height, 1, 0, None, True)


@hip_api()
def hipMemset2DAsync(dst, pitch, value, width, height, stream):
    _fill2d(dst, pitch, value, width, height, 1, 0, stream, False)


def _fill3d(pp, value, extent, stream, sync):
    w, h, d = int(extent.width), int(extent.height), int(extent.depth)
    if 0 in (w, h, d):
        return
    if w > int(pp.pitch):
        raise _invalid("pitch below the width")
    _fill2d(pp.ptr, pp.pitch, value, w, h, d, int(pp.ysize), stream, sync)


@hip_api()
def hipMemset3D(pitchedDevPtr, value, extent):
    _fill3d(pitchedDevPtr, value, extent, None, True)


@hip_api()
def hipMemset3DAsync(pitchedDevPtr, value, extent, stream):
    _fill3d(pitchedDevPtr, value, extent, stream, False)


# -- driver-style, stream and peer copies ------------------------------------------------------------------------
def _bind_copy(name, kind):
    def sync_copy(dst, src, sizeBytes):
        copies.copy(dst, src, sizeBytes, None, True, kind)

    def async_copy(dst, src, sizeBytes, stream):
        copies.copy(dst, src, sizeBytes, stream, False, kind)
    sync_copy.__name__, async_copy.__name__ = f"hipMemcpy{name}", f"hipMemcpy{name}Async"
    sync_copy.__qualname__, async_copy.__qualname__ = sync_copy.__name__, async_copy.__name__
    globals()[sync_copy.__name__] = hip_api()(sync_copy)
    globals()[async_copy.__name__] = hip_api()(async_copy)


for _name, _kind in (("HtoD", 1), ("DtoH", 2), ("DtoD", 3)):
    _bind_copy(_name, _kind)


@hip_api()
def hipMemcpyWithStream(dst, src, sizeBytes, kind, stream):
    copies.copy(dst, src, sizeBytes, stream, True, int(kind))


@hip_api()
def hipMemcpyPeer(dst, dstDeviceId, src, srcDeviceId, sizeBytes):
    runtime().device(int(dstDeviceId)), runtime().device(int(srcDeviceId))
    copies.copy(dst, src, sizeBytes, None, True, 3)


@hip_api()
def hipMemcpyPeerAsync(dst, dstDeviceId, src, srcDevice, sizeBytes, stream):
    runtime().device(int(dstDeviceId)), runtime().device(int(srcDevice))
    copies.copy(dst, src, sizeBytes, stream, False, 3)


# -- pointers, host registration, managed and stream-ordered memory -------------------------------------------
def _attrs(ptr) -> pointers.Attributes:
    a = pointers.attributes(_addr(ptr)) if ptr is not None and _addr(ptr) else None
    if a is None:
        raise _invalid("not memory HIP allocated or registered")
    return a


@hip_api(1)
def hipMemPtrGetInfo(ptr):
    return _attrs(ptr).size


@hip_api(2)
def hipMemGetAddressRange(dptr):
    try:
        a = _attrs(dptr)
    except HipError:
        raise HipError(hipError_t.hipErrorNotFound, "not a HIP allocation") from None
    return DevicePointer(a.start), a.size


@hip_api()
def hipPointerGetAttributes(attributes, ptr):
    """Fills ``attributes`` (a hipPointerAttribute_t) in place."""
    a = _attrs(ptr)
    for name in ("memoryType", "type"):
        if hasattr(attributes, name):
            setattr(attributes, name, a.memoryType)
    attributes.device = a.device
    attributes.devicePointer = DevicePointer(a.devicePointer) if a.devicePointer else 0
    attributes.hostPointer = a.hostPointer
    attributes.isManaged = a.isManaged
    attributes.allocationFlags = a.allocationFlags


@hip_api()
def hipHostRegister(hostPtr, sizeBytes, flags):
    pointers.host_register(_addr(hostPtr), sizeBytes, flags)


@hip_api()
def hipHostUnregister(hostPtr):
    pointers.host_unregister(_addr(hostPtr))


@hip_api(1)
def hipHostGetDevicePointer(hstPtr, flags):
    return DevicePointer(_attrs(hstPtr).devicePointer)


@hip_api(1)
def hipHostGetFlags(hostPtr):
    h = pointers.find_host(_addr(hostPtr))
    if h is None:
        raise _invalid("not hipHostMalloc / hipHostRegister memory")
    return h.flags


@hip_api(1)
def hipMallocManaged(size, flags):
    """A DeviceArray of ``size`` bytes (as hip-python returns it) over memory the host and every device address."""
    if int(flags) not in (1, 2):
        raise _invalid(f"flags {int(flags)}")
    from .pointers import DeviceArray
    return DeviceArray.from_allocation(ops.managed_malloc(size))


@hip_api(1)
def hipMallocAsync(size, stream):
    if int(size) == 0:
        raise _invalid("size 0")
    from .pointers import DeviceArray
    st = runtime().resolve_stream(stream)
    return DeviceArray.from_allocation(DevicePointer(pools.current_pool(st.device).malloc(size, stream), st.device,
                                                     int(size)))


@hip_api()
def hipFreeAsync(dev_ptr, stream):
    if not _addr(dev_ptr):
        raise _invalid("null pointer")
    pools.free_async(_addr(dev_ptr), stream)


# -- devices and peers --------------------------------------------------------------------------------------------
def _device(d):
    return runtime().device(int(d))


@hip_api(1)
def hipDeviceGet(ordinal):
    return _device(ordinal).index


@hip_api(1)
def hipDeviceGetName(len, device):  # noqa: A002 - hip-python's parameter name
    if int(len) <= 0:
        raise _invalid("len must be positive")
    return _device(device).props.name.encode()[:int(len) - 1]


@hip_api(1)
def hipDeviceGetPCIBusId(len, device):  # noqa: A002
    p = _device(device).props
    if int(len) <= 12:
        raise _invalid("the buffer must hold 13 characters")
    return f"{p.pciDomainID:04x}:{p.pciBusID:02x}:{p.pciDeviceID:02x}.0".encode()[:int(len) - 1]


@hip_api(1)
def hipDeviceGetByPCIBusId(pciBusId):
    import re

    text = pciBusId.decode() if isinstance(pciBusId, (bytes, bytearray)) else str(pciBusId)
    m = re.match(r"\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)", text)
    if m:
        want = tuple(int(x, 16) for x in m.groups())
        for d in runtime().devices:
            if (d.props.pciDomainID, d.props.pciBusID, d.props.pciDeviceID) == want:
                return d.index
    raise _invalid(f"no device at PCI bus id {text!r}")


@hip_api(1)
def hipDeviceTotalMem(device):
    return _device(device).props.totalGlobalMem


@hip_api(2)
def hipDeviceComputeCapability(device):
    p = _device(device).props
    return p.major, p.minor


@hip_api(1)
def hipDeviceCanAccessPeer(deviceId, peerDeviceId):
    return peer.can_access(int(deviceId), int(peerDeviceId))


@hip_api()
def hipDeviceEnablePeerAccess(peerDeviceId, flags):
    if int(flags) != 0:
        raise _invalid("flags must be 0")
    peer.enable(runtime().current_index(), int(peerDeviceId))


@hip_api()
def hipDeviceDisablePeerAccess(peerDeviceId):
    peer.disable(runtime().current_index(), int(peerDeviceId))


@hip_api(1)
def hipDeviceGetLimit(limit):
    if int(limit) == 2:
        return runtime().device().props.totalGlobalMem
    if int(limit) == 0:
        return 1024
    raise HipError(hipError_t.hipErrorUnsupportedLimit, f"limit {int(limit)}")


@hip_api(2)
def hipDeviceGetStreamPriorityRange():
    return 1, -1                                    # least, greatest (ROCclr: Low = 1, High = -1)


@hip_api(1)
def hipDeviceGetCacheConfig():
    from .._hip_enums import hipFuncCache_t
    return hipFuncCache_t(runtime().device().cache_config)


@hip_api()
def hipDeviceSetCacheConfig(cacheConfig):
    if not 0 <= int(cacheConfig) <= 3:
        raise _invalid("cache config")
    runtime().device().cache_config = int(cacheConfig)


# -- streams, cooperative launches, capture --------------------------------------------------------------------------
@hip_api(1)
def hipStreamGetFlags(stream):
    if stream is None or (isinstance(stream, int) and stream == 0):
        raise _invalid("null stream")
    return runtime().resolve_stream(stream).flags


@hip_api(1)
def hipStreamGetPriority(stream):
    if stream is None or (isinstance(stream, int) and stream == 0):
        return 0
    return runtime().resolve_stream(stream).priority


@hip_api()
def hipLaunchCooperativeKernel(f, gridDim, blockDimX, kernelParams, sharedMemBytes, stream):
    """A cooperative launch (every work-group resident at once; grid-wide sync works).  ``f`` is a
    hipFunction_t (pyhip.hip has no host function pointers); ``kernelParams`` the argument list; the
    dimensions dim3 objects or tuples."""
    from ..runtime.module import Function
    if not isinstance(f, Function):
        raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "not a hipFunction_t")
    f.launch(runtime().resolve_stream(stream), _dim3(gridDim), _dim3(blockDimX), int(sharedMemBytes),
             args=list(kernelParams or ()), cooperative=True)


@hip_api()
def hipStreamBeginCapture(stream, mode):
    from ..runtime.graph import Capture
    if stream is None or (isinstance(stream, int) and stream == 0):
        raise HipError(hipError_t.hipErrorStreamCaptureUnsupported, "the null stream cannot be captured")
    st = runtime().resolve_stream(stream)
    if st.capture is not None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is capturing already")
    st.capture = Capture(st, int(mode))


@hip_api(1)
def hipStreamEndCapture(stream):
    st = runtime().resolve_stream(stream)
    if st.capture is None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is not capturing")
    if st.capture.origin is not st:
        raise HipError(hipError_t.hipErrorStreamCaptureUnmatched, "capture began on another stream")
    return st.capture.end()


@hip_api(1)
def hipStreamIsCapturing(stream):
    from .._hip_enums import hipStreamCaptureStatus
    st = runtime().resolve_stream(stream)
    return hipStreamCaptureStatus(0 if st.capture is None else (2 if st.capture.invalidated else 1))


@hip_api(1)
def hipGraphCreate(flags):
    from ..runtime.graph import Graph
    if int(flags) != 0:
        raise _invalid("flags must be 0")
    return Graph()


@hip_api(2)
def hipGraphInstantiate(graph, pLogBuffer, bufferSize):
    from ..runtime.graph import Graph, GraphExec
    if not isinstance(graph, Graph) or graph.destroyed:
        raise _invalid("not a graph")
    return GraphExec(graph), None


@hip_api()
def hipGraphLaunch(graphExec, stream):
    from ..runtime.graph import GraphExec
    if not isinstance(graphExec, GraphExec):
        raise _invalid("not an executable graph")
    graphExec.launch(runtime().resolve_stream(stream))


@hip_api()
def hipGraphExecDestroy(graphExec):
    from ..runtime.graph import GraphExec
    if not isinstance(graphExec, GraphExec):
        raise _invalid("not an executable graph")


@hip_api()
def hipGraphDestroy(graph):
    from ..runtime.graph import Graph
    if not isinstance(graph, Graph):
        raise _invalid("not a graph")
    graph.destroyed = True


# -- stream memory operations -------------------------------------------------------------------------------------
@hip_api()
def hipStreamWaitValue32(stream, ptr, value, flags, mask):
    memops.wait_value(stream, _addr(ptr), value, flags, mask, 4)


@hip_api()
def hipStreamWaitValue64(stream, ptr, value, flags, mask):
    memops.wait_value(stream, _addr(ptr), value, flags, mask, 8)


@hip_api()
def hipStreamWriteValue32(stream, ptr, value, flags):
    memops.write_value(stream, _addr(ptr), value, 4)


@hip_api()
def hipStreamWriteValue64(stream, ptr, value, flags):
    memops.write_value(stream, _addr(ptr), value, 8)


@hip_api(1)
def hipExtMallocWithFlags(sizeBytes, flags):
    """hipDeviceMallocDefault / hipDeviceMallocFinegrained: device memory; hipMallocSignalMemory (8 bytes):
    host memory the devices see."""
    from .pointers import DeviceArray
    if flags & ~0x3:
        raise HipError(hipError_t.hipErrorInvalidValue, f"flags {flags}")
    if flags == 2:
        if sizeBytes != 8:
            raise HipError(hipError_t.hipErrorInvalidValue, "signal memory is 8 bytes")
        return DeviceArray.from_allocation(ops.host_malloc(8, 0))
    p = ops.malloc(sizeBytes)
    return DeviceArray.from_allocation(p) if int(p) else None


from .. import _hip_enums as _enums  # noqa: E402  (hip-python's hip module has every HIP enum)

globals().update({n: v for n, v in vars(_enums).items() if n.startswith("hip") and isinstance(v, type)})
__all__ = [n for n in dir() if n.startswith("hip")]
