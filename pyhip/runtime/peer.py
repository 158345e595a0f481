"""Peer access between devices: every pair of devices of one runtime can access each other's memory (they
sit on one emulated XGMI hive).  Enabling access from device A to device B maps B's memory into A's address
space, so A's kernels read and write B's allocations at their own addresses; disabling unmaps it (on the
HSA backend ROCr grants B's allocations to A's agent, and cannot take a grant back: disabling only stops
granting B's later allocations).  Copies between devices (hipMemcpyPeer, D2D across devices) work with or
without it, as on ROCm."""
from __future__ import annotations

import os
import weakref

from ..errors import HipError, hipError_t

LINK_TYPE = 4                        # HSA_AMD_LINK_INFO_TYPE_XGMI

_enabled: "weakref.WeakKeyDictionary[object, set[tuple[int, int]]]" = weakref.WeakKeyDictionary()
os.register_at_fork(after_in_child=_enabled.clear)      # a forked child's devices are new: no mapping survives


def enabled(rt) -> set[tuple[int, int]]:
    """The (device, peer) pairs of runtime ``rt`` with peer access enabled."""
    return _enabled.setdefault(rt, set())


def _check(rt, *indices) -> None:
    n = len(rt.devices)
    for i in indices:
        if not 0 <= int(i) < n:
            raise HipError(hipError_t.hipErrorInvalidDevice, f"device {i}")


def can_access(rt, device: int, peer: int) -> int:
    """1 between two devices of one backend that can reach each other's memory (the emulator maps memories
    into each other; on the HSA backend ROCr must not report the peer's VRAM pool never allowed to the
    device's agent); 0 for the same device."""
    if device == peer:
        return 0
    _check(rt, device, peer)
    a, b = rt.devices[device].backend, rt.devices[peer].backend
    return int(type(a) is type(b) and hasattr(a, "map_peer") and a.peer_reachable(b))


def enable(rt, device: int, peer: int) -> None:
    if not can_access(rt, device, peer):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {device} cannot access device {peer}")
    with rt._lock:
        pairs = enabled(rt)
        if (device, peer) in pairs:
            raise HipError(hipError_t.hipErrorPeerAccessAlreadyEnabled, f"{device} -> {peer}")
        rt.devices[device].backend.map_peer(rt.devices[peer].backend)
        pairs.add((device, peer))


def disable(rt, device: int, peer: int) -> None:
    if not can_access(rt, device, peer):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {device} cannot access device {peer}")
    with rt._lock:
        pairs = enabled(rt)
        if (device, peer) not in pairs:
            raise HipError(hipError_t.hipErrorPeerAccessNotEnabled, f"{device} -> {peer}")
        rt.devices[device].synchronize_quietly()
        rt.devices[device].backend.unmap_peer(rt.devices[peer].backend)
        pairs.discard((device, peer))
