"""The C ABI of hiprtc (``hiprtc.h``): the same programs and link states as ``pyhip.hiprtc``, behind C
signatures.  Installed into the drop-in ``libamdhip64.so.5`` (HIP 5.2 exports the 11 compile functions from
it, version node hip_4.2) and into the drop-in ``libhiprtc.so.5`` (AMD's separate library; ROCm 5.4's 18
functions, link API and bitcode included).  Nothing unwinds into C: a failure is its hiprtcResult, anything
unexpected HIPRTC_ERROR_INTERNAL_ERROR.  The C prototypes are in native/hip/build_hiprtc.py."""
from __future__ import annotations

import threading

_keep: list = []              # C strings and linked images handed out to C (AMD never frees these either)
_keep_lock = threading.Lock()


def install(ffi, link_api: bool) -> None:
    """Define the hiprtc exports on an embedding ``ffi`` (``link_api``: also ROCm 5.4's link/bitcode API)."""
    from .. import hiprtc as H
    from ..hiprtc.program import Program, RtcError, lookup

    R = H.hiprtcResult
    INTERNAL = int(R.HIPRTC_ERROR_INTERNAL_ERROR)
    names: dict[int, object] = {}

    def addr(p) -> int:
        return int(ffi.cast("uintptr_t", p))

    def keep(obj):
        with _keep_lock:
            _keep.append(obj)
        return obj

    def export(fn):
        def wrapper(*args):
            try:
                r = fn(*args)
            except RtcError as exc:
                return int(exc.code)
            except Exception:  # noqa: BLE001 - nothing may unwind into C
                return INTERNAL
            return int(r[0]) if isinstance(r, tuple) else 0
        wrapper.__name__ = fn.__name__
        return ffi.def_extern(name=fn.__name__)(wrapper)

    def cstr(p) -> bytes | None:
        return None if p == ffi.NULL else ffi.string(p)

    def strings(arr, n: int) -> list[bytes]:
        if n <= 0:
            return []
        if arr == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "NULL array")
        return [ffi.string(arr[i]) if arr[i] != ffi.NULL else b"" for i in range(n)]

    @ffi.def_extern(name="hiprtcGetErrorString")
    def get_error_string(result):
        try:
            name = R(int(result)).name
        except ValueError:
            return ffi.NULL
        p = names.get(int(result))
        if p is None:
            p = names[int(result)] = keep(ffi.new("char[]", name.encode()))
        return p

    @export
    def hiprtcVersion(major, minor):
        if major == ffi.NULL or minor == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        r = H.hiprtcVersion()
        major[0], minor[0] = r[1], r[2]
        return r

    @export
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

    @export
    def hiprtcDestroyProgram(prog):
        if prog == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        return H.hiprtcDestroyProgram(addr(prog))

    @export
    def hiprtcAddNameExpression(prog, expr):
        if expr == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        return H.hiprtcAddNameExpression(addr(prog), cstr(expr))

    @export
    def hiprtcCompileProgram(prog, num_options, options):
        return H.hiprtcCompileProgram(addr(prog), max(num_options, 0), strings(options, num_options))

    @export
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

    for cname, impl in (("hiprtcGetProgramLogSize", size_getter(H.hiprtcGetProgramLogSize)),
                        ("hiprtcGetCodeSize", size_getter(H.hiprtcGetCodeSize)),
                        ("hiprtcGetProgramLog", copier(H.hiprtcGetProgramLog)),
                        ("hiprtcGetCode", copier(H.hiprtcGetCode))):
        impl.__name__ = cname
        export(impl)
    if not link_api:
        return

    for cname, impl in (("hiprtcGetBitcodeSize", size_getter(H.hiprtcGetBitcodeSize)),
                        ("hiprtcGetBitcode", copier(H.hiprtcGetBitcode))):
        impl.__name__ = cname
        export(impl)

    def input_type(v):
        try:
            return H.hiprtcJITInputType(int(v))
        except ValueError:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"unknown input type {int(v)}") from None

    @export
    def hiprtcLinkCreate(num_options, option_ptr, option_vals, state_ptr):
        if state_ptr == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        if num_options and (option_ptr == ffi.NULL or option_vals == ffi.NULL):
            raise RtcError(R.HIPRTC_ERROR_INVALID_OPTION)
        r = H.hiprtcLinkCreate(num_options, addr(option_ptr) or None, addr(option_vals) or None)
        if r[0] == 0:
            state_ptr[0] = ffi.cast("void*", int(r[1]))
        return r

    @export
    def hiprtcLinkAddFile(state, kind, path, num_options, options, values):
        if state == ffi.NULL or path == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        return H.hiprtcLinkAddFile(addr(state), input_type(kind), cstr(path), num_options, None, None)

    @export
    def hiprtcLinkAddData(state, kind, image, size, name, num_options, options, values):
        if state == ffi.NULL or image == ffi.NULL or size == 0:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        return H.hiprtcLinkAddData(addr(state), input_type(kind), addr(image), int(size), cstr(name) or b"",
                                   num_options, None, None)

    @export
    def hiprtcLinkComplete(state, bin_out, size_out):
        if state == ffi.NULL or bin_out == ffi.NULL or size_out == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        r = H.hiprtcLinkComplete(addr(state))
        if r[0] == 0:
            keep(r[1])
            bin_out[0] = ffi.cast("void*", int(r[1]))
            size_out[0] = r[2]
        return r

    @export
    def hiprtcLinkDestroy(state):
        if state == ffi.NULL:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT)
        return H.hiprtcLinkDestroy(addr(state))


def install_library() -> None:
    """Embedding init of the drop-in libhiprtc.so.5."""
    from _pyhip_hiprtc_shim import ffi  # provided by the embedding

    install(ffi, link_api=True)
