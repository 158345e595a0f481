"""Device memory shared between processes (HIP's IPC): an allocation's pages moved into a memfd and mapped
back at the same addresses, so that another process can map the same file into its own arena and both see
the same bytes.  Mappings are replaced in place (MAP_FIXED): addresses never change, so raw pointers into the
arena (native dispatches, peer views) stay valid."""
from __future__ import annotations

import ctypes
import mmap
import os

from ..errors import HipError, hipError_t

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
MAP_FIXED = 0x10
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE


def _map_fixed(addr: int, length: int, flags: int, fd: int) -> None:
    got = _libc.mmap(addr, length, PROT_RW, flags | MAP_FIXED, fd, 0)
    if got != addr:
        err = ctypes.get_errno()
        raise HipError(hipError_t.hipErrorMapFailed, f"mapping [0x{addr:x}, +{length}) failed: {os.strerror(err)}")


def map_file(addr: int, length: int, fd: int) -> None:
    """The file ``fd`` (its first ``length`` bytes) mapped shared at ``addr``, replacing what was there."""
    _map_fixed(addr, length, mmap.MAP_SHARED, fd)


def map_private(addr: int, length: int) -> None:
    """Fresh zero pages of this process at ``addr`` again (as the arena's reservation has them)."""
    _map_fixed(addr, length, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1)


def new_file(size: int, name: str = "pyhip-ipc") -> int:
    """A memfd of ``size`` zero bytes (closed on exec; other processes open it as /proc/PID/fd/N)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.ftruncate(fd, size)
    return fd


def open_file(pid: int, fd: int, inode: int) -> int:
    """Our own descriptor of process ``pid``'s file ``fd``, checked to be the file with ``inode`` (the number
    may have been reused after the owner closed it); HipError hipErrorInvalidValue when it is gone."""
    try:
        mine = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        raise HipError(hipError_t.hipErrorInvalidValue, f"the IPC handle's memory is gone ({e.strerror})") from None
    if os.fstat(mine).st_ino != inode:
        os.close(mine)
        raise HipError(hipError_t.hipErrorInvalidValue, "the IPC handle's memory is gone (freed by its owner)")
    return mine
