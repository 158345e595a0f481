"""The C ABI's devices: count, current device, properties (hipDeviceProp_t of HIP 5.2), attributes,
versions, error names, reset and synchronisation; hipChooseDevice, names, PCI bus ids, total memory, compute
capability, UUIDs (clr's hip_device_runtime.cpp / hip_device.cpp)."""
from __future__ import annotations

import struct

from .. import hip as H
from ..errors import error_name
from ..hipapi import devices as api
from ..runtime.properties import WALL_CLOCK_RATE_ATTR, device_attribute
from .common import c, export, export_raw, invalid


PROP_SIZE = 792
# hipDeviceProp_t (HIP 5.2) scalar fields: (offset, struct format, attribute)
PROP_FIELDS = [(256, "Q", "totalGlobalMem"), (264, "Q", "sharedMemPerBlock"), (272, "i", "regsPerBlock"),
               (276, "i", "warpSize"), (280, "i", "maxThreadsPerBlock"), (308, "i", "clockRate"),
               (312, "i", "memoryClockRate"), (316, "i", "memoryBusWidth"), (320, "Q", "totalConstMem"),
               (328, "i", "major"), (332, "i", "minor"), (336, "i", "multiProcessorCount"), (340, "i", "l2CacheSize"),
               (344, "i", "maxThreadsPerMultiProcessor"), (348, "i", "computeMode"), (352, "i", "clockInstructionRate"),
               (360, "i", "concurrentKernels"), (364, "i", "pciDomainID"), (368, "i", "pciBusID"),
               (372, "i", "pciDeviceID"), (376, "Q", "maxSharedMemoryPerMultiProcessor"), (384, "i", "isMultiGpuBoard"),
               (388, "i", "canMapHostMemory"), (392, "i", "gcnArch"), (652, "i", "integrated"),
               (656, "i", "cooperativeLaunch"), (660, "i", "cooperativeMultiDeviceLaunch"),
               (664, "i", "maxTexture1DLinear"), (668, "i", "maxTexture1D"), (712, "Q", "memPitch"),
               (720, "Q", "textureAlignment"), (728, "Q", "texturePitchAlignment"), (736, "i", "kernelExecTimeoutEnabled"),
               (740, "i", "ECCEnabled"), (744, "i", "tccDriver"), (748, "i", "cooperativeMultiDeviceUnmatchedFunc"),
               (752, "i", "cooperativeMultiDeviceUnmatchedGridDim"),
               (756, "i", "cooperativeMultiDeviceUnmatchedBlockDim"),
               (760, "i", "cooperativeMultiDeviceUnmatchedSharedMem"), (764, "i", "isLargeBar"),
               (768, "i", "asicRevision"), (772, "i", "managedMemory"), (776, "i", "directManagedMemAccessFromHost"),
               (780, "i", "concurrentManagedAccess"), (784, "i", "pageableMemoryAccess"),
               (788, "i", "pageableMemoryAccessUsesHostPageTables")]
ARCH_BITS = ("hasGlobalInt32Atomics", "hasGlobalFloatAtomicExch", "hasSharedInt32Atomics", "hasSharedFloatAtomicExch",
             "hasFloatAtomicAdd", "hasGlobalInt64Atomics", "hasSharedInt64Atomics", "hasDoubles", "hasWarpVote",
             "hasWarpBallot", "hasWarpShuffle", "hasFunnelShift", "hasThreadFenceSystem", "hasSyncThreadsExt",
             "hasSurfaceFuncs", "has3dGrid", "hasDynamicParallelism")


def pack_properties(p) -> bytes:
    """A hipDeviceProp_t (HIP 5.2 layout, 792 bytes) from a DeviceProp."""
    buf = bytearray(PROP_SIZE)
    buf[0:255] = p.name.encode()[:255].ljust(255, b"\0")
    buf[396:651] = p.gcnArchName.encode()[:255].ljust(255, b"\0")
    for off, fmt, attr in PROP_FIELDS:
        struct.pack_into("<" + fmt, buf, off, int(getattr(p, attr)))
    struct.pack_into("<3i", buf, 284, *p.maxThreadsDim)
    struct.pack_into("<3i", buf, 296, *p.maxGridSize)
    struct.pack_into("<2i", buf, 672, *p.maxTexture2D)
    struct.pack_into("<3i", buf, 680, *p.maxTexture3D)
    struct.pack_into("<QQ", buf, 696, p.hdpMemFlushCntl, p.hdpRegFlushCntl)
    bits = sum(1 << i for i, name in enumerate(ARCH_BITS) if p.arch.get(name))
    struct.pack_into("<I", buf, 356, bits)
    return bytes(buf)


def unpack_properties(raw: bytes) -> dict:
    """The fields of a caller's hipDeviceProp_t (hipChooseDevice)."""
    out = {"name": raw[0:256].split(b"\0")[0].decode(errors="replace"),
           "gcnArchName": raw[396:652].split(b"\0")[0].decode(errors="replace")}
    for off, fmt, attr in PROP_FIELDS:
        out[attr] = struct.unpack_from("<" + fmt, raw, off)[0]
    out["maxThreadsDim"] = struct.unpack_from("<3i", raw, 284)
    out["maxGridSize"] = struct.unpack_from("<3i", raw, 296)
    return out


CHOOSE_FIELDS = ("major", "minor", "totalGlobalMem", "sharedMemPerBlock", "maxThreadsPerBlock", "totalConstMem",
                 "multiProcessorCount", "maxThreadsPerMultiProcessor", "memoryClockRate", "memoryBusWidth",
                 "l2CacheSize", "regsPerBlock", "maxSharedMemoryPerMultiProcessor", "warpSize")


@export
def hipGetDeviceCount(count):
    c.need(count)
    count[0] = api.count()


@export
def hipSetDevice(d):
    c.rt.set_device(int(d))
    c.lib.pyhip_set_current_device(int(d))     # the native launch path resolves the null stream with it


@export
def hipGetDevice(d):
    c.need(d)
    d[0] = c.rt.current_index()


@export
def pyhip_slow_hipDeviceSynchronize():
    # hipDeviceSynchronize (fastlaunch.c) when the device is not armed for a native synchronize
    c.rt.device().synchronize()


# hipGetLastError / hipPeekAtLastError are C (fastlaunch.c): the thread's last error lives there


@export_raw("hipGetErrorName")
def get_error_name(code):
    return c.cstring(error_name(int(code)))


@export_raw("hipGetErrorString")
def get_error_string(code):
    return c.cstring(error_name(int(code)))


@export
def hipInit(flags):
    c.check(H.hipInit(int(flags)))


@export
def hipDriverGetVersion(v):
    c.need(v)
    v[0] = c.check(H.hipDriverGetVersion())


@export
def hipRuntimeGetVersion(v):
    c.need(v)
    v[0] = c.check(H.hipRuntimeGetVersion())


@export
def hipGetDeviceProperties(prop, device):
    c.need(prop)
    c.check(H.hipGetDeviceProperties(int(c.ffi.cast("uintptr_t", prop)), int(device)))   # fills the C struct


@export
def hipDeviceGetAttribute(value, attr, device):
    c.need(value)
    if int(attr) == WALL_CLOCK_RATE_ATTR:       # later HIP's attribute: not in 5.2's enum pyhip.hip takes
        value[0] = device_attribute(c.rt.device(int(device)).props, int(attr))
        return
    value[0] = c.check(H.hipDeviceGetAttribute(c.enum_arg(H.hipDeviceAttribute_t, attr), int(device)))


@export
def hipDeviceReset():
    c.fast.invalidate()
    c.check(H.hipDeviceReset())


# -- choosing and identifying devices ---------------------------------------------------------------------
@export
def hipChooseDevice(out, prop):
    if out == c.ffi.NULL or prop == c.ffi.NULL:
        raise invalid("null pointer")
    want = unpack_properties(bytes(c.ffi.buffer(prop, PROP_SIZE)))
    best, best_count = 0, 0
    for d in c.rt.devices:
        asked = [f for f in CHOOSE_FIELDS if want[f]]
        matched = [f for f in asked if getattr(d.props, f) >= want[f]]
        if len(asked) == len(matched) and len(matched) > best_count:
            best, best_count = d.index, len(matched)
    out[0] = best


@export
def hipDeviceComputeCapability(major, minor, d):
    cc = api.compute_capability(d)
    c.need(major, minor)
    major[0], minor[0] = cc


@export
def hipDeviceGet(out, d):
    c.need(out)
    out[0] = api.get(d)


def put_string(buf, text: bytes) -> None:
    if buf == c.ffi.NULL:
        raise invalid("null buffer")
    c.ffi.memmove(buf, text + b"\0", len(text) + 1)


@export
def hipDeviceGetPCIBusId(buf, length, d):
    put_string(buf, api.pci_bus_id(length, d))


@export
def hipDeviceGetByPCIBusId(out, text):
    c.need(out, text)
    out[0] = api.by_pci_bus_id(c.ffi.string(text))


@export
def hipDeviceGetName(buf, length, d):
    put_string(buf, api.name(length, d))


@export
def hipDeviceTotalMem(out, d):
    total = api.total_mem(d)
    c.need(out)
    out[0] = total


@export
def hipDeviceGetUuid(out, d):
    dev = c.device(d)
    c.need(out)
    uuid = f"GPU-pyhip{dev.index:07x}".encode()[:16]
    c.ffi.memmove(out, uuid.ljust(16, b"\0"), 16)

