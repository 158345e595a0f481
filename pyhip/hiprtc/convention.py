"""hip-python's calling convention for hiprtc functions (``rtc_api``) and the exception behind the last
failing call of a thread."""
from __future__ import annotations

import functools
import threading

from ..hip.conventions import argument_checker
from ._enums import hiprtcResult as R
from .program import RtcError

_tls = threading.local()


def rtc_api(nvalues: int = 0):
    """hip-python's convention for hiprtc: ``(hiprtcResult,)`` or ``(hiprtcResult, v1, ...)``; failures give
    ``(code, None, ...)``; argument count and types are checked like hip-python's wrappers (TypeError)."""

    def deco(fn):
        check = argument_checker(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            args = check(args, kwargs)
            try:
                out = fn(*args)
            except RtcError as exc:
                _tls.last_exception = exc
                return (exc.code,) + (None,) * nvalues
            except (TypeError, ValueError, OverflowError) as exc:
                _tls.last_exception = exc
                return (R.HIPRTC_ERROR_INVALID_INPUT,) + (None,) * nvalues
            if nvalues == 0:
                return (R.HIPRTC_SUCCESS,)
            if nvalues == 1:
                return (R.HIPRTC_SUCCESS, out)
            return (R.HIPRTC_SUCCESS, *out)
        return wrapper
    return deco


def last_exception():
    """The exception behind the most recent failing hiprtc call on this thread (for diagnostics)."""
    return getattr(_tls, "last_exception", None)
