"""hiprtc's linker API: hiprtcLinkCreate / AddFile / AddData / Complete / Destroy over a :class:`LinkState`."""
from __future__ import annotations

import ctypes
from pathlib import Path

from ..hip.pointers import NDBuffer, address_of, as_name, list_of_pointers
from ._enums import _hiprtcJIT_option__Base, hiprtcJIT_option
from ._enums import hiprtcResult as R
from .convention import rtc_api
from .program import LinkState, RtcError, resolve


def _state(state) -> LinkState:
    return resolve(state, LinkState, "link state")


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
