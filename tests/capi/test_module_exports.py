"""The C ABI's functions are module-level functions of their area (pyhip/capi/<area>.py), recorded by the
``@export`` decorators: importable and callable one by one, and the very functions the shim exports."""
import subprocess
import sys
import textwrap

from pyhip.capi import common, impl, rtc
from pyhip.capi.device_config import hipCtxGetCacheConfig, hipDeviceGetCacheConfig
from pyhip.capi.memory import hipMalloc, pyhip_slow_hipMemcpy
from pyhip.capi.peers import hipDeviceCanAccessPeer, hipDeviceGetP2PAttribute
from pyhip.capi.registration import register_fatbin
from pyhip.capi.rtc import hiprtcLinkCreate, hiprtcVersion
from pyhip.capi.streams import hipStreamSynchronize_spt
from pyhip.capi.textures import hipCreateTextureObject


def recorded() -> dict:
    import importlib

    for name in impl.AREAS:
        importlib.import_module(f"pyhip.capi.{name}")
    return {name: fn for name, _kind, fn in common.EXPORTS}


def test_functions_are_the_recorded_exports():
    exports = recorded()
    for fn in (hipDeviceCanAccessPeer, hipDeviceGetP2PAttribute, hipMalloc, pyhip_slow_hipMemcpy,
               hipStreamSynchronize_spt, hipCtxGetCacheConfig, hipDeviceGetCacheConfig, hipCreateTextureObject):
        assert exports[fn.__name__] is fn
    assert exports["__hipRegisterFatBinary"] is register_fatbin
    kinds = {name: kind for name, kind, _fn in common.EXPORTS}
    assert kinds["__hipRegisterFatBinary"] == "raw" and kinds["hipMalloc"] == "error"
    assert len(exports) == len(common.EXPORTS)               # one function per C name
    rtc_exports = {name: (fn, link_only) for name, fn, link_only in rtc._EXPORTS}
    assert rtc_exports["hiprtcVersion"] == (hiprtcVersion, False)
    assert rtc_exports["hiprtcLinkCreate"] == (hiprtcLinkCreate, True)


def test_a_function_called_alone_is_the_one_c_calls():
    """Loaded into a process, the shim binds the context the module functions use: calling one from Python
    gives what the C export returns."""
    code = textwrap.dedent("""
        import ctypes
        from pyhip.capi.shim import load_in_process
        lib, code = load_in_process()
        from pyhip.capi import impl
        from pyhip.capi.common import c
        from pyhip.capi.peers import hipDeviceCanAccessPeer, hipDeviceGetP2PAttribute
        from pyhip.errors import HipError
        assert impl.current is c and "hipDeviceCanAccessPeer" in c.exported
        out = c.ffi.new("int*")
        assert hipDeviceCanAccessPeer(out, 0, 0) is None
        n = ctypes.c_int(-1)
        assert lib.hipDeviceCanAccessPeer(ctypes.byref(n), 0, 0) == 0 and n.value == out[0]
        try:
            hipDeviceGetP2PAttribute(out, 1, 0, 0)            # the same device twice: hipErrorInvalidDevice
        except HipError as exc:
            py = int(exc.code)
        assert lib.hipDeviceGetP2PAttribute(ctypes.byref(n), 1, 0, 0) == py == 101
        print("ok")
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.split() == ["ok"], p.stdout[-2000:] + p.stderr[-2000:]
