"""The C ABI's arrays, array copies, texture and surface objects and legacy texture references: thin
wrappers over ``pyhip.hip``'s functions (``textures``, ``driver_textures``, ``texrefs``, ``ext``), which take C
structs by address as hip-python takes them, so both share one implementation.  hipcc's static ``texture<>`` globals are registered (``__hipRegisterTexture``)
like other device variables; their host shadows are the references the program binds."""
from __future__ import annotations

import ctypes

from ..errors import HipError, hipError_t
from ..hip import driver_textures as DT, ext as X, structs, texrefs, textures as HT
from ..runtime import textures as T

INVALID = hipError_t.hipErrorInvalidValue

def install(ffi, rt, guarded, check, addr, stream_of, symbol_address, module_of) -> None:
    """Define the extern "Python" functions (called from pyhip.capi.impl.install; prototypes in
    native/hip/build_shim.py's TEXTURE_API, the by-value struct entry points in native/hip/textures.c)."""
    def view(p):
        """A struct argument: its address (NULL is None), as hip-python's ``T.fromPyobj`` takes it."""
        return None if p == ffi.NULL else addr(p)

    def out_ptr(p, value: int) -> None:
        if p == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        p[0] = ffi.cast("void*", int(value))

    def array(p):
        return None if p == ffi.NULL else addr(p)

    def mem(p):
        return addr(p)                 # pointers from C are raw addresses (host or device)

    # -- arrays -----------------------------------------------------------------------------------------------
    @guarded
    def hipMallocArray(out, desc, width, height, flags):
        if desc == ffi.NULL:
            raise HipError(INVALID, "null channel descriptor")
        out_ptr(out, int(check(HT.hipMallocArray(view(desc), width, height, flags))))

    @guarded
    def pyhip_hipMalloc3DArray(out, desc, extent, flags):
        if desc == ffi.NULL:
            raise HipError(INVALID, "null channel descriptor")
        out_ptr(out, int(check(HT.hipMalloc3DArray(view(desc), view(extent), flags))))

    @guarded
    def hipArrayCreate(out, d):
        if d == ffi.NULL:
            raise HipError(INVALID, "null descriptor")
        out_ptr(out, int(check(HT.hipArrayCreate(view(d)))))

    @guarded
    def hipArray3DCreate(out, d):
        if d == ffi.NULL:
            raise HipError(INVALID, "null descriptor")
        out_ptr(out, int(check(HT.hipArray3DCreate(view(d)))))

    @guarded
    def hipArrayDestroy(a):
        check(HT.hipArrayDestroy(array(a)))

    @guarded
    def hipFreeArray(a):
        check(HT.hipFreeArray(array(a)))

    @guarded
    def hipGetChannelDesc(desc, a):
        check(HT.hipGetChannelDesc(view(desc), array(a)))

    @guarded
    def pyhip_hipMallocMipmappedArray(out, desc, extent, levels, flags):
        check(HT.hipMallocMipmappedArray(view(desc), view(extent), levels, flags))

    @guarded
    def hipFreeMipmappedArray(m):
        check(HT.hipFreeMipmappedArray(array(m)))

    @guarded
    def hipGetMipmappedArrayLevel(out, m, level):
        check(HT.hipGetMipmappedArrayLevel(array(m), level))

    @guarded
    def hipMipmappedArrayCreate(out, d, levels):
        if d == ffi.NULL:
            raise HipError(INVALID, "null descriptor")
        out_ptr(out, int(check(HT.hipMipmappedArrayCreate(view(d), levels))))

    @guarded
    def hipMipmappedArrayDestroy(m):
        check(HT.hipMipmappedArrayDestroy(array(m)))

    @guarded
    def hipMipmappedArrayGetLevel(out, m, level):
        out_ptr(out, int(check(HT.hipMipmappedArrayGetLevel(array(m), level))))

    # -- copies -----------------------------------------------------------------------------------------------------
    @guarded
    def hipMemcpy2DToArray(dst, wo, ho, src, spitch, w, h, kind):
        check(HT.hipMemcpy2DToArray(array(dst), wo, ho, mem(src), spitch, w, h, kind))

    @guarded
    def hipMemcpy2DToArray_spt(dst, wo, ho, src, spitch, w, h, kind):
        check(HT.hipMemcpy2DToArrayAsync(array(dst), wo, ho, mem(src), spitch, w, h, kind, 2))
        rt.resolve_stream(2).synchronize()

    @guarded
    def hipMemcpy2DToArrayAsync(dst, wo, ho, src, spitch, w, h, kind, stream):
        check(HT.hipMemcpy2DToArrayAsync(array(dst), wo, ho, mem(src), spitch, w, h, kind, stream_of(stream)))

    @guarded
    def hipMemcpy2DFromArray(dst, dpitch, src, wo, ho, w, h, kind):
        check(HT.hipMemcpy2DFromArray(mem(dst), dpitch, array(src), wo, ho, w, h, kind))

    @guarded
    def hipMemcpy2DFromArray_spt(dst, dpitch, src, wo, ho, w, h, kind):
        check(HT.hipMemcpy2DFromArrayAsync(mem(dst), dpitch, array(src), wo, ho, w, h, kind, 2))
        rt.resolve_stream(2).synchronize()

    @guarded
    def hipMemcpy2DFromArrayAsync(dst, dpitch, src, wo, ho, w, h, kind, stream):
        check(HT.hipMemcpy2DFromArrayAsync(mem(dst), dpitch, array(src), wo, ho, w, h, kind, stream_of(stream)))

    @guarded
    def hipMemcpyToArray(dst, wo, ho, src, count, kind):
        check(HT.hipMemcpyToArray(array(dst), wo, ho, mem(src), count, kind))

    @guarded
    def hipMemcpyFromArray(dst, src, wo, ho, count, kind):
        check(HT.hipMemcpyFromArray(mem(dst), array(src), wo, ho, count, kind))

    @guarded
    def hipMemcpyAtoH(dst, src, offset, count):
        check(HT.hipMemcpyAtoH(mem(dst), array(src), offset, count))

    @guarded
    def hipMemcpyHtoA(dst, offset, src, count):
        check(HT.hipMemcpyHtoA(array(dst), offset, mem(src), count))

    @guarded
    def hipMemcpy3D(p):
        check(HT.hipMemcpy3D(view(p)))

    @guarded
    def hipMemcpy3D_spt(p):
        check(HT.hipMemcpy3DAsync(view(p), 2))
        rt.resolve_stream(2).synchronize()

    @guarded
    def hipMemcpy3DAsync(p, stream):
        check(HT.hipMemcpy3DAsync(view(p), stream_of(stream)))

    # -- texture and surface objects ---------------------------------------------------------------------------------
    @guarded
    def hipCreateTextureObject(out, res, tex, viewd):
        if out == ffi.NULL or res == ffi.NULL or tex == ffi.NULL:
            raise HipError(INVALID, "null argument")
        out_ptr(out, int(check(HT.hipCreateTextureObject(view(res), view(tex), view(viewd)))))

    @guarded
    def hipDestroyTextureObject(t):
        check(HT.hipDestroyTextureObject(addr(t)))

    @guarded
    def hipGetTextureObjectResourceDesc(out, t):
        check(HT.hipGetTextureObjectResourceDesc(view(out), addr(t)))

    @guarded
    def hipGetTextureObjectResourceViewDesc(out, t):
        check(HT.hipGetTextureObjectResourceViewDesc(view(out), addr(t)))

    @guarded
    def hipGetTextureObjectTextureDesc(out, t):
        check(HT.hipGetTextureObjectTextureDesc(view(out), addr(t)))

    @guarded
    def hipTexObjectCreate(out, res, tex, viewd):
        if out == ffi.NULL or res == ffi.NULL or tex == ffi.NULL:
            raise HipError(INVALID, "null argument")
        out_ptr(out, int(check(DT.hipTexObjectCreate(view(res), view(tex), view(viewd)))))

    @guarded
    def hipTexObjectDestroy(t):
        check(DT.hipTexObjectDestroy(addr(t)))

    @guarded
    def hipTexObjectGetResourceDesc(out, t):
        check(DT.hipTexObjectGetResourceDesc(view(out), addr(t)))

    @guarded
    def hipTexObjectGetResourceViewDesc(out, t):
        check(DT.hipTexObjectGetResourceViewDesc(view(out), addr(t)))

    @guarded
    def hipTexObjectGetTextureDesc(out, t):
        check(DT.hipTexObjectGetTextureDesc(view(out), addr(t)))

    @guarded
    def _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(out, res):
        if out == ffi.NULL or res == ffi.NULL:
            raise HipError(INVALID, "null argument")
        out_ptr(out, int(check(X.hipCreateSurfaceObject(view(res)))))

    @guarded
    def _Z23hipDestroySurfaceObjectP13__hip_surface(s):
        check(X.hipDestroySurfaceObject(addr(s)))

    # -- texture references ------------------------------------------------------------------------------------------
    @ffi.def_extern(name="__hipRegisterTexture")
    def register_texture(modules, var, host_var, device_var, typ, norm, ext):
        _register(modules, var, device_var)

    @ffi.def_extern(name="__hipRegisterSurface")
    def register_surface(modules, var, host_var, device_var, typ, ext):
        _register(modules, var, device_var)

    def _register(modules, var, device_var):
        try:
            rt.registry.register_variable(addr(modules), addr(var), ffi.string(device_var).decode(),
                                          ctypes.sizeof(structs.ctypes_type("textureReference")))
        except Exception:  # noqa: BLE001 - nothing may unwind into C (a later bind reports the error)
            pass

    texrefs.static_resolver = lambda a: symbol_address(ffi.cast("void*", a))

    def ref(p):
        if p == ffi.NULL:
            raise HipError(INVALID, "null texture reference")
        return addr(p)

    def set_offset(offset, off: int) -> None:
        if off and offset == ffi.NULL:
            raise HipError(INVALID, f"device pointer not {T.ALIGN}-byte aligned and no offset was asked for")
        if offset != ffi.NULL:
            offset[0] = off

    def out_value(p, value) -> None:
        if p == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        p[0] = value

    @guarded
    def hipBindTexture(offset, tex, dev_ptr, desc, size):
        if offset == ffi.NULL and addr(dev_ptr) % T.ALIGN:
            raise HipError(INVALID, f"device pointer not {T.ALIGN}-byte aligned and no offset was asked for")
        set_offset(offset, texrefs.bind_linear(ref(tex), addr(dev_ptr), view(desc), size))

    @guarded
    def hipBindTexture2D(offset, tex, dev_ptr, desc, width, height, pitch):
        if offset == ffi.NULL and addr(dev_ptr) % T.ALIGN:
            raise HipError(INVALID, f"device pointer not {T.ALIGN}-byte aligned and no offset was asked for")
        set_offset(offset, texrefs.bind_2d(ref(tex), addr(dev_ptr), view(desc), width,
                                           height, pitch))

    @guarded
    def hipBindTextureToArray(tex, a, desc):
        texrefs.bind_array(ref(tex), array(a), view(desc))

    @guarded
    def hipBindTextureToMipmappedArray(tex, m, desc):
        check(texrefs.hipBindTextureToMipmappedArray(ref(tex), array(m), view(desc)))

    @guarded
    def hipUnbindTexture(tex):
        check(texrefs.hipUnbindTexture(ref(tex)))

    @guarded
    def hipGetTextureReference(out, symbol):
        out_value(out, symbol)

    @guarded
    def hipGetTextureAlignmentOffset(offset, tex):
        out_value(offset, check(texrefs.hipGetTextureAlignmentOffset(ref(tex))))

    @guarded
    def hipModuleGetTexRef(out, hmod, name):
        if out == ffi.NULL or name == ffi.NULL:
            raise HipError(INVALID, "null argument")
        out[0] = ffi.cast("void*", int(check(texrefs.hipModuleGetTexRef(module_of(hmod), ffi.string(name)))))

    @guarded
    def hipTexRefSetArray(tex, a, flags):
        check(texrefs.hipTexRefSetArray(ref(tex), array(a), flags))

    @guarded
    def hipTexRefSetAddress(offset, tex, dev_ptr, size):
        set_offset(offset, check(texrefs.hipTexRefSetAddress(ref(tex), addr(dev_ptr), size)))

    @guarded
    def hipTexRefSetAddress2D(tex, d, dev_ptr, pitch):
        check(texrefs.hipTexRefSetAddress2D(ref(tex), view(d), addr(dev_ptr), pitch))

    @guarded
    def hipTexRefSetAddressMode(tex, dim, mode):
        check(texrefs.hipTexRefSetAddressMode(ref(tex), dim, mode))

    @guarded
    def hipTexRefSetFilterMode(tex, mode):
        check(texrefs.hipTexRefSetFilterMode(ref(tex), mode))

    @guarded
    def hipTexRefSetFlags(tex, flags):
        check(texrefs.hipTexRefSetFlags(ref(tex), flags))

    @guarded
    def hipTexRefSetFormat(tex, fmt, n):
        check(texrefs.hipTexRefSetFormat(ref(tex), fmt, n))

    @guarded
    def hipTexRefGetAddress(out, tex):
        if out == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        out[0] = ffi.cast("void*", int(check(texrefs.hipTexRefGetAddress(ref(tex)))))

    @guarded
    def hipTexRefGetAddressMode(out, tex, dim):
        out_value(out, int(check(texrefs.hipTexRefGetAddressMode(ref(tex), dim))))

    @guarded
    def hipTexRefGetFilterMode(out, tex):
        out_value(out, int(check(texrefs.hipTexRefGetFilterMode(ref(tex)))))

    @guarded
    def hipTexRefGetFlags(out, tex):
        out_value(out, int(check(texrefs.hipTexRefGetFlags(ref(tex)))))

    @guarded
    def hipTexRefGetFormat(fmt, n, tex):
        if fmt == ffi.NULL or n == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        f, c = check(texrefs.hipTexRefGetFormat(ref(tex)))
        fmt[0], n[0] = int(f), int(c)
