"""Copies and fills of 1-D, 2-D (pitched) and 3-D regions between any two places, in stream order.

Every address is one of: device memory (an allocation of some emulated device), pinned host memory
(hipHostMalloc / hipHostRegister / managed: host memory mapped into the devices at its own address), or
plain (pageable) host memory.  Like AMD's runtime, the direction is inferred from the addresses; ``kind``
is only checked to be a hipMemcpyKind.  Host sides are read or written when the stream reaches the copy,
except a pageable source of an asynchronous copy, which is staged when the copy is enqueued (CUDA's and
HIP's rule: the caller may reuse a pageable buffer as soon as the call returns).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..errors import HipError, hipError_t
from .context import runtime
from .idlecopy import copy_now
from .memory import as_address
from .pointers import check_host_address

KINDS = range(5)                    # hipMemcpyHostToHost .. hipMemcpyDefault


def invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


@dataclass
class Place:
    """Where an address lives: ``kind`` 'device' | 'pinned' | 'host'; ``device`` for device memory;
    ``start``/``end`` of the allocation or mapping when known."""
    kind: str
    address: int
    device: object = None
    start: int = 0
    end: int = 0
    keep: object = None             # a Python buffer behind a host address

    def check(self, span: int) -> None:
        if self.kind != "host" and self.address + span > self.end:
            raise invalid(f"[0x{self.address:x}, +{span}) overruns its allocation (ends at 0x{self.end:x})")

    def view(self, span: int) -> np.ndarray:
        """The bytes [address, address + span) as a writable uint8 array (taken when the copy runs)."""
        if span == 0:
            return np.zeros(0, np.uint8)
        if self.kind == "device":
            return np.frombuffer(self.device.backend.host_view(self.address, span), dtype=np.uint8)
        return np.ctypeslib.as_array((ctypes.c_ubyte * span).from_address(self.address))


    def host_address(self, span: int) -> int | None:
        """The host address of [address, address + span) for a copy the packet processor does later, or None:
        device memory of an emulated device whose arena never moves, or host memory."""
        if self.kind != "device":
            return self.address
        memory = getattr(self.device.backend, "memory", None)
        if memory is None or not getattr(memory, "_fixed_arena", False):
            return None
        return memory.host_address(self.address, span)

    def modify(self, span: int, fn) -> None:
        """``fn(view)`` changes bytes of [address, address + span); device memory the CPU cannot write in
        place (HSA backend: VRAM without CPU access gives a read-only snapshot) is changed in a copy and
        written back."""
        base = self.view(span)
        if base.flags.writeable:
            fn(base)
            if self.kind == "device":
                self.device.backend.host_wrote(self.address, span)     # the HSA backend's HDP flush
            return
        base = base.copy()
        fn(base)
        self.device.backend.write(self.address, base.tobytes())


def locate(p, writable: bool = False) -> Place:
    """The Place of a pointer-like value (int address, DevicePointer) or a Python buffer."""
    addr = as_address(p)
    if addr is None:                                      # numpy array, bytes, bytearray, memoryview...
        try:
            mv = memoryview(p)
        except TypeError:
            raise invalid(f"{type(p).__name__} is neither a pointer nor a buffer") from None
        if not mv.contiguous:
            raise invalid("host buffer is not contiguous")
        if writable and mv.readonly:
            raise invalid("destination host buffer is read-only")
        arr = np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, dtype=np.uint8)
        a = int(arr.ctypes.data) if arr.size else 0
        return Place("buffer", a, None, a, a + arr.size, keep=(p, arr))
    if addr == 0:
        raise invalid("null pointer")
    for dev in runtime().devices:
        hit = dev.backend.find(addr)
        if hit is not None:
            start, end, kind = hit
            if kind == "peer":                            # another device's memory seen through peer access
                continue
            if kind == "host":
                return Place("pinned", addr, None, start, end)
            return Place("device", addr, dev, start, end)
    host = runtime().host.find(addr)      # pinned memory no device's table holds (the HSA backend's: ROCr's)
    if host is not None:
        return Place("pinned", addr, None, host.start, host.start + host.size)
    check_host_address(addr)                              # e.g. a freed device pointer: not a host address
    return Place("host", addr)


def is_pinned(addr: int) -> bool:
    return locate(addr).kind == "pinned"


def _span(width: int, height: int, depth: int, pitch: int, slice_pitch: int) -> int:
    if width == 0 or height == 0 or depth == 0:
        return 0
    return (depth - 1) * slice_pitch + (height - 1) * pitch + width


def _region(base: np.ndarray, width, height, depth, pitch, slice_pitch) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(base, shape=(depth, height, width), strides=(slice_pitch, pitch, 1),
                                           writeable=True)


def copy3d(dst, dpitch: int, dslice: int, src, spitch: int, sslice: int, width: int, height: int, depth: int,
           stream=None, sync: bool = True, kind: int = 4) -> None:
    """Copy a width × height × depth byte region; rows ``pitch`` bytes apart, slices ``slice`` bytes apart."""
    if int(kind) not in KINDS:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"invalid hipMemcpyKind {kind}")
    width, height, depth = int(width), int(height), int(depth)
    if min(width, height, depth, dpitch, spitch) < 0:
        raise invalid("negative size or pitch")
    if height > 1 and (width > dpitch or width > spitch):
        raise HipError(hipError_t.hipErrorInvalidPitchValue, f"width {width} exceeds a pitch ({dpitch}, {spitch})")
    d, s = locate(dst, writable=True), locate(src)
    if d.kind in ("host", "buffer") and s.kind in ("host", "buffer") and int(kind) not in (0, 4):
        raise invalid("both pointers are pageable host memory: kind must be hipMemcpyHostToHost or Default")
    if width == 0 or height == 0 or depth == 0:
        return
    dspan, sspan = _span(width, height, depth, dpitch, dslice), _span(width, height, depth, spitch, sslice)
    d.check(dspan)
    s.check(sspan)
    rt = runtime()
    st = rt.resolve_stream(stream)
    if st.capture is not None:
        if sync:
            st.check_not_capturing()
        st.capture.add(st, "memcpy", dict(dst=d.address, dpitch=dpitch, dslice=dslice, src=s.address, spitch=spitch,
                                          sslice=sslice, width=width, height=height, depth=depth, kind=kind))
        return
    contiguous = height == 1 and depth == 1 or (dpitch == spitch == width and (depth == 1 or dslice == sslice == width * height))
    if s.kind in ("host", "buffer") or d.kind in ("host", "buffer"):
        # pageable memory on either side: the copy happens in stream order and returns when done, even
        # from hipMemcpyAsync (AMD's runtime does the same: the caller may reuse the buffer at once,
        # and it reads/writes what earlier work in the stream left there)
        sync = True
    if contiguous and d.kind == s.kind == "device" and d.device is s.device is st.device:
        cmd = st.device_copy(d.address, s.address, dspan)
    elif contiguous and getattr(st.device.backend, "kind", "") == "emu" and \
            (hd := d.host_address(dspan)) is not None and (hs := s.host_address(sspan)) is not None:
        cmd = st.host_copy(hd, hs, dspan, keep=(d.keep, s.keep))     # process memory: a native memmove
    elif contiguous and _pinned_dma(st, d, s):
        cmd = st.pinned_copy(d.address, s.address, dspan, d.kind == "pinned", keep=(d.keep, s.keep))
    elif contiguous and (staged := _staged(st, d, s, dspan)) is not None:
        cmd = st.host_op(staged, "memcpy", keep=(d.keep, s.keep))
    else:
        def op():
            def fill(base):
                out = _region(base, width, height, depth, dpitch, dslice)
                out[...] = _region(s.view(sspan), width, height, depth, spitch, sslice)
            d.modify(dspan, fill)
        cmd = st.host_op(op, "memcpy", keep=(d.keep, s.keep))
    if sync:
        cmd.signal.wait(None)
        st.synchronize()


def _pinned_dma(st, d: Place, s: Place) -> bool:
    """Whether the stream's backend copies this pair by DMA (the HSA backend: pinned host memory and the stream's
    device memory, either way — ``hsa_amd_memory_async_copy``, asynchronous as on AMD's runtime; pinned to
    pinned stays a host copy in stream order; the emulator's copies of process memory are native memmoves)."""
    if not getattr(st.device.backend, "DMA_PINNED", False):
        return False
    return {d.kind, s.kind} == {"pinned", "device"} and (d if d.kind == "device" else s).device is st.device


def _staged(st, d: Place, s: Place, span: int):
    """The copy between pageable host memory and the stream's device as its backend stages it (the HSA
    backend: pinned staging buffers and DMA, runtime/hsa/staging.py), or None."""
    stage = getattr(st.device.backend, "staged_copy", None)
    if stage is None:
        return None
    if d.kind == "device" and d.device is st.device and s.kind in ("host", "buffer"):
        src = s.host_address(span)
        return lambda: stage(d.address, src, span, True)
    if s.kind == "device" and s.device is st.device and d.kind in ("host", "buffer"):
        dst = d.host_address(span)
        return lambda: stage(dst, s.address, span, False)
    return None


def copy(dst, src, nbytes: int, stream=None, sync: bool = True, kind: int = 4) -> None:
    nbytes = int(nbytes)
    if nbytes < 0:
        raise invalid("negative size")
    if nbytes == 0:
        if int(kind) not in KINDS:
            raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"invalid hipMemcpyKind {kind}")
        return                                  # nothing to copy: not even the pointers are looked at
    if not copy_now(dst, src, nbytes, kind, stream, sync):      # an idle stream: done here (runtime/idlecopy.py)
        copy3d(dst, nbytes, nbytes, src, nbytes, nbytes, nbytes, 1, 1, stream, sync, kind)


def fill3d(dst, pitch: int, slice_pitch: int, value: int, width: int, height: int, depth: int, elem: int = 1,
           stream=None, sync: bool = True) -> None:
    """Fill a region with ``value`` (``elem``-byte elements; width in bytes, a multiple of elem)."""
    width, height, depth = int(width), int(height), int(depth)
    if min(width, height, depth, pitch) < 0:
        raise invalid("negative size or pitch")
    if height > 1 and width > pitch:                 # HIP 5.2's fills: hipErrorInvalidValue (copies: pitch value)
        raise HipError(hipError_t.hipErrorInvalidValue, f"width {width} exceeds the pitch {pitch}")
    if width == 0 or height == 0 or depth == 0:
        return
    d = locate(dst, writable=True)
    if d.kind in ("host", "buffer"):
        raise invalid(f"0x{d.address:x} is neither device nor pinned host memory")
    span = _span(width, height, depth, pitch, slice_pitch)
    d.check(span)
    st = runtime().resolve_stream(stream)
    value = int(value) & ((1 << (8 * elem)) - 1)
    if st.capture is not None:
        if sync:
            st.check_not_capturing()
        st.capture.add(st, "memset", dict(dst=d.address, pitch=pitch, slice=slice_pitch, value=value, elem=elem,
                                          width=width // elem, height=height, depth=depth))
        return
    if d.kind == "device" and d.device is st.device and height == 1 and depth == 1:
        cmd = st.fill(d.address, value, width // elem, elem)
    else:
        pattern = np.frombuffer(value.to_bytes(elem, "little"), dtype=np.uint8)

        def op():
            def fill(base):
                _region(base, width, height, depth, pitch, slice_pitch)[...] = np.resize(pattern, width)[None, None, :]
            d.modify(span, fill)
        cmd = st.host_op(op, "memset")
    if sync:
        cmd.signal.wait(None)
        st.synchronize()
