"""Peer access between emulated devices: every pair of devices of one runtime can access each other's
memory (they sit on one emulated XGMI hive).  Enabling access from device A to device B maps B's memory into
A's address space, so A's kernels read and write B's allocations at their own addresses; disabling unmaps
it.  Copies between devices (hipMemcpyPeer, D2D across devices) work with or without it, as on ROCm."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from .context import runtime

LINK_TYPE = 4                        # HSA_AMD_LINK_INFO_TYPE_XGMI


def _check(*indices) -> None:
    n = len(runtime().devices)
    for i in indices:
        if not 0 <= int(i) < n:
            raise HipError(hipError_t.hipErrorInvalidDevice, f"device {i}")


def can_access(device: int, peer: int) -> int:
    """1 between two emulated devices (pyhip's emulator backend maps memories into each other); 0 for the
    same device or a device on another backend (HSA peer mappings are not implemented)."""
    if device == peer:
        return 0
    _check(device, peer)
    devs = runtime().devices
    return int(all(hasattr(devs[i].backend, "memory") and hasattr(devs[i].backend.memory, "map_peer")
                   for i in (device, peer)))


def enable(device: int, peer: int) -> None:
    rt = runtime()
    if not can_access(device, peer):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {device} cannot access device {peer}")
    with rt._lock:
        if (device, peer) in rt.peers:
            raise HipError(hipError_t.hipErrorPeerAccessAlreadyEnabled, f"{device} -> {peer}")
        rt.devices[device].backend.memory.map_peer(rt.devices[peer].backend.memory)
        rt.peers.add((device, peer))


def disable(device: int, peer: int) -> None:
    rt = runtime()
    if not can_access(device, peer):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {device} cannot access device {peer}")
    with rt._lock:
        if (device, peer) not in rt.peers:
            raise HipError(hipError_t.hipErrorPeerAccessNotEnabled, f"{device} -> {peer}")
        rt.devices[device].synchronize_quietly()
        rt.devices[device].backend.memory.unmap_peer(rt.devices[peer].backend.memory)
        rt.peers.discard((device, peer))
