"""Python implementations of the exported HIP functions (run inside the embedded interpreter).

Every function returns a hipError_t and never lets an exception escape into C: HipError → its code,
anything else → hipErrorUnknown, with the thread's last error set as HIP 5.2 does."""
from __future__ import annotations

import struct
import threading

from ..errors import HipError, error_name, hipError_t
from ..hip._api import get_last_error, set_last_error

HIPF_MAGIC = 0x48495046
_lock = threading.Lock()
_fatbins: dict[int, tuple[object, int]] = {}     # void** handle address -> (cdata slot, registry handle)
_streams: dict[int, object] = {}
_names: dict[int, object] = {}


def install() -> None:
    from _pyhip_hip_shim import ffi  # provided by the embedding

    from ..runtime import ops
    from ..runtime.context import runtime

    rt = runtime()

    def guarded(fn):
        def wrapper(*args):
            try:
                r = fn(*args)
                code = 0 if r is None else r
            except HipError as exc:
                code = int(exc.code)
            except Exception:  # noqa: BLE001 - nothing may unwind into C
                code = int(hipError_t.hipErrorUnknown)
            set_last_error(code)
            return code
        wrapper.__name__ = fn.__name__
        return ffi.def_extern(name=fn.__name__)(wrapper)

    def stream_of(handle):
        h = int(ffi.cast("uintptr_t", handle))
        if h == 0:
            return None
        if h == 2:
            return 2                      # hipStreamPerThread
        s = _streams.get(h)
        if s is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, f"unknown stream 0x{h:x}")
        return s

    def read_bundle(ptr) -> bytes:
        head = bytes(ffi.buffer(ptr, 32))
        if head[:4] == b"CCOB":
            version = struct.unpack_from("<H", head, 4)[0]
            total = struct.unpack_from("<I", head, 8)[0] if version == 2 else struct.unpack_from("<Q", head, 8)[0]
            return bytes(ffi.buffer(ptr, total))
        if head[:24] != b"__CLANG_OFFLOAD_BUNDLE__":
            raise HipError(hipError_t.hipErrorInvalidImage, "fat binary is not an offload bundle")
        (count,) = struct.unpack_from("<Q", head, 24)
        if not 0 < count < 4096:
            raise HipError(hipError_t.hipErrorInvalidImage, "absurd bundle entry count")
        pos, end = 32, 32
        for _ in range(count):
            off, size, idlen = struct.unpack("<QQQ", bytes(ffi.buffer(ffi.cast("char*", ptr) + pos, 24)))
            pos += 24 + idlen
            end = max(end, off + size, pos)
        return bytes(ffi.buffer(ptr, end))

    # -- registration (runs in ELF constructors, before main) -------------------------------------------
    @ffi.def_extern(name="__hipRegisterFatBinary")
    def register_fatbin(data):
        try:
            magic, version, binary = struct.unpack("<IIQ", bytes(ffi.buffer(data, 16)))
            if magic != HIPF_MAGIC or version != 1:
                return ffi.NULL
            blob = ffi.cast("void*", binary)
            handle = rt.registry.register_fatbin(lambda blob=blob: read_bundle(blob))
            slot = ffi.new("void*[1]")
            addr = int(ffi.cast("uintptr_t", slot))
            with _lock:
                _fatbins[addr] = (slot, handle)
            return ffi.cast("void**", slot)
        except Exception:  # noqa: BLE001
            return ffi.NULL

    def fatbin_handle(modules) -> int:
        entry = _fatbins.get(int(ffi.cast("uintptr_t", modules)))
        if entry is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, "unknown fat binary handle")
        return entry[1]

    @ffi.def_extern(name="__hipRegisterFunction")
    def register_function(modules, host_fn, device_fn, device_name, thread_limit, tid, bid, bdim, gdim, wsize):
        try:
            rt.registry.register_function(fatbin_handle(modules), int(ffi.cast("uintptr_t", host_fn)),
                                          ffi.string(device_name).decode())
        except Exception:  # noqa: BLE001
            pass

    @ffi.def_extern(name="__hipRegisterVar")
    def register_var(modules, var, host_var, device_var, ext, size, constant, glob):
        try:
            rt.registry.register_variable(fatbin_handle(modules), int(ffi.cast("uintptr_t", var)),
                                          ffi.string(device_var).decode(), int(size), bool(constant))
        except Exception:  # noqa: BLE001
            pass

    @ffi.def_extern(name="__hipUnregisterFatBinary")
    def unregister(modules):
        try:
            rt.registry.unregister_fatbin(fatbin_handle(modules))
        except Exception:  # noqa: BLE001
            pass

    # -- launches ------------------------------------------------------------------------------------------
    @guarded
    def __hipPushCallConfiguration(grid, block, shared, stream):
        rt.call_config.push((grid.x, grid.y, grid.z), (block.x, block.y, block.z), shared, stream_of(stream))

    @guarded
    def __hipPopCallConfiguration(grid, block, shared, stream):
        g, b, sh, st = rt.call_config.pop()
        grid.x, grid.y, grid.z = g
        block.x, block.y, block.z = b
        shared[0] = sh
        stream[0] = ffi.cast("void*", 0 if st is None else (2 if st == 2 else id(st)))

    def launch(handle, grid, block, args, shared, stream):
        st = rt.resolve_stream(stream_of(stream))
        f = rt.function_for_handle(int(ffi.cast("uintptr_t", handle)), st.device)
        explicit = f.kernel.explicit_args
        blob = bytearray(max((a.offset + a.size for a in explicit), default=0))
        for i, a in enumerate(explicit):
            blob[a.offset:a.offset + a.size] = bytes(ffi.buffer(args[i], a.size))
        f.launch(st, (grid.x, grid.y, grid.z), (block.x, block.y, block.z), int(shared), raw=bytes(blob))

    @guarded
    def hipLaunchKernel(handle, grid, block, args, shared, stream):
        launch(handle, grid, block, args, shared, stream)

    @guarded
    def hipLaunchKernel_spt(handle, grid, block, args, shared, stream):
        launch(handle, grid, block, args, shared, stream if int(ffi.cast("uintptr_t", stream)) else ffi.cast("void*", 2))

    # -- memory --------------------------------------------------------------------------------------------
    def addr(p) -> int:
        return int(ffi.cast("uintptr_t", p))

    @guarded
    def hipMalloc(ptr, size):
        if ptr == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null result pointer")
        ptr[0] = ffi.cast("void*", int(ops.malloc(size)))

    @guarded
    def hipFree(ptr):
        ops.free(addr(ptr))

    @guarded
    def hipHostMalloc(ptr, size, flags):
        hp = ops.host_malloc(size, flags)
        _names[int(hp)] = hp                  # keep the buffer alive until hipHostFree
        ptr[0] = ffi.cast("void*", int(hp))

    @guarded
    def hipHostFree(ptr):
        ops.host_free(addr(ptr))
        _names.pop(addr(ptr), None)

    @guarded
    def hipMemcpy(dst, src, size, kind):
        ops.memcpy(addr(dst), addr(src), size, kind, None, sync=True)

    @guarded
    def hipMemcpyAsync(dst, src, size, kind, stream):
        ops.memcpy(addr(dst), addr(src), size, kind, stream_of(stream), sync=False)

    @guarded
    def hipMemset(dst, value, size):
        ops.memset(addr(dst), value, size, 1, None, sync=True)

    def symbol_address(symbol) -> int:
        info = rt.registry.variable(addr(symbol))
        fb = rt.registry.fatbins[info.fatbin]
        dev = rt.device()
        from ..runtime.module import Module
        module = rt.registry.loaded(fb, dev.index, dev.isa, lambda co: Module(dev, None, code_object=co))
        return module.global_var(info.name)[0]

    @guarded
    def hipMemcpyToSymbol(symbol, src, size, offset, kind):
        ops.memcpy(symbol_address(symbol) + offset, addr(src), size, 4, None, sync=True)

    @guarded
    def hipMemcpyFromSymbol(dst, symbol, size, offset, kind):
        ops.memcpy(addr(dst), symbol_address(symbol) + offset, size, 4, None, sync=True)

    # -- devices, errors, streams ------------------------------------------------------------------------------
    @guarded
    def hipGetDeviceCount(count):
        count[0] = len(rt.devices)

    @guarded
    def hipSetDevice(d):
        rt.set_device(int(d))

    @guarded
    def hipGetDevice(d):
        d[0] = rt.current_index()

    @guarded
    def hipDeviceSynchronize():
        rt.device().synchronize()

    @ffi.def_extern(name="hipGetLastError")
    def get_last():
        return int(get_last_error(reset=True))

    @ffi.def_extern(name="hipPeekAtLastError")
    def peek_last():
        return int(get_last_error(reset=False))

    def name_of(code):
        code = int(code)
        s = _names.get(-code - 1)
        if s is None:
            s = _names[-code - 1] = ffi.new("char[]", error_name(code).encode())
        return s

    @ffi.def_extern(name="hipGetErrorName")
    def get_error_name(code):
        return name_of(code)

    @ffi.def_extern(name="hipGetErrorString")
    def get_error_string(code):
        return name_of(code)

    @guarded
    def hipStreamCreate(stream):
        s = rt.device().new_stream()
        _streams[id(s)] = s
        stream[0] = ffi.cast("void*", id(s))

    @guarded
    def hipStreamDestroy(stream):
        s = stream_of(stream)
        if s is None or s == 2:
            raise HipError(hipError_t.hipErrorInvalidHandle, "cannot destroy this stream")
        s.destroy()
        _streams.pop(id(s), None)

    @guarded
    def hipStreamSynchronize(stream):
        rt.resolve_stream(stream_of(stream)).synchronize()
