"""How many bytes an image at a bare address spans (``hipModuleLoadData(void*)`` gets no size): an ELF code
object ends with its section header table; a plain offload bundle with its last entry; a compressed (CCOB)
bundle records its total size (v2/v3)."""
from __future__ import annotations

import ctypes
import struct
from typing import Callable

from ..errors import LoaderError, hipError_t

MAX_IMAGE = 1 << 31


def image_extent(read: Callable[[int, int], bytes]) -> int:
    """``read(offset, n)`` returns ``n`` bytes of the image; the result is the image size in bytes."""
    head = read(0, 64)
    if head[:4] == b"\x7fELF":
        shoff, = struct.unpack_from("<Q", head, 40)
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 54)
        end = max(shoff + shentsize * shnum, phoff + phentsize * phnum, 64)
    elif head[:4] == b"CCOB":
        version, = struct.unpack_from("<H", head, 4)
        if version < 2:
            raise LoaderError("a version-1 compressed bundle does not record its size; pass a buffer",
                              hipError_t.hipErrorInvalidImage)
        end = struct.unpack_from("<I" if version == 2 else "<Q", head, 8)[0]
    elif head[:24] == b"__CLANG_OFFLOAD_BUNDLE__":
        count, = struct.unpack_from("<Q", head, 24)
        if not 0 < count < 4096:
            raise LoaderError("absurd bundle entry count", hipError_t.hipErrorInvalidImage)
        pos = end = 32
        for _ in range(count):
            off, size, idlen = struct.unpack("<QQQ", read(pos, 24))
            pos += 24 + idlen
            end = max(end, off + size, pos)
    else:
        raise LoaderError("not a code object or offload bundle", hipError_t.hipErrorInvalidImage)
    if end > MAX_IMAGE:
        raise LoaderError(f"image claims {end} bytes", hipError_t.hipErrorInvalidImage)
    return end


def image_at(address: int) -> bytes:
    """The bytes of the code object or offload bundle (plain or compressed) at host ``address``, sized from
    its own headers."""
    return ctypes.string_at(address, image_extent(lambda off, n: ctypes.string_at(address + off, n)))
