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
import functools
import threading
from pathlib import Path

from ..hip.conventions import argument_checker
from ..hip.pointers import CStr, NDBuffer, Pointer, address_of, as_name, list_of_bytes, list_of_pointers
from ._enums import hiprtcJIT_option, hiprtcJITInputType, hiprtcResult
from ._enums import _hiprtcJIT_option__Base, _hiprtcJITInputType__Base, _hiprtcResult__Base  # noqa: F401
from .program import LinkState, Program, RtcError, lookup

R = hiprtcResult
_tls = threading.local()

_hiprtcProgram = hiprtcProgram = Program
ihiprtcLinkState = hiprtcLinkState = LinkState


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


def _program(prog) -> Program:
    if isinstance(prog, Program):
        return lookup(prog.handle, Program)
    if prog is None:
        raise RtcError(R.HIPRTC_ERROR_INVALID_PROGRAM, "prog is NULL")
    return lookup(address_of(prog), Program)


def _state(state) -> LinkState:
    if isinstance(state, LinkState):
        return lookup(state.handle, LinkState)
    if state is None:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "link state is NULL")
    return lookup(address_of(state), LinkState)


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


def _read_in(src, size: int) -> bytes:
    if src is None:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "image is NULL")
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src)[:size]
    if not isinstance(src, (int, ctypes.c_void_p)) and not hasattr(src, "__hip_pointer__"):
        try:
            return bytes(memoryview(src).cast("B"))[:size]
        except TypeError:
            pass
    addr = address_of(src)
    if not addr:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "image is NULL")
    return ctypes.string_at(addr, size)


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


def _jit_options(num: int, options, values) -> dict:
    if num <= 0:
        return {}
    if isinstance(options, (list, tuple)):
        for o in options:
            if not isinstance(o, _hiprtcJIT_option__Base):
                raise ValueError("list/tuple entries must be of type 'hip.hiprtc.hiprtcJIT_option'")
        keys = [int(o) for o in options][:num]
    else:
        addr = address_of(options)
        keys = list((ctypes.c_uint * num).from_address(addr)) if addr else []
    vals = list_of_pointers(values, num)
    if len(keys) < num or len(vals) < num:
        raise RtcError(R.HIPRTC_ERROR_INVALID_OPTION, f"{num} options announced, fewer given")
    out = {}
    for k, v in zip(keys, vals):
        try:
            out[hiprtcJIT_option(k)] = v
        except ValueError:
            raise RtcError(R.HIPRTC_ERROR_INVALID_OPTION, f"unknown JIT option {k}") from None
    return out


@rtc_api(1)
def hiprtcLinkCreate(num_options, option_ptr, option_vals_pptr):
    state = LinkState(_jit_options(num_options, option_ptr, option_vals_pptr))
    state._keep = (option_ptr, option_vals_pptr)
    return state


@rtc_api()
def hiprtcLinkAddFile(hip_link_state, input_type, file_path, num_options, options_ptr, option_values):
    state = _state(hip_link_state)
    try:
        data = Path(as_name(file_path)).read_bytes()
    except OSError as exc:
        raise RtcError(R.HIPRTC_ERROR_PROGRAM_CREATION_FAILURE, str(exc)) from None
    state.add(input_type, data, Path(as_name(file_path)).name)


@rtc_api()
def hiprtcLinkAddData(hip_link_state, input_type, image, image_size, name, num_options, options_ptr, option_values):
    state = _state(hip_link_state)
    if image_size <= 0:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "image_size must be positive")
    state.add(input_type, _read_in(image, image_size), as_name(name) if name is not None else "")


@rtc_api(2)
def hiprtcLinkComplete(hip_link_state):
    """``(result, code, size)``: ``code`` points to the linked code object (owned by the link state, like
    AMD's buffer); ``hip.hipModuleLoadData(code)`` loads it."""
    state = _state(hip_link_state)
    code = state.complete()
    buf = ctypes.create_string_buffer(code, len(code))
    out = NDBuffer.fromPtr(ctypes.addressof(buf))
    out._keep = buf
    out.configure(_force=True, shape=(len(code),))
    state.outputs = getattr(state, "outputs", []) + [buf]
    return out, len(code)


@rtc_api()
def hiprtcLinkDestroy(hip_link_state):
    _state(hip_link_state).destroy()


from . import ext  # noqa: E402  (hip-python's hiprtc.ext: hiprtcLinkCreate2, HiprtcLinkCreateOpts)

__all__ = [n for n in dir() if n.startswith(("hiprtc", "ihiprtc", "_hiprtc"))] + ["ext", "Pointer", "CStr",
                                                                                 "last_exception"]
