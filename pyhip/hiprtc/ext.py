"""hip-python's ``hiprtc.ext``: link options from keyword arguments (``hiprtcLinkCreate2(HIPRTC_JIT_...=v)``)."""
from __future__ import annotations

import ctypes

from ._enums import hiprtcJIT_option as O
from .link import hiprtcLinkCreate

_BOOL = (O.HIPRTC_JIT_NEW_SM3X_OPT, O.HIPRTC_JIT_FAST_COMPILE)
_UINT = (O.HIPRTC_JIT_MAX_REGISTERS, O.HIPRTC_JIT_THREADS_PER_BLOCK, O.HIPRTC_JIT_OPTIMIZATION_LEVEL,
         O.HIPRTC_JIT_TARGET_FROM_HIPCONTEXT, O.HIPRTC_JIT_TARGET, O.HIPRTC_JIT_FALLBACK_STRATEGY,
         O.HIPRTC_JIT_CACHE_MODE, O.HIPRTC_JIT_GLOBAL_SYMBOL_COUNT)
_INT = (O.HIPRTC_JIT_GENERATE_DEBUG_INFO, O.HIPRTC_JIT_GENERATE_LINE_INFO, O.HIPRTC_JIT_LTO, O.HIPRTC_JIT_FTZ,
        O.HIPRTC_JIT_PREC_DIV, O.HIPRTC_JIT_PREC_SQRT, O.HIPRTC_JIT_FMA)
_BY_VALUE = (O.HIPRTC_JIT_INFO_LOG_BUFFER_SIZE_BYTES, O.HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
             O.HIPRTC_JIT_LOG_VERBOSE, O.HIPRTC_JIT_WALL_TIME)

__all__ = ["HiprtcLinkCreateOpts", "hiprtcLinkCreate2"]


class HiprtcLinkCreateOpts:
    """``hiprtcLinkCreate(*HiprtcLinkCreateOpts(HIPRTC_JIT_...=value, ...))``: unpacks to (count, keys,
    values) with each value stored the way hiprtc reads it (bool/uint/int by pointer, sizes by value)."""

    def __init__(self, **kwargs):
        self.num_opts, self.keys, self.values, self._keep = len(kwargs), [], [], []
        if not kwargs:
            self.keys = self.values = None
            return
        for name, value in kwargs.items():
            key = getattr(O, name, None)
            if key is None:
                raise KeyError(f"key '{name}' is not the name of an enum constant of type 'hiprtcJIT_option'")
            self.keys.append(key)
            if key in _BOOL or key in _UINT or key in _INT:
                cell = (ctypes.c_bool if key in _BOOL else ctypes.c_uint if key in _UINT else ctypes.c_int)(value)
                self._keep.append(cell)
                self.values.append(ctypes.addressof(cell))
            elif key in _BY_VALUE:
                self.values.append(ctypes.c_void_p(value))
            elif key in (O.HIPRTC_JIT_INFO_LOG_BUFFER, O.HIPRTC_JIT_ERROR_LOG_BUFFER,
                         O.HIPRTC_JIT_GLOBAL_SYMBOL_ADDRESS, O.HIPRTC_JIT_GLOBAL_SYMBOL_NAMES,
                         O.HIPRTC_JIT_IR_TO_ISA_OPT_EXT if hasattr(O, "HIPRTC_JIT_IR_TO_ISA_OPT_EXT") else None):
                self._keep.append(value)
                self.values.append(value)
            else:
                raise NotImplementedError(f"could not handle key '{name}'")

    def __len__(self) -> int:
        return 3

    def __getitem__(self, item):
        if isinstance(item, int):
            if item == 0:
                return self.num_opts
            if item == 1:
                return self.keys
            if item == 2:
                return self.values
            raise IndexError()
        raise ValueError("'item' type must be 'int'")


def hiprtcLinkCreate2(**kwargs):
    """hiprtcLinkCreate with the options as keyword arguments."""
    opts = HiprtcLinkCreateOpts(**kwargs)
    out = hiprtcLinkCreate(*opts)
    if out[1] is not None:
        out[1]._opts = opts                   # keep the option cells alive with the state
    return out
