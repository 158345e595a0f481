"""Occupancy, cooperative launches and the multi-grid sync information kernels read.

Occupancy (work-groups per CU) follows the CDNA limits LLVM and ROCclr use: waves per SIMD from VGPRs,
4 SIMDs per CU, LDS per CU, at most 32 groups.  A cooperative launch (hipLaunchCooperativeKernel) must fit
on the device at once: at most occupancy × CUs work-groups, else hipErrorCooperativeLaunchTooLarge —
the emulator then runs every work-group of the dispatch in one batch when the code uses global wave sync.

``hidden_multigrid_sync_arg`` points to ROCclr's MGSyncInfo (device.hpp): ``{MGSyncData* mgs; u32 grid_id;
u32 num_grids; u64 prev_sum; u64 all_sum; MGSyncData sgs; u32 num_wg}`` with ``MGSyncData = {u32 w0, w1}``.
A multi-device launch gives every grid the same ``mgs`` (counters the device libraries' multi_grid.sync()
spins on); single launches get ``mgs = NULL``, grid 0 of 1.  The blocks live in pinned host memory every
device reaches at its host address (pinned.py) and are cached by content (immutable), so native launch
templates may hold them.
"""
from __future__ import annotations

import struct
import threading
import weakref

import numpy as np

from ..errors import HipError, hipError_t
from .pinned import pin, reach

MGINFO_SIZE = 48
_lock = threading.Lock()
_blocks: dict[tuple, tuple] = {}     # payload -> (address, its memory, the devices it is mapped into)


def blocks_per_cu(kernel, block: int, dyn_shared: int) -> int:
    """Work-groups per CU, limited by waves (VGPR budget per SIMD × 4 SIMDs), LDS and 32 slots."""
    wave = kernel.wavefront_size
    waves_per_group = -(-block // wave)
    vgprs = max(kernel.vgpr_count + (kernel.agpr_count or 0), 1)
    vgprs = -(-vgprs // 8) * 8
    waves_per_simd = min(8, 512 // vgprs) if wave == 64 else min(16, 1024 // vgprs)
    by_waves = (waves_per_simd * 4) // waves_per_group
    lds = kernel.group_segment_fixed_size + dyn_shared
    by_lds = 65536 // lds if lds else 1 << 30
    return max(0, min(by_waves, by_lds, 32))


def check_cooperative(function, grid, block, shared: int) -> None:
    """hipErrorCooperativeLaunchTooLarge unless every work-group can be resident at once."""
    props = function.device.props
    if not props.cooperativeLaunch:
        raise HipError(hipError_t.hipErrorLaunchFailure, "the device does not support cooperative launches")
    b = int(block[0]) * int(block[1]) * int(block[2])
    if b <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "empty block")
    limit = blocks_per_cu(function.kernel, b, int(shared)) * props.multiProcessorCount
    groups = int(grid[0]) * int(grid[1]) * int(grid[2])
    if groups > limit:
        raise HipError(hipError_t.hipErrorCooperativeLaunchTooLarge,
                       f"{groups} work-groups; at most {limit} fit on the device at once")


def _mapped_block(key: tuple, payload: bytes, device) -> int:
    """The pinned block holding ``payload`` (one per content), reachable from ``device`` (pinned.py)."""
    with _lock:
        hit = _blocks.get(key)
        if hit is None:
            a, arr = pin([device], MGINFO_SIZE, align=64)
            arr[:] = np.frombuffer(payload.ljust(MGINFO_SIZE, b"\0"), dtype=np.uint8)
            hit = _blocks[key] = (a, arr, weakref.WeakSet([device]))
        if device not in hit[2]:
            reach(device, hit[0], hit[1])
            hit[2].add(device)
        return hit[0]


def sync_info(device, grid, block, grid_id: int = 0, num_grids: int = 1, prev_sum: int = 0,
              all_sum: int | None = None, mgs: int = 0) -> int:
    """Address of an MGSyncInfo for a launch of ``grid`` work-groups of ``block`` work-items on ``device``."""
    items = int(np.prod([int(g) * int(b) for g, b in zip(grid, block)]))
    num_wg = int(np.prod([int(g) for g in grid]))
    all_sum = items if all_sum is None else all_sum
    payload = struct.pack("<QIIQQIII", mgs, grid_id, num_grids, prev_sum, all_sum, 0, 0, num_wg)
    return _mapped_block((payload,), payload, device)


def multi_grid_sync_data(devices) -> tuple[int, np.ndarray]:
    """A fresh, zeroed MGSyncData shared by the grids of one multi-device launch (mapped everywhere)."""
    return pin(devices, 64, align=64)
