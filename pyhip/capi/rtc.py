"""The C ABI of hiprtc (``hiprtc.h``): the same programs and link states as ``pyhip.hiprtc``, behind C
signatures.  Installed into the drop-in ``libamdhip64.so.5`` (HIP 5.2 exports the 11 compile functions from
it, version node hip_4.2) and into the drop-in ``libhiprtc.so.5`` (AMD's separate library; ROCm 5.4's 18
functions, link API and bitcode included).  Nothing unwinds into C: a failure is its hiprtcResult, anything
unexpected HIPRTC_ERROR_INTERNAL_ERROR.  The C prototypes are in native/hip/build_hiprtc.py."""
from __future__ import annotations

import threading

from .. import hiprtc as H
from ..hiprtc.program import Program, RtcError, lookup


R = H.hiprtcResult
INTERNAL = int(R.HIPRTC_ERROR_INTERNAL_ERROR)

_keep: list = []              # C strings and linked images handed out to C (AMD never frees these either)
_keep_lock = threading.Lock()
_names: dict[int, object] = {}   # hiprtcGetErrorString's C strings by result

# The hiprtc functions, in definition order: (C name, function, whether it is link/bitcode API only).  ``bind``
# makes each one the C export of its name in an embedding.
_EXPORTS: list[tuple[str, object, bool]] = []
_RAW: list[tuple[str, object]] = []

ffi = None       # the embedding's ffi (bind): the functions only cast pointers and make char arrays, types every
                 # cffi FFI shares, so one process's libamdhip64 and libhiprtc may both bind


def rtc_export(fn):
    """Record ``fn`` as the hiprtcResult C export of its name (libamdhip64 and libhiprtc)."""
    _EXPORTS.append((fn.__name__, fn, False))
    return fn


def rtc_export_link(fn):
    """Record ``fn`` as a C export of ROCm 5.4's link/bitcode API (libhiprtc only)."""
    _EXPORTS.append((fn.__name__, fn, True))
    return fn


def rtc_export_raw(name: str):
    """Record the decorated function as the C export ``name``, its value as is (it never raises)."""
    def deco(fn):
        _RAW.append((name, fn))
        return fn
    return deco


def bind(embedding_ffi, link_api: bool) -> None:
    """Define the hiprtc exports on an embedding's ``ffi`` (``link_api``: also ROCm 5.4's link/bitcode API)."""
    global ffi
    ffi = embedding_ffi
    for name, fn in _RAW:
        embedding_ffi.def_extern(name=name)(fn)
    for name, fn, link_only in _EXPORTS:
        if link_api or not link_only:
            embedding_ffi.def_extern(name=name)(_result_of(fn))


def _result_of(fn):
    """``fn`` as a hiprtcResult-returning C function: RtcError → its code, anything else INTERNAL_ERROR."""
    def wrapper(*args):
        try:
            r = fn(*args)
        except RtcError as exc:
            return int(exc.code)
        except Exception:  # noqa: BLE001 - nothing may unwind into C
            return INTERNAL
        return int(r[0]) if isinstance(r, tuple) else 0
    return wrapper


def addr(p) -> int:
    return int(ffi.cast("uintptr_t", p))


def keep(obj):
    with _keep_lock:
        _keep.append(obj)
    return obj


def cstr(p) -> bytes | None:
    return None if p == ffi.NULL else ffi.string(p)


def strings(arr, n: int) -> list[bytes]:
    if n <= 0:
        return []
    if arr == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "NULL array")
    return [ffi.string(arr[i]) if arr[i] != ffi.NULL else b"" for i in range(n)]


@rtc_export_raw("hiprtcGetErrorString")
def get_error_string(result):
    try:
        name = R(int(result)).name
    except ValueError:
        return ffi.NULL
    p = _names.get(int(result))
    if p is None:
        p = _names[int(result)] = keep(ffi.new("char[]", name.encode()))
    return p


@rtc_export
def hiprtcVersion(major, minor):
    if major == ffi.NULL or minor == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    r = H.hiprtcVersion()
    major[0], minor[0] = r[1], r[2]
    return r


@rtc_export
def hiprtcCreateProgram(prog, src, name, num_headers, headers, include_names):
    if prog == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_PROGRAM)
    if src == ffi.NULL or num_headers < 0:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    r = H.hiprtcCreateProgram(cstr(src), cstr(name), num_headers, strings(headers, num_headers),
                              strings(include_names, num_headers))
    if r[0] == 0:
        prog[0] = ffi.cast("void*", int(r[1]))
    return r


@rtc_export
def hiprtcDestroyProgram(prog):
    if prog == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    return H.hiprtcDestroyProgram(addr(prog))


@rtc_export
def hiprtcAddNameExpression(prog, expr):
    if expr == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    return H.hiprtcAddNameExpression(addr(prog), cstr(expr))


@rtc_export
def hiprtcCompileProgram(prog, num_options, options):
    return H.hiprtcCompileProgram(addr(prog), max(num_options, 0), strings(options, num_options))


@rtc_export
def hiprtcGetLoweredName(prog, expr, lowered):
    if expr == ffi.NULL or lowered == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    p = lookup(addr(prog), Program)
    name = p.lowered_name(ffi.string(expr).decode())
    store = p.__dict__.setdefault("_c_names", {})
    if name not in store:
        store[name] = ffi.new("char[]", name.encode())
    lowered[0] = store[name]
    return (R.HIPRTC_SUCCESS,)


def size_getter(fn):
    def get(prog, out):
        if out == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        r = fn(addr(prog))
        if r[0] == 0:
            out[0] = r[1]
        return r
    return get


def copier(fn):
    def get(prog, out):
        if out == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        return fn(addr(prog), addr(out))
    return get


_EXPORTS += [("hiprtcGetProgramLogSize", size_getter(H.hiprtcGetProgramLogSize), False),
             ("hiprtcGetCodeSize", size_getter(H.hiprtcGetCodeSize), False),
             ("hiprtcGetProgramLog", copier(H.hiprtcGetProgramLog), False),
             ("hiprtcGetCode", copier(H.hiprtcGetCode), False)]


_EXPORTS += [("hiprtcGetBitcodeSize", size_getter(H.hiprtcGetBitcodeSize), True),
             ("hiprtcGetBitcode", copier(H.hiprtcGetBitcode), True)]


def input_type(v):
    try:
        return H.hiprtcJITInputType(int(v))
    except ValueError:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"unknown input type {int(v)}") from None


@rtc_export_link
def hiprtcLinkCreate(num_options, option_ptr, option_vals, state_ptr):
    if state_ptr == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    if num_options and (option_ptr == ffi.NULL or option_vals == ffi.NULL):
        raise RtcError(R.HIPRTC_ERROR_INVALID_OPTION)
    r = H.hiprtcLinkCreate(num_options, addr(option_ptr) or None, addr(option_vals) or None)
    if r[0] == 0:
        state_ptr[0] = ffi.cast("void*", int(r[1]))
    return r


@rtc_export_link
def hiprtcLinkAddFile(state, kind, path, num_options, options, values):
    if state == ffi.NULL or path == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    return H.hiprtcLinkAddFile(addr(state), input_type(kind), cstr(path), num_options, None, None)


@rtc_export_link
def hiprtcLinkAddData(state, kind, image, size, name, num_options, options, values):
    if state == ffi.NULL or image == ffi.NULL or size == 0:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    return H.hiprtcLinkAddData(addr(state), input_type(kind), addr(image), int(size), cstr(name) or b"",
                               num_options, None, None)


@rtc_export_link
def hiprtcLinkComplete(state, bin_out, size_out):
    if state == ffi.NULL or bin_out == ffi.NULL or size_out == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    r = H.hiprtcLinkComplete(addr(state))
    if r[0] == 0:
        keep(r[1])
        bin_out[0] = ffi.cast("void*", int(r[1]))
        size_out[0] = r[2]
    return r


@rtc_export_link
def hiprtcLinkDestroy(state):
    if state == ffi.NULL:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
    return H.hiprtcLinkDestroy(addr(state))


def install_library() -> None:
    """Embedding init of the drop-in libhiprtc.so.5."""
    from _pyhip_hiprtc_shim import ffi  # provided by the embedding

    bind(ffi, link_api=True)
