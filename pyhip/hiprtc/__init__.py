"""``pyhip.hiprtc``: HIP's runtime compilation API in hip-python's conventions (``from pyhip import hip, hiprtc``
replaces ``from hip import hip, hiprtc``).

Every call returns ``(hiprtcResult, values...)`` (``hiprtcGetErrorString`` a 1-tuple, like hip-python); outputs
the caller allocates (log, code, bitcode) are written into the buffer passed.  Source is compiled by an
installed clang the way AMD's hiprtc compiles it (see toolchain.py); without one, hiprtcCompileProgram returns
HIPRTC_ERROR_COMPILATION and the program log says what to install.  The C ABI (``libhiprtc.so.5`` and the
hiprtc exports of ``libamdhip64.so.5``) runs the same code (pyhip/capi/rtc.py).
"""
from __future__ import annotations

import ctypes

from ..hip.pointers import CStr, Pointer, address_of, as_name, list_of_bytes  # noqa: F401 (hip-python's names)
from ._enums import hiprtcJIT_option, hiprtcJITInputType, hiprtcResult
from ._enums import _hiprtcJIT_option__Base, _hiprtcJITInputType__Base, _hiprtcResult__Base  # noqa: F401
from .convention import last_exception, rtc_api  # noqa: F401 (last_exception: pyhip's diagnostics)
from .link import (hiprtcLinkAddData, hiprtcLinkAddFile, hiprtcLinkComplete, hiprtcLinkCreate,  # noqa: F401
                   hiprtcLinkDestroy)
from .program import LinkState, Program, RtcError, lookup, resolve

R = hiprtcResult

_hiprtcProgram = hiprtcProgram = Program
ihiprtcLinkState = hiprtcLinkState = LinkState


def _program(prog) -> Program:
    return resolve(prog, Program, "prog")


def _write_out(dst, data: bytes, what: str) -> None:
    """Copy into a caller-provided buffer (bytearray, numpy, ctypes) or address, like hiprtc's memcpy; a
    Python buffer is never overrun."""
    if dst is None:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"{what} buffer is NULL")
    try:
        mv = memoryview(dst)
    except TypeError:
        mv = None
    if mv is not None and not isinstance(dst, ctypes.c_void_p):
        if mv.readonly:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"{what} buffer is read-only")
        mv = mv.cast("B")
        n = min(len(data), mv.nbytes)
        mv[:n] = data[:n]
        return
    addr = address_of(dst)
    if not addr:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"{what} buffer is NULL")
    ctypes.memmove(addr, data, len(data))


# -- the API -------------------------------------------------------------------------------------------------
def hiprtcGetErrorString(result):
    """``(name,)``: a 1-tuple, as in hip-python."""
    if not isinstance(result, _hiprtcResult__Base):
        raise TypeError("argument 'result' must be of type '_hiprtcResult__Base'")
    return (CStr(result.name),)


@rtc_api(2)
def hiprtcVersion():
    return 9, 0                                 # what AMD's hiprtc 5.2-5.4 reports


@rtc_api(1)
def hiprtcCreateProgram(src, name, numHeaders, headers, includeNames):
    if numHeaders < 0:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "numHeaders < 0")
    hdrs = list_of_bytes(headers, numHeaders)
    names = list_of_bytes(includeNames, numHeaders)
    if len(hdrs) < numHeaders or len(names) < numHeaders:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"{numHeaders} headers announced, fewer given")
    source = as_name(src) if src is not None else ""
    pname = as_name(name) if name is not None else ""
    return Program(source, pname, [(names[i].decode(), hdrs[i]) for i in range(numHeaders)])


@rtc_api()
def hiprtcDestroyProgram(prog):
    """``prog`` is a ``hiprtcProgram*`` (hip-python passes ``prog.createRef()``); pyhip also takes the program."""
    if isinstance(prog, Program):
        p = _program(prog)
    else:
        addr = address_of(prog)
        if not addr:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "prog is NULL")
        try:
            p = lookup(addr, Program)
        except RtcError:
            p = lookup(ctypes.c_void_p.from_address(addr).value or 0, Program)
    p.destroy()


@rtc_api()
def hiprtcAddNameExpression(prog, name_expression):
    if name_expression is None:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "name_expression is NULL")
    _program(prog).add_name_expression(as_name(name_expression))


@rtc_api()
def hiprtcCompileProgram(prog, numOptions, options):
    p = _program(prog)
    opts = [o.decode() for o in list_of_bytes(options, numOptions)][:max(numOptions, 0)]
    p.compile(opts)


@rtc_api(1)
def hiprtcGetLoweredName(prog, name_expression):
    if name_expression is None:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "name_expression is NULL")
    return CStr(_program(prog).lowered_name(as_name(name_expression)))


@rtc_api(1)
def hiprtcGetProgramLogSize(prog):
    return len(_program(prog).log.encode())


@rtc_api()
def hiprtcGetProgramLog(prog, log):
    _write_out(log, _program(prog).log.encode(), "log")


@rtc_api(1)
def hiprtcGetCodeSize(prog):
    return len(_program(prog).code)


@rtc_api()
def hiprtcGetCode(prog, code):
    _write_out(code, _program(prog).code, "code")


@rtc_api(1)
def hiprtcGetBitcodeSize(prog):
    return len(_program(prog).get_bitcode())


@rtc_api()
def hiprtcGetBitcode(prog, bitcode):
    _write_out(bitcode, _program(prog).get_bitcode(), "bitcode")


from . import ext  # noqa: E402  (hip-python's hiprtc.ext: hiprtcLinkCreate2, HiprtcLinkCreateOpts)

__all__ = [n for n in dir() if n.startswith(("hiprtc", "ihiprtc", "_hiprtc"))] + ["ext", "Pointer", "CStr",
                                                                                 "last_exception"]
