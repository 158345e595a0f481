"""The C ABI's profiler and activity-callback hooks and build information: no tracer is attached."""
from __future__ import annotations


def install(c) -> None:
    ffi = c.ffi

    @c.export
    def hipProfilerStart():
        return None

    @c.export
    def hipProfilerStop():
        return None

    @c.export_raw("hipApiName")
    def api_name(op):
        return c.cstring("unknown")

    @c.export_raw("hipGetCmdName")
    def cmd_name(op):
        return c.cstring("unknown")

    @c.export_raw("hipEnableActivityCallback")
    def enable_activity(op, enable):
        return False

    @c.export_raw("hipInitActivityCallback")
    def init_activity(id_cb, op_cb, arg):
        return None

    @c.export_raw("amd_dbgapi_get_build_id")
    def build_id():
        return 0

    @c.export_raw("amd_dbgapi_get_build_name")
    def build_name():
        return c.cstring("pyhip")

    @c.export_raw("amd_dbgapi_get_git_hash")
    def git_hash():
        return c.cstring("pyhip")

    @c.export_raw("__hipGetPCH")
    def get_pch(pch, size):
        if pch != ffi.NULL:
            pch[0] = ffi.NULL
        if size != ffi.NULL:
            size[0] = 0
