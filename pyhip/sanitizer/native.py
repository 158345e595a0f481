"""The native engine's side of the checks (native/engine/check.h, ``g_check``): memcheck going on after a bad
access, the check switched on with the arenas' layout, and the engine's records (memcheck, initcheck, synccheck,
racecheck) taken and turned into reports.  The
functions are exported by the engine's shared object and called through ctypes (they are the sanitizer's,
not the engine's Python interface)."""
from __future__ import annotations

import ctypes
import functools

CHECK_SYNC = 1      # a record's kind (its ``pad``): synccheck's (0: memcheck's)
CHECK_LDS = 2       # memcheck's LDS access past the group segment (``address``: the LDS offset)
CHECK_INIT = 3      # initcheck's load of bytes nothing wrote (``lds_alloc``: the first lane's unwritten bytes)
CHECK_RACE_LDS = 4  # racecheck, LDS: + 0 read-after-write, 1 write-after-write, 2 write-after-read
CHECK_RACE_GLOBAL = 7   # racecheck, global memory: the same three
RACES = ("read-after-write", "write-after-write", "write-after-read")
RACE_ACCESS = ("read", "write", "atomic")       # a race record's ``write``: the access's kind
RC_SKIP_LDS, RC_SKIP_GLOBAL, RC_ATOMIC = 1, 2, 4    # racecheck's flags per instruction (race.h RC_*)


class CheckHit(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint64), ("address", ctypes.c_uint64), ("count", ctypes.c_uint64),
                ("wave", ctypes.c_int32), ("lane", ctypes.c_int32), ("size", ctypes.c_int32),
                ("write", ctypes.c_int32), ("wg", ctypes.c_uint32 * 3), ("pad", ctypes.c_int32),
                ("lds_size", ctypes.c_uint32), ("lds_alloc", ctypes.c_uint32),
                ("other_wg", ctypes.c_uint32 * 3), ("other_wave", ctypes.c_int32), ("other_lane", ctypes.c_int32),
                ("pad2", ctypes.c_int32), ("other_delta", ctypes.c_int64), ("kernel_code", ctypes.c_uint64)]


@functools.lru_cache(maxsize=1)
def _lib():
    """The engine's shared object (None when the native engine is not available)."""
    from ..emu import native
    if not native.available():
        return None
    try:
        lib = ctypes.CDLL(native.module().__file__)
        lib.pyhip_check_set.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_uint64), ctypes.c_int32]
        lib.pyhip_check_take.argtypes = [ctypes.POINTER(CheckHit), ctypes.c_int32, ctypes.POINTER(ctypes.c_uint64)]
        lib.pyhip_check_take.restype = ctypes.c_int32
        lib.pyhip_check_sync.argtypes = [ctypes.c_int32]
        lib.pyhip_initcheck_set.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_uint64), ctypes.c_int32]
        return lib
    except (OSError, AttributeError):          # an engine built before the sanitizer's hooks
        return None


def arm(on: bool, memories) -> None:
    """memcheck going on in the native engine (or not), for the arenas of ``memories``."""
    lib = _lib()
    if lib is None:
        return
    flat = []
    for m in memories:
        flat += [m.base, m.base + len(m.arena), m.fragment]
    arr = (ctypes.c_uint64 * max(1, len(flat)))(*flat)
    lib.pyhip_check_set(1 if on else 0, arr, len(flat) // 3)


def arm_init(shadows) -> None:
    """initcheck in the native engine for the arenas of ``shadows`` (pyhip/sanitizer/initcheck.Shadow; none:
    off): their host ranges and where their shadows are."""
    lib = _lib()
    if lib is None:
        return
    flat = []
    for sh in shadows:
        arena = sh.memory.arena
        flat += [arena.ctypes.data, arena.ctypes.data + len(arena), sh.bits.ctypes.data]
    arr = (ctypes.c_uint64 * max(1, len(flat)))(*flat)
    lib.pyhip_initcheck_set(1 if flat else 0, arr, len(flat) // 3)


def sync(on: bool) -> None:
    """synccheck on or off in the native engine."""
    lib = _lib()
    if lib is not None:
        lib.pyhip_check_sync(1 if on else 0)


def take() -> tuple[list[CheckHit], int]:
    """The engine's records since the last call, and how many bad lanes found no record slot."""
    lib = _lib()
    if lib is None:
        return [], 0
    out = (CheckHit * 1024)()
    lost = ctypes.c_uint64()
    n = lib.pyhip_check_take(out, 1024, ctypes.byref(lost))
    return [out[i] for i in range(n)], int(lost.value)
