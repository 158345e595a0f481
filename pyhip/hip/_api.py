"""Helpers of ``pyhip.hip``: hip-python's ``(err, value…)`` convention and HIP's thread-local last error."""
from __future__ import annotations

import functools
import inspect
import threading

from ..errors import HipError, LoaderError, hipError_t
from .conventions import argument_checker

_tls = threading.local()
_OK = hipError_t.hipSuccess


def set_last_error(code: int) -> None:
    if type(code) is not hipError_t:            # a member is stored as it is (an enum lookup costs µs per call)
        code = hipError_t._value2member_map_.get(int(code), int(code))
    _tls.last = code


def invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


def get_last_error(reset: bool):
    err = getattr(_tls, "last", hipError_t.hipSuccess)
    if reset:
        _tls.last = hipError_t.hipSuccess
    return err


def _errval(exc: BaseException) -> hipError_t:
    if isinstance(exc, HipError):
        return exc.code if isinstance(exc.code, hipError_t) else hipError_t.hipErrorUnknown
    if isinstance(exc, (TypeError, ValueError, OverflowError)):
        return hipError_t.hipErrorInvalidValue
    if isinstance(exc, MemoryError):
        return hipError_t.hipErrorOutOfMemory
    return hipError_t.hipErrorUnknown


def hip_api(nvalues: int = 0):
    """Wrap an implementation that returns None, a value, or a tuple of ``nvalues`` values and raises
    HipError on failure, into hip-python's convention: ``(err,)`` or ``(err, v1, ...)``; failures give
    ``(err, None, ...)``.  Like HIP 5.2, every call overwrites the thread's last error.  Arguments are first
    bound and converted the way hip-python's wrapper of the same name does (conventions.py): a wrong
    argument count or type raises TypeError/OverflowError instead of returning an error."""

    def deco(fn):
        check = argument_checker(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            args = check(args, kwargs)
            try:
                out = fn(*args)
            except (HipError, TypeError, ValueError, OverflowError, MemoryError) as exc:
                err = _errval(exc)
                set_last_error(err)
                _tls.last_exception = exc
                return (err,) + (None,) * nvalues
            _tls.last = _OK
            if nvalues == 0:
                return (hipError_t.hipSuccess,)
            if nvalues == 1:
                return (hipError_t.hipSuccess, out)
            return (hipError_t.hipSuccess, *out)
        wrapper.__hip_api__ = True
        return wrapper
    return deco


def face(name: str, impl, nvalues: int = 0, result=None):
    """The hip-python function ``name`` over a shared implementation (pyhip.hipapi): hip-python's parameters,
    names and order from its API table, passed on to ``impl`` in that order; ``result`` (when given) turns what
    ``impl`` returns into what hip-python returns (an enum member)."""
    from ._hippython_api import FUNCTIONS

    params = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p, _ in FUNCTIONS[name]["params"]]

    def fn(*args):
        out = impl(*args)
        return out if result is None else result(out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = impl.__doc__
    fn.__signature__ = inspect.Signature(params)
    return hip_api(nvalues)(fn)


SUCCESS = (hipError_t.hipSuccess,)


def fast_path_of(full):
    """Decorator: ``fast(*args)`` answers a call itself (returning ``(hipSuccess,)``, the thread's last error set)
    or returns None, and then ``full`` — the hip_api implementation, whose name, signature and checks the
    result takes — handles it."""
    n = len(inspect.signature(full).parameters)

    def deco(fast):
        @functools.wraps(full)
        def api(*args, **kwargs):
            if not kwargs and len(args) == n:
                r = fast(*args)
                if r is not None:
                    _tls.last = hipError_t.hipSuccess
                    return r
            return full(*args, **kwargs)
        return api
    return deco


def last_exception():
    """The exception behind the most recent failing call on this thread (for diagnostics)."""
    return getattr(_tls, "last_exception", None)


def as_str(name) -> str:
    if isinstance(name, (bytes, bytearray)):
        return bytes(name).decode("utf-8")
    if not isinstance(name, str):
        raise HipError(hipError_t.hipErrorInvalidValue, f"expected a name, got {type(name).__name__}")
    return name
