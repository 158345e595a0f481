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
import operator

from .. import _hip_enums
from ._hippython_api import FUNCTIONS

_INT_BITS = {"int": (32, True), "unsigned int": (32, False), "const unsigned int": (32, False),
             "long": (64, True), "unsigned long": (64, False), "unsigned long long": (64, False),
             "long long": (64, True), "short": (16, True), "unsigned short": (16, False),
             "char": (8, True), "unsigned char": (8, False), "size_t": (64, False)}
_FLOATS = ("float", "double")


def _enum_class(name: str):
    cls = getattr(_hip_enums, name, None)
    if cls is None:
        from ..hiprtc import _enums as rtc_enums
        cls = getattr(rtc_enums, name, None)
    return cls


def _int_converter(ctype: str):
    bits, signed = _INT_BITS[ctype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)

    def conv(v):
        v = operator.index(v)
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


def converter(pname: str, ctype: str):
    """The argument converter of one parameter, or None to pass the object through."""
    if ctype in _INT_BITS:
        return _int_converter(ctype)
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
                raise TypeError(msg)
            return v
        return conv
    return None


def argument_checker(fn):
    """``check(args, kwargs) -> args``: binds like the hip-python function would (TypeError on bad arity)
    and converts the arguments; None when the function is not in hip-python's API."""
    spec = FUNCTIONS.get(fn.__name__)
    sig = inspect.signature(fn)
    params = list(sig.parameters)
    convs = [None] * len(params)
    if spec is not None:
        table = dict(spec["params"])
        for i, p in enumerate(params):
            if p in table:
                convs[i] = converter(p, table[p])
    active = [(i, c) for i, c in enumerate(convs) if c is not None]
    n = len(params)
    has_var = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())

    def check(args, kwargs):
        if kwargs or len(args) != n or has_var:
            ba = sig.bind(*args, **kwargs)
            ba.apply_defaults()
            args = ba.args
        if active:
            args = list(args)
            for i, c in active:
                if i < len(args):
                    args[i] = c(args[i])
        return args
    return check
