"""Devices: count, ordinals, identity (name, PCI bus id, total memory, compute capability), limits, cache
configuration, the stream priority range and peer access (clr's hip_device_runtime.cpp, hip_device.cpp,
hip_peer.cpp)."""
from __future__ import annotations

import re

from ..errors import HipError, hipError_t
from ..runtime import peer
from ..runtime.context import runtime
from . import invalid

LIMIT_STACK, LIMIT_PRINTF_FIFO, LIMIT_MALLOC_HEAP = 0, 1, 2
PRIORITY_LEAST, PRIORITY_GREATEST = 1, -1           # ROCclr: Priority::Low = 1, High = -1
PCI_BUS_ID_LEN = 13                                 # "dddd:bb:dd.f" and its NUL


def device(ordinal):
    """The runtime device of ``ordinal``; hipErrorInvalidDevice when there is none."""
    return runtime().device(int(ordinal))


def count() -> int:
    n = len(runtime().devices)
    if n == 0:
        raise HipError(hipError_t.hipErrorNoDevice, "no devices")
    return n


def get(ordinal) -> int:
    return device(ordinal).index


def name(length, ordinal) -> bytes:
    """The device's name cut to fit ``length`` bytes with its NUL (the NUL not included)."""
    dev = device(ordinal)
    if int(length) <= 0:
        raise invalid("len must be positive")
    return dev.props.name.encode()[:int(length) - 1]


def pci_bus_id(length, ordinal) -> bytes:
    p = device(ordinal).props
    if int(length) < PCI_BUS_ID_LEN:
        raise invalid(f"the buffer must hold {PCI_BUS_ID_LEN} characters")
    return f"{p.pciDomainID:04x}:{p.pciBusID:02x}:{p.pciDeviceID:02x}.0".encode()[:int(length) - 1]


def by_pci_bus_id(text) -> int:
    """The ordinal of the device at PCI bus id ``text`` (str or bytes, "dddd:bb:dd")."""
    text = bytes(text).decode(errors="replace") if isinstance(text, (bytes, bytearray)) else str(text)
    m = re.match(r"\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)", text)
    if m:
        want = tuple(int(x, 16) for x in m.groups())
        for d in runtime().devices:
            if (d.props.pciDomainID, d.props.pciBusID, d.props.pciDeviceID) == want:
                return d.index
    raise invalid(f"no device at PCI bus id {text!r}")


def total_mem(ordinal) -> int:
    return device(ordinal).props.totalGlobalMem


def compute_capability(ordinal) -> tuple[int, int]:
    p = device(ordinal).props
    return p.major, p.minor


def limit(which) -> int:
    """hipDeviceGetLimit: the stack and heap sizes; the printf FIFO is hipErrorUnsupportedLimit, any other
    value hipErrorInvalidValue."""
    which = int(which)
    if which == LIMIT_MALLOC_HEAP:
        return runtime().device().props.totalGlobalMem
    if which == LIMIT_STACK:
        return runtime().device().stack_size
    if which == LIMIT_PRINTF_FIFO:
        raise HipError(hipError_t.hipErrorUnsupportedLimit, "hipLimitPrintfFifoSize")
    raise invalid(f"limit {which}")


def stream_priority_range() -> tuple[int, int]:
    return PRIORITY_LEAST, PRIORITY_GREATEST


def cache_config() -> int:
    return runtime().device().cache_config


def set_cache_config(config) -> None:
    if not 0 <= int(config) <= 3:
        raise invalid(f"cache config {int(config)}")
    runtime().device().cache_config = int(config)


def can_access_peer(ordinal, peer_ordinal) -> int:
    return peer.can_access(runtime(), int(ordinal), int(peer_ordinal))


def enable_peer_access(peer_ordinal, flags) -> None:
    if int(flags) != 0:
        raise invalid("flags must be 0")
    rt = runtime()
    peer.enable(rt, rt.current_index(), int(peer_ordinal))


def disable_peer_access(peer_ordinal) -> None:
    rt = runtime()
    peer.disable(rt, rt.current_index(), int(peer_ordinal))
