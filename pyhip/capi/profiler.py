"""The C ABI's profiler and activity-callback hooks and build information: no tracer is attached."""
from __future__ import annotations
from .common import c, export, export_raw


@export
def hipProfilerStart():
    return None


@export
def hipProfilerStop():
    return None


@export_raw("hipApiName")
def api_name(op):
    return c.cstring("unknown")


@export_raw("hipGetCmdName")
def cmd_name(op):
    return c.cstring("unknown")


@export_raw("hipEnableActivityCallback")
def enable_activity(op, enable):
    return False


@export_raw("hipInitActivityCallback")
def init_activity(id_cb, op_cb, arg):
    return None


@export_raw("amd_dbgapi_get_build_id")
def build_id():
    return 0


@export_raw("amd_dbgapi_get_build_name")
def build_name():
    return c.cstring("pyhip")


@export_raw("amd_dbgapi_get_git_hash")
def git_hash():
    return c.cstring("pyhip")


@export_raw("__hipGetPCH")
def get_pch(pch, size):
    if pch != c.ffi.NULL:
        pch[0] = c.ffi.NULL
    if size != c.ffi.NULL:
        size[0] = 0
