"""Python implementations of the exported HIP functions (run inside the embedded interpreter).

Every function returns a hipError_t and never lets an exception escape into C: HipError → its code,
anything else → hipErrorUnknown, with the thread's last error set as HIP 5.2 does."""
from __future__ import annotations

import os
import sys

import struct
import threading

from ..errors import HipError, error_name, hipError_t
from ..loader.extent import image_extent
from ..hip._api import set_last_error
from .fastpath import FastPath
from .rtc import install as install_rtc

HIPF_MAGIC = 0x48495046
_lock = threading.Lock()
_fatbins: dict[int, tuple[object, int]] = {}     # void** handle address -> (cdata slot, registry handle)
_streams: dict[int, object] = {}
_names: dict[int, object] = {}
_managed: set[int] = set()                       # hipMallocManaged / __hipRegisterManagedVar allocations
_objects: dict[int, object] = {}                 # events, modules, functions by handle
_setup = threading.local()                       # hipConfigureCall / hipSetupArgument state


_LOG = os.environ.get("PYHIP_LOG_FAULTS", "") not in ("", "0")


def install() -> None:
    from _pyhip_hip_shim import ffi, lib  # provided by the embedding

    from ..hip import conventions
    conventions.C_ABI = True                  # C passes enums as integers

    from ..runtime import ops
    from ..runtime.context import runtime

    rt = runtime()
    set_c_error = lib.pyhip_set_last_error
    fast = FastPath(ffi, lib, rt)
    for dev in rt.devices:
        fast.hook_device(dev)
    install_rtc(ffi, link_api=False)              # HIP 5.2's libamdhip64 exports hiprtc's compile API too

    def guarded(fn):
        def wrapper(*args):
            try:
                r = fn(*args)
                code = 0 if r is None else r
            except HipError as exc:
                code = int(exc.code)
            except Exception:  # noqa: BLE001 - nothing may unwind into C
                code = int(hipError_t.hipErrorUnknown)
                if _LOG:
                    import traceback
                    print(f"pyhip: {fn.__name__} failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            set_last_error(code)
            set_c_error(code)
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

    def image_bytes(image) -> bytes:
        """A code object or offload bundle at a bare address; its extent comes from its headers."""
        ptr = ffi.cast("char*", image)
        return bytes(ffi.buffer(ptr, image_extent(lambda off, n: bytes(ffi.buffer(ptr + off, n)))))

    def read_bundle(ptr) -> bytes:
        head = bytes(ffi.buffer(ptr, 24))
        if head[:4] != b"CCOB" and head != b"__CLANG_OFFLOAD_BUNDLE__":
            raise HipError(hipError_t.hipErrorInvalidImage, "fat binary is not an offload bundle")
        return image_bytes(ptr)

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

    @ffi.def_extern(name="__hipRegisterManagedVar")
    def register_managed(modules, pointer, init_value, name, size, align):
        # managed memory = pinned host memory mapped into every device at its own address: host and kernels
        # see the same bytes.  The device-side variable `name` (a pointer) is bound when the code object loads.
        try:
            size = int(size)
            hp = ops.host_malloc(max(size, 1))
            a = int(hp)
            _names[a] = hp
            _managed.add(a)
            if init_value != ffi.NULL and size:
                ffi.memmove(ffi.cast("void*", a), init_value, size)
            pointer[0] = ffi.cast("void*", a)
            rt.registry.register_variable(fatbin_handle(modules), int(ffi.cast("uintptr_t", pointer)),
                                          ffi.string(name).decode(), size, managed=True, managed_address=a)
        except Exception:  # noqa: BLE001 - nothing may unwind into C (a later use reports the error)
            pass

    @ffi.def_extern(name="__hipUnregisterFatBinary")
    def unregister(modules):
        fast.invalidate()
        try:
            rt.registry.unregister_fatbin(fatbin_handle(modules))
        except Exception:  # noqa: BLE001
            pass

    # -- launches ------------------------------------------------------------------------------------------
    # __hipPushCallConfiguration / __hipPopCallConfiguration are C (fastlaunch.c): a per-thread stack

    def launch(handle, grid, block, args, shared, stream):
        st = rt.resolve_stream(stream_of(stream))
        f = rt.function_for_handle(int(ffi.cast("uintptr_t", handle)), st.device)
        explicit = f.kernel.explicit_args
        blob = bytearray(max((a.offset + a.size for a in explicit), default=0))
        for i, a in enumerate(explicit):
            if args == ffi.NULL or args[i] == ffi.NULL:
                raise HipError(hipError_t.hipErrorInvalidValue, f"kernel argument {i} is a null pointer")
            blob[a.offset:a.offset + a.size] = bytes(ffi.buffer(args[i], a.size))
        g, b = (grid.x, grid.y, grid.z), (block.x, block.y, block.z)
        f.launch(st, g, b, int(shared), raw=bytes(blob))
        return f, st, g, b

    @guarded
    def pyhip_slow_hipLaunchKernel(handle, grid, block, args, shared, stream):
        # the native path (fastlaunch.c) did not know this configuration: launch here, then teach it
        f, st, g, b = launch(handle, grid, block, args, shared, stream)
        try:
            fast.register(handle, stream, g, b, int(shared), f, st)
        except Exception:  # noqa: BLE001 - the launch itself succeeded; stay on the Python path
            fast.enabled = False

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
        a = addr(ptr)
        if a in _managed:                       # hipMallocManaged memory
            _managed.discard(a)
            ops.host_free(a)
            _names.pop(a, None)
            return
        ops.free(a)

    @guarded
    def hipMallocManaged(ptr, size, flags):
        if ptr == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null result pointer")
        if int(flags) not in (0, 1, 2):         # hipMemAttachGlobal = 1, hipMemAttachHost = 2
            raise HipError(hipError_t.hipErrorInvalidValue, f"invalid flags {int(flags)}")
        hp = ops.host_malloc(size)
        _names[int(hp)] = hp
        _managed.add(int(hp))
        ptr[0] = ffi.cast("void*", int(hp))

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
        return rt.module_for_fatbin(fb, rt.device()).global_var(info.name)[0]

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
        lib.pyhip_set_current_device(int(d))     # the native launch path resolves the null stream with it

    @guarded
    def hipGetDevice(d):
        d[0] = rt.current_index()

    @guarded
    def hipDeviceSynchronize():
        rt.device().synchronize()

    # hipGetLastError / hipPeekAtLastError are C (fastlaunch.c): the thread's last error lives there

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

    from .. import hip as H
    from ..runtime.stream import Event

    from ..hip._api import last_exception

    def check(ret):
        """Unwrap a pyhip.hip (err, value...) tuple, re-raising the failure it stood for."""
        if ret[0] != 0:
            exc = last_exception()
            raise exc if isinstance(exc, HipError) else HipError(ret[0])
        return ret[1] if len(ret) == 2 else ret[1:]

    def enum_arg(enum, value):
        """A C enum value as pyhip.hip's enum parameter (hip-python requires the enum type)."""
        try:
            return enum(int(value))
        except ValueError:
            raise HipError(hipError_t.hipErrorInvalidValue, f"invalid {enum.__name__} {int(value)}") from None

    def obj(handle, kind):
        o = _objects.get(addr(handle))
        if not isinstance(o, kind):
            raise HipError(hipError_t.hipErrorInvalidHandle, f"not a {kind.__name__} handle")
        return o

    def new_handle(out, o):
        _objects[id(o)] = o
        out[0] = ffi.cast("void*", id(o))

    def new_stream(out, flags, priority=0):
        s = rt.device().new_stream(int(flags), int(priority))
        _streams[id(s)] = s
        out[0] = ffi.cast("void*", id(s))

    @guarded
    def hipStreamCreateWithFlags(stream, flags):
        new_stream(stream, flags)

    @guarded
    def hipStreamCreateWithPriority(stream, flags, priority):
        new_stream(stream, flags, max(-1, min(0, priority)))

    @guarded
    def hipStreamQuery(stream):
        if not rt.resolve_stream(stream_of(stream)).query():
            return int(hipError_t.hipErrorNotReady)

    @guarded
    def hipStreamWaitEvent(stream, event, flags):
        check(H.hipStreamWaitEvent(rt.resolve_stream(stream_of(stream)), obj(event, Event), int(flags)))

    @guarded
    def hipStreamAddCallback(stream, callback, user_data, flags):
        st = rt.resolve_stream(stream_of(stream))
        handle = stream

        def call():
            callback(handle, 0, user_data)
        st.host_op(call, "callback")

    @guarded
    def hipEventCreate(event):
        new_handle(event, Event())

    @guarded
    def hipEventCreateWithFlags(event, flags):
        new_handle(event, Event(int(flags)))

    @guarded
    def hipEventRecord(event, stream):
        obj(event, Event).record(rt.resolve_stream(stream_of(stream)))

    @guarded
    def hipEventSynchronize(event):
        obj(event, Event).synchronize()

    @guarded
    def hipEventQuery(event):
        if not obj(event, Event).query():
            return int(hipError_t.hipErrorNotReady)

    @guarded
    def hipEventElapsedTime(ms, start, stop):
        if ms == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null result pointer")
        ms[0] = obj(start, Event).elapsed_ms(obj(stop, Event))

    @guarded
    def hipEventDestroy(event):
        obj(event, Event).destroyed = True
        _objects.pop(addr(event), None)

    @guarded
    def hipInit(flags):
        check(H.hipInit(int(flags)))

    @guarded
    def hipDriverGetVersion(v):
        v[0] = check(H.hipDriverGetVersion())

    @guarded
    def hipRuntimeGetVersion(v):
        v[0] = check(H.hipRuntimeGetVersion())

    @guarded
    def hipGetDeviceProperties(prop, device):
        if prop == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null hipDeviceProp_t pointer")
        check(H.hipGetDeviceProperties(int(ffi.cast("uintptr_t", prop)), int(device)))   # fills the C struct

    @guarded
    def hipDeviceGetAttribute(value, attr, device):
        value[0] = check(H.hipDeviceGetAttribute(enum_arg(H.hipDeviceAttribute_t, attr), int(device)))

    @guarded
    def hipDeviceReset():
        fast.invalidate()
        check(H.hipDeviceReset())

    @guarded
    def hipMemGetInfo(free, total):
        f, t = ops.mem_get_info()
        free[0], total[0] = f, t

    @guarded
    def hipMemsetAsync(dst, value, size, stream):
        ops.memset(addr(dst), value, size, 1, stream_of(stream), sync=False)

    @guarded
    def hipMallocHost(ptr, size):
        hipHostMalloc(ptr, size, 0)

    @guarded
    def hipMemsetD8Async(dst, value, count, stream):
        ops.memset(addr(dst), value, count, 1, stream_of(stream), sync=False)

    @guarded
    def hipMemsetD16Async(dst, value, count, stream):
        ops.memset(addr(dst), value, count, 2, stream_of(stream), sync=False)

    @guarded
    def hipMemsetD32Async(dst, value, count, stream):
        ops.memset(addr(dst), value, count, 4, stream_of(stream), sync=False)

    @guarded
    def hipMemsetD8(dst, value, count):
        ops.memset(addr(dst), value, count, 1, None, sync=True)

    @guarded
    def hipMemsetD16(dst, value, count):
        ops.memset(addr(dst), value, count, 2, None, sync=True)

    @guarded
    def hipMemsetD32(dst, value, count):
        ops.memset(addr(dst), value, count, 4, None, sync=True)

    @guarded
    def hipMemcpyToSymbolAsync(symbol, src, size, offset, kind, stream):
        ops.memcpy(symbol_address(symbol) + offset, addr(src), size, 4, stream_of(stream), sync=False)

    @guarded
    def hipMemcpyFromSymbolAsync(dst, symbol, size, offset, kind, stream):
        ops.memcpy(addr(dst), symbol_address(symbol) + offset, size, 4, stream_of(stream), sync=False)

    @guarded
    def hipGetSymbolAddress(dev_ptr, symbol):
        dev_ptr[0] = ffi.cast("void*", symbol_address(symbol))

    @guarded
    def hipGetSymbolSize(size, symbol):
        size[0] = rt.registry.variable(addr(symbol)).size

    # -- module API ----------------------------------------------------------------------------------------
    from ..runtime.module import Function, Module

    @guarded
    def hipModuleLoad(module, fname):
        new_handle(module, check(H.hipModuleLoad(ffi.string(fname))))

    @guarded
    def hipModuleLoadData(module, image):
        if image == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null image")
        new_handle(module, check(H.hipModuleLoadData(image_bytes(image))))

    @guarded
    def hipModuleLoadDataEx(module, image, num_options, options, values):
        if image == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null image")
        new_handle(module, check(H.hipModuleLoadDataEx(image_bytes(image), int(num_options), None, None)))

    def kernel_of(f):
        """A hipFunction_t handle, or the host function of a <<<>>> kernel (registered handle)."""
        o = _objects.get(addr(f))
        if isinstance(o, Function):
            return o
        if f == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "null function")
        return rt.function_for_handle(addr(f))

    @guarded
    def hipFuncGetAttributes(attr, func):
        if attr == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null attributes pointer")
        check(H.hipFuncGetAttributes(int(ffi.cast("uintptr_t", attr)), kernel_of(func)))   # fills the C struct

    @guarded
    def hipFuncGetAttribute(value, attrib, hfunc):
        if value == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null value pointer")
        value[0] = int(check(H.hipFuncGetAttribute(enum_arg(H.hipFunction_attribute, attrib), obj(hfunc, Function))))

    @guarded
    def hipOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit):
        if grid_size == ffi.NULL or block_size == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null result pointer")
        g, b = check(H.hipOccupancyMaxPotentialBlockSize(kernel_of(f), int(dyn_shared), int(limit)))
        grid_size[0], block_size[0] = int(g), int(b)

    @guarded
    def hipOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared):
        if num_blocks == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null result pointer")
        num_blocks[0] = int(check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(kernel_of(f), int(block_size),
                                                                                 int(dyn_shared))))

    @guarded
    def hipModuleUnload(module):
        fast.invalidate()
        check(H.hipModuleUnload(obj(module, Module)))

    @guarded
    def hipModuleGetFunction(function, module, name):
        if function == ffi.NULL or name == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null argument")
        new_handle(function, check(H.hipModuleGetFunction(obj(module, Module), ffi.string(name))))

    @guarded
    def hipModuleGetGlobal(dptr, nbytes, module, name):
        a, size = check(H.hipModuleGetGlobal(obj(module, Module), ffi.string(name)))
        if dptr != ffi.NULL:
            dptr[0] = ffi.cast("void*", int(a))
        if nbytes != ffi.NULL:
            nbytes[0] = size

    @guarded
    def hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        func = obj(f, Function)
        st = rt.resolve_stream(stream_of(stream))
        func.launch(st, (gx, gy, gz), (bx, by, bz), int(shared), raw=module_args(func, params, extra))

    @guarded
    def _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
            f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags):
        # hipExtModuleLaunchKernel: global work-item sizes (a partial last workgroup is allowed), events
        # recorded around the launch
        func = obj(f, Function)
        st = rt.resolve_stream(stream_of(stream))
        raw = module_args(func, params, extra)
        events = [obj(e, Event) if e != ffi.NULL else None for e in (start, stop)]
        if events[0] is not None:
            events[0].record(st)
        func.launch(st, None, (lx, ly, lz), int(shared), raw=raw, items=(gx, gy, gz))
        if events[1] is not None:
            events[1].record(st)

    def module_args(func, params, extra) -> bytes:
        """Explicit arguments from kernelParams (one pointer per argument) or extra (one packed buffer)."""
        if params != ffi.NULL and extra != ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "both kernelParams and extra")
        if extra != ffi.NULL:
            if addr(extra[0]) != 1 or addr(extra[2]) != 2 or addr(extra[4]) != 3:
                raise HipError(hipError_t.hipErrorInvalidValue, "malformed extra")
            size = ffi.cast("size_t*", extra[3])[0]
            raw = bytes(ffi.buffer(extra[1], size))
        else:
            explicit = func.kernel.explicit_args
            if explicit and params == ffi.NULL:
                raise HipError(hipError_t.hipErrorInvalidValue, "kernel has parameters but kernelParams is NULL")
            blob = bytearray(max((a.offset + a.size for a in explicit), default=0))
            for i, a in enumerate(explicit):
                blob[a.offset:a.offset + a.size] = bytes(ffi.buffer(params[i], a.size))
            raw = bytes(blob)
        return raw

    # -- legacy launch: hipConfigureCall / hipSetupArgument / hipLaunchByPtr -------------------------------------
    @guarded
    def hipConfigureCall(grid, block, shared, stream):
        rt.call_config.push((grid.x, grid.y, grid.z), (block.x, block.y, block.z), shared, stream_of(stream))
        _setup.args = bytearray()

    @guarded
    def hipSetupArgument(arg, size, offset):
        buf = getattr(_setup, "args", None)
        if buf is None:
            raise HipError(hipError_t.hipErrorMissingConfiguration, "hipSetupArgument without hipConfigureCall")
        if len(buf) < offset + size:
            buf.extend(b"\0" * (offset + size - len(buf)))
        buf[offset:offset + size] = bytes(ffi.buffer(arg, size))

    from .textures import install as install_textures
    install_textures(ffi, rt, guarded, check, addr, stream_of, symbol_address, lambda h: obj(h, Module), fatbin_handle)

    @guarded
    def hipLaunchByPtr(handle):
        grid, block, shared, stream = rt.call_config.pop()
        raw = bytes(getattr(_setup, "args", b""))
        _setup.args = None
        st = rt.resolve_stream(stream)
        f = rt.function_for_handle(addr(handle), st.device)
        f.launch(st, grid, block, int(shared), raw=raw)
