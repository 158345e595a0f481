"""What a runtime object is to C and to hip-python: an opaque handle (``int(obj)``, ``obj.as_c_void_p()``)."""
from __future__ import annotations

import ctypes


class Handle:
    """Mixin for objects with a ``handle`` attribute (streams, events, modules, functions)."""

    __slots__ = ()

    def __int__(self) -> int:
        return self.handle

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.handle)
