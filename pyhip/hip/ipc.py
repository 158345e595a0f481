"""``pyhip.hip`` IPC: device memory and events shared with other processes (pyhip/hipapi/ipc.py)."""
from __future__ import annotations

import ctypes

from ..hipapi import ipc as api
from ..runtime.memory import DevicePointer
from ._api import hip_api
from .memory import _addr
from .structs import hipIpcEventHandle_st, hipIpcMemHandle_st


def _handle_bytes(handle, kind) -> bytes:
    return bytes(kind.fromObj(handle))[:api.HANDLE_SIZE]


def _filled(kind, raw: bytes):
    h = kind()
    ctypes.memmove(int(h), raw, api.HANDLE_SIZE)
    return h


@hip_api(1)
def hipIpcGetMemHandle(devPtr):
    return _filled(hipIpcMemHandle_st, api.get_mem_handle(_addr(devPtr)))


@hip_api(1)
def hipIpcOpenMemHandle(handle, flags):
    return DevicePointer(api.open_mem_handle(_handle_bytes(handle, hipIpcMemHandle_st), flags))


@hip_api()
def hipIpcCloseMemHandle(devPtr):
    api.close_mem_handle(_addr(devPtr))


@hip_api()
def hipIpcGetEventHandle(handle, event):
    """Fills ``handle`` (a hipIpcEventHandle_st) as hip-python's does."""
    raw = api.get_event_handle(event)
    ctypes.memmove(int(hipIpcEventHandle_st.fromObj(handle)), raw, api.HANDLE_SIZE)


@hip_api(1)
def hipIpcOpenEventHandle(handle):
    return api.open_event_handle(_handle_bytes(handle, hipIpcEventHandle_st))
