"""hip-python's argument conventions, applied to every ``pyhip.hip`` / ``pyhip.hiprtc`` function from the
generated table of hip-python's API (``_hippython_api.FUNCTIONS``).

Like hip-python's Cython wrappers, and before anything runs: a wrong number of arguments or an unknown
keyword raises ``TypeError``; a C integer parameter takes an object with ``__index__`` (``TypeError`` for a
float, ``OverflowError`` out of range); a C float takes a number; an enum parameter must be an instance of
the enum (``TypeError`` otherwise, e.g. for a plain int).  Pointer, struct and string parameters are left to
the implementation (see ``pointers`` and ``structs``).
"""
from __future__ import annotations

import inspect
import threading
import operator

from .. import _hip_enums
from ._hippython_api import FUNCTIONS

_INT_BITS = {"int": (32, True), "unsigned int": (32, False), "const unsigned int": (32, False),
             "long": (64, True), "unsigned long": (64, False), "unsigned long long": (64, False),
             "long long": (64, True), "short": (16, True), "unsigned short": (16, False),
             "char": (8, True), "signed char": (8, True), "unsigned char": (8, False), "size_t": (64, False)}
_FLOATS = ("float", "double")


def _enum_class(name: str):
    cls = getattr(_hip_enums, name, None)
    if cls is None:
        from ..hiprtc import _enums as rtc_enums
        cls = getattr(rtc_enums, name, None)
    return cls


def int_converter(ctype: str):
    bits, signed = _INT_BITS[ctype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)

    def conv(v):
        if type(v) is int and lo <= v <= hi:
            return v
        try:
            v = operator.index(v)
        except TypeError:
            # Cython converts through __int__ too: a float truncates (hip-python's own examples pass
            # hip.dim3(n / block.x)); str and None stay TypeError
            if isinstance(v, (str, bytes, bytearray)) or not hasattr(v, "__int__"):
                raise TypeError(f"an integer is required, not {type(v).__name__}") from None
            v = int(v)
        if not lo <= v <= hi:
            if v < 0 and not signed:
                raise OverflowError(f"can't convert negative value to {ctype}")
            raise OverflowError(f"value too large to convert to {ctype}")
        return v
    return conv


def _float_converter(v):
    if isinstance(v, (str, bytes, bytearray)):
        raise TypeError(f"must be real number, not {type(v).__name__}")
    return float(v)


# ``c_caller.active`` is True in a thread while an export of the drop-in libamdhip64 runs (pyhip.capi's
# export wrappers set it): C passes enum arguments as integers, which hip-python's Python-level checks refuse
# — for Python callers, also in a process that loaded the library next to them (pyhip.triton), they still do.
c_caller = threading.local()


def converter(pname: str, ctype: str):
    """The argument converter of one parameter, or None to pass the object through."""
    if ctype in _INT_BITS:
        return int_converter(ctype)
    if ctype in _FLOATS:
        return _float_converter
    if ctype.startswith("enum "):
        ename = ctype[5:]
        cls = _enum_class(ename)
        if cls is None:
            return None
        base = cls.__mro__[1] if cls.__mro__[1].__name__ == f"_{ename}__Base" else cls
        msg = f"argument '{pname}' must be of type '_{ename}__Base'"

        def conv(v):
            if not isinstance(v, base):
                if isinstance(v, int) and getattr(c_caller, "active", False):
                    return v            # C callers pass enums as plain integers
                raise TypeError(msg)
            return v
        return conv
    return None


_MISSING = object()


def argument_checker(fn):
    """``check(args, kwargs) -> args``: binds like the hip-python function would (TypeError on bad arity or
    keywords) and converts the arguments by hip-python's C types (when the function is in its API)."""
    spec = FUNCTIONS.get(fn.__name__)
    sig = inspect.signature(fn)
    plist = list(sig.parameters.values())
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY) for p in plist):
        def check_var(args, kwargs):           # *args / **kwargs: leave binding to Python
            ba = sig.bind(*args, **kwargs)
            return ba.args if not ba.kwargs else (args, kwargs)
        return lambda args, kwargs: args if not kwargs else check_var(args, kwargs)
    params = [p.name for p in plist]
    index = {p: i for i, p in enumerate(params)}
    defaults = {i: p.default for i, p in enumerate(plist) if p.default is not p.empty}
    convs = [None] * len(params)
    if spec is not None:
        table = dict(spec["params"])
        for i, p in enumerate(params):
            if p in table:
                convs[i] = converter(p, table[p])
    active = tuple((i, c) for i, c in enumerate(convs) if c is not None)
    n, name = len(params), fn.__name__

    def bind(args, kwargs):
        if len(args) > n:
            raise TypeError(f"{name}() takes {n} positional arguments but {len(args)} were given")
        out = list(args) + [_MISSING] * (n - len(args))
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
            if out[i] is not _MISSING:
                raise TypeError(f"{name}() got multiple values for argument '{k}'")
            out[i] = v
        for i, v in enumerate(out):
            if v is _MISSING:
                if i not in defaults:
                    raise TypeError(f"{name}() missing required argument '{params[i]}' (pos {i + 1})")
                out[i] = defaults[i]
        return out

    def check(args, kwargs):
        if kwargs or len(args) != n:
            args = bind(args, kwargs)
        if active:
            args = list(args)
            for i, c in active:
                args[i] = c(args[i])
        return args
    return check
