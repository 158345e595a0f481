"""The C ABI's arrays, array copies, texture and surface objects and legacy texture references.

C structs are read and written through ``pyhip.hip.texture_types`` (``T.from_address``), so the C ABI and
``pyhip.hip`` share one implementation.  Texture references (``texture<T, dim, mode>`` globals) follow
hipamd 5.2: binding creates a texture object, stores it in the host shadow's ``textureObject`` and copies
the whole 88-byte ``textureReference`` to the device variable the kernel reads."""
from __future__ import annotations

import ctypes
import threading

from ..errors import HipError, hipError_t
from ..hip import textures as HT
from ..hip.texture_types import (HIP_ARRAY3D_DESCRIPTOR, HIP_ARRAY_DESCRIPTOR, hipChannelFormatDesc, hipExtent,
                                 hipMemcpy3DParms, hipResourceDesc, hipResourceViewDesc, hipTextureDesc,
                                 textureReference)
from ..runtime import images as I, ops, textures as T

INVALID = hipError_t.hipErrorInvalidValue
HIP_TRSA_OVERRIDE_FORMAT, HIP_TRSF_READ_AS_INTEGER, HIP_TRSF_NORMALIZED_COORDINATES, HIP_TRSF_SRGB = 1, 1, 2, 0x10
_lock = threading.Lock()
_dyn_texrefs: dict[int, tuple[textureReference, int]] = {}     # hipModuleGetTexRef structs -> device address

def install(ffi, rt, guarded, check, addr, stream_of, symbol_address, module_of, fatbin_handle) -> None:
    """Define the extern "Python" functions (called from pyhip.capi.impl.install; prototypes in
    native/hip/build_shim.py's TEXTURE_API, the by-value struct entry points in native/hip/textures.c)."""
    def view(cls, p):
        return None if p == ffi.NULL else cls.from_address(addr(p))

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
        out_ptr(out, int(check(HT.hipMallocArray(view(hipChannelFormatDesc, desc), width, height, flags))))

    @guarded
    def pyhip_hipMalloc3DArray(out, desc, extent, flags):
        if desc == ffi.NULL:
            raise HipError(INVALID, "null channel descriptor")
        out_ptr(out, int(check(HT.hipMalloc3DArray(view(hipChannelFormatDesc, desc), view(hipExtent, extent),
                                                    flags))))

    @guarded
    def hipArrayCreate(out, d):
        if d == ffi.NULL:
            raise HipError(INVALID, "null descriptor")
        out_ptr(out, int(check(HT.hipArrayCreate(view(HIP_ARRAY_DESCRIPTOR, d)))))

    @guarded
    def hipArray3DCreate(out, d):
        if d == ffi.NULL:
            raise HipError(INVALID, "null descriptor")
        out_ptr(out, int(check(HT.hipArray3DCreate(view(HIP_ARRAY3D_DESCRIPTOR, d)))))

    @guarded
    def hipArrayDestroy(a):
        check(HT.hipArrayDestroy(array(a)))

    @guarded
    def hipFreeArray(a):
        check(HT.hipFreeArray(array(a)))

    @guarded
    def hipGetChannelDesc(desc, a):
        check(HT.hipGetChannelDesc(view(hipChannelFormatDesc, desc), array(a)))

    @guarded
    def pyhip_hipMallocMipmappedArray(out, desc, extent, levels, flags):
        check(HT.hipMallocMipmappedArray(view(hipChannelFormatDesc, desc), view(hipExtent, extent), levels, flags))

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
        out_ptr(out, int(check(HT.hipMipmappedArrayCreate(view(HIP_ARRAY3D_DESCRIPTOR, d), levels))))

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
        check(HT.hipMemcpy3D(view(hipMemcpy3DParms, p)))

    @guarded
    def hipMemcpy3D_spt(p):
        check(HT.hipMemcpy3DAsync(view(hipMemcpy3DParms, p), 2))
        rt.resolve_stream(2).synchronize()

    @guarded
    def hipMemcpy3DAsync(p, stream):
        check(HT.hipMemcpy3DAsync(view(hipMemcpy3DParms, p), stream_of(stream)))

    # -- texture and surface objects ---------------------------------------------------------------------------------
    @guarded
    def hipCreateTextureObject(out, res, tex, viewd):
        if out == ffi.NULL or res == ffi.NULL or tex == ffi.NULL:
            raise HipError(INVALID, "null argument")
        out_ptr(out, int(check(HT.hipCreateTextureObject(view(hipResourceDesc, res), view(hipTextureDesc, tex),
                                                          view(hipResourceViewDesc, viewd)))))

    @guarded
    def hipDestroyTextureObject(t):
        check(HT.hipDestroyTextureObject(addr(t)))

    @guarded
    def hipGetTextureObjectResourceDesc(out, t):
        check(HT.hipGetTextureObjectResourceDesc(view(hipResourceDesc, out), addr(t)))

    @guarded
    def hipGetTextureObjectResourceViewDesc(out, t):
        check(HT.hipGetTextureObjectResourceViewDesc(view(hipResourceViewDesc, out), addr(t)))

    @guarded
    def hipGetTextureObjectTextureDesc(out, t):
        check(HT.hipGetTextureObjectTextureDesc(view(hipTextureDesc, out), addr(t)))

    @guarded
    def _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(out, res):
        if out == ffi.NULL or res == ffi.NULL:
            raise HipError(INVALID, "null argument")
        out_ptr(out, int(check(HT.hipCreateSurfaceObject(view(hipResourceDesc, res)))))

    @guarded
    def _Z23hipDestroySurfaceObjectP13__hip_surface(s):
        check(HT.hipDestroySurfaceObject(addr(s)))

    # -- texture references ------------------------------------------------------------------------------------------
    @ffi.def_extern(name="__hipRegisterTexture")
    def register_texture(modules, var, host_var, device_var, typ, norm, ext):
        _register(modules, var, device_var)

    @ffi.def_extern(name="__hipRegisterSurface")
    def register_surface(modules, var, host_var, device_var, typ, ext):
        _register(modules, var, device_var)

    def _register(modules, var, device_var):
        try:
            rt.registry.register_variable(fatbin_handle(modules), addr(var), ffi.string(device_var).decode(),
                                          ctypes.sizeof(textureReference))
        except Exception:  # noqa: BLE001 - nothing may unwind into C (a later bind reports the error)
            pass

    def device_var(ref_addr: int) -> int:
        with _lock:
            hit = _dyn_texrefs.get(ref_addr)
        if hit is not None:
            return hit[1]
        return symbol_address(ffi.cast("void*", ref_addr))

    def texref(p) -> textureReference:
        if p == ffi.NULL:
            raise HipError(INVALID, "null texture reference")
        return textureReference.from_address(addr(p))

    def tex_desc(r: textureReference) -> hipTextureDesc:
        d = hipTextureDesc(filterMode=r.filterMode, readMode=r.readMode, sRGB=r.sRGB, normalizedCoords=r.normalized,
                           maxAnisotropy=r.maxAnisotropy, mipmapFilterMode=r.mipmapFilterMode,
                           mipmapLevelBias=r.mipmapLevelBias, minMipmapLevelClamp=r.minMipmapLevelClamp,
                           maxMipmapLevelClamp=r.maxMipmapLevelClamp)
        for i in range(3):
            d.addressMode[i] = r.addressMode[i]
        return d

    def rebind(p, res: hipResourceDesc, view_desc: hipResourceViewDesc | None = None):
        """Replace the reference's texture object and copy the reference to its device variable."""
        r = texref(p)
        dev_addr = device_var(addr(p))
        if r.textureObject:
            check(HT.hipDestroyTextureObject(r.textureObject))
            r.textureObject = 0
        r.textureObject = int(check(HT.hipCreateTextureObject(res, tex_desc(r), view_desc)))
        ops.memcpy(dev_addr, ctypes.addressof(r), ctypes.sizeof(textureReference), 1, None, sync=True)

    def alignment_offset(offset, dev_ptr: int) -> int:
        off = dev_ptr % T.ALIGN
        if off and offset == ffi.NULL:
            raise HipError(INVALID, f"0x{dev_ptr:x} is not {T.ALIGN}-byte aligned and no offset was asked for")
        if offset != ffi.NULL:
            offset[0] = off
        return dev_ptr - off

    def channel(desc_p) -> hipChannelFormatDesc:
        if desc_p == ffi.NULL:
            raise HipError(INVALID, "null channel descriptor")
        return view(hipChannelFormatDesc, desc_p)

    def linear(dev_ptr: int, desc: hipChannelFormatDesc, size: int) -> hipResourceDesc:
        res = hipResourceDesc(resType=T.RES_LINEAR)
        res.res.linear.devPtr, res.res.linear.desc, res.res.linear.sizeInBytes = dev_ptr, desc, size
        return res

    def pitch2d(dev_ptr: int, desc: hipChannelFormatDesc, w, h, pitch) -> hipResourceDesc:
        res = hipResourceDesc(resType=T.RES_PITCH2D)
        p2 = res.res.pitch2D
        p2.devPtr, p2.desc, p2.width, p2.height, p2.pitchInBytes = dev_ptr, desc, w, h, pitch
        return res

    def array_view(a: int, desc: hipChannelFormatDesc) -> tuple[hipResourceDesc, hipResourceViewDesc]:
        res = hipResourceDesc(resType=T.RES_ARRAY)
        res.res.array.array = a
        fmt = HT.format_of(desc)
        code = next(k for k, v in HT._VIEW.items() if v == (fmt.array_format, fmt.channels))
        st = HT.array_of(a)
        return res, hipResourceViewDesc(format=code, width=st.width, height=st.height, depth=st.depth)

    @guarded
    def hipBindTexture(offset, tex, dev_ptr, desc, size):
        if dev_ptr == ffi.NULL:
            raise HipError(INVALID, "null device pointer")
        rebind(tex, linear(alignment_offset(offset, addr(dev_ptr)), channel(desc), size))

    @guarded
    def hipBindTexture2D(offset, tex, dev_ptr, desc, width, height, pitch):
        if dev_ptr == ffi.NULL:
            raise HipError(INVALID, "null device pointer")
        rebind(tex, pitch2d(alignment_offset(offset, addr(dev_ptr)), channel(desc), width, height, pitch))

    @guarded
    def hipBindTextureToArray(tex, a, desc):
        if a == ffi.NULL:
            raise HipError(INVALID, "null array")
        rebind(tex, *array_view(addr(a), channel(desc)))

    @guarded
    def hipBindTextureToMipmappedArray(tex, m, desc):
        raise HipError(hipError_t.hipErrorNotSupported, "mipmapped textures are not supported (as in HIP 5.2)")

    @guarded
    def hipUnbindTexture(tex):
        r = texref(tex)
        if r.textureObject:
            check(HT.hipDestroyTextureObject(r.textureObject))
        r.textureObject = 0

    @guarded
    def hipGetTextureReference(out, symbol):
        if out == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        out[0] = symbol

    @guarded
    def hipGetTextureAlignmentOffset(offset, tex):
        if offset == ffi.NULL or tex == ffi.NULL:
            raise HipError(INVALID, "null argument")
        offset[0] = 0

    @guarded
    def hipModuleGetTexRef(out, hmod, name):
        if out == ffi.NULL or name == ffi.NULL:
            raise HipError(INVALID, "null argument")
        dev_addr, size = module_of(hmod).global_var(ffi.string(name).decode())
        r = textureReference()
        ctypes.memmove(ctypes.addressof(r), rt.device().backend.read(dev_addr, ctypes.sizeof(r)), ctypes.sizeof(r))
        with _lock:
            _dyn_texrefs[ctypes.addressof(r)] = (r, dev_addr)
        out[0] = ffi.cast("void*", ctypes.addressof(r))

    @guarded
    def hipTexRefSetArray(tex, a, flags):
        if a == ffi.NULL:
            raise HipError(INVALID, "null array")
        if flags != HIP_TRSA_OVERRIDE_FORMAT:
            raise HipError(INVALID, "flags must be HIP_TRSA_OVERRIDE_FORMAT")
        r = texref(tex)
        desc = hipChannelFormatDesc(*I.channel_desc_of(I.Format(r.format, r.numChannels)))
        rebind(tex, *array_view(addr(a), desc))

    @guarded
    def hipTexRefSetAddress(offset, tex, dev_ptr, size):
        r = texref(tex)
        desc = hipChannelFormatDesc(*I.channel_desc_of(I.Format(r.format, r.numChannels)))
        rebind(tex, linear(alignment_offset(offset, addr(dev_ptr)), desc, size))

    @guarded
    def hipTexRefSetAddress2D(tex, d, dev_ptr, pitch):
        if d == ffi.NULL:
            raise HipError(INVALID, "null descriptor")
        d = view(HIP_ARRAY_DESCRIPTOR, d)
        desc = hipChannelFormatDesc(*I.channel_desc_of(I.Format(d.Format, d.NumChannels)))
        rebind(tex, pitch2d(addr(dev_ptr), desc, d.Width, d.Height, pitch))

    @guarded
    def hipTexRefSetAddressMode(tex, dim, mode):
        if not 0 <= dim <= 2:
            raise HipError(INVALID, f"dimension {dim}")
        texref(tex).addressMode[dim] = mode

    @guarded
    def hipTexRefSetFilterMode(tex, mode):
        texref(tex).filterMode = mode

    @guarded
    def hipTexRefSetFlags(tex, flags):
        r = texref(tex)
        r.readMode = 0 if flags & HIP_TRSF_READ_AS_INTEGER else 1
        r.normalized = int(bool(flags & HIP_TRSF_NORMALIZED_COORDINATES))
        r.sRGB = int(bool(flags & HIP_TRSF_SRGB))

    @guarded
    def hipTexRefSetFormat(tex, fmt, n):
        r = texref(tex)
        r.format, r.numChannels = fmt, n

    @guarded
    def hipTexRefGetAddress(out, tex):
        if out == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        res = hipResourceDesc()
        check(HT.hipGetTextureObjectResourceDesc(res, texref(tex).textureObject or 0))
        if res.resType == T.RES_LINEAR:
            out[0] = ffi.cast("void*", res.res.linear.devPtr or 0)
        elif res.resType == T.RES_PITCH2D:
            out[0] = ffi.cast("void*", res.res.pitch2D.devPtr or 0)
        else:
            raise HipError(INVALID, "the reference is bound to an array, not to memory")

    @guarded
    def hipTexRefGetAddressMode(out, tex, dim):
        if out == ffi.NULL or dim not in (0, 1):
            raise HipError(INVALID, "null result pointer or dimension other than 0 and 1")
        out[0] = texref(tex).addressMode[dim]

    @guarded
    def hipTexRefGetFilterMode(out, tex):
        if out == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        out[0] = texref(tex).filterMode

    @guarded
    def hipTexRefGetFlags(out, tex):
        if out == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        r = texref(tex)
        out[0] = (HIP_TRSF_READ_AS_INTEGER if r.readMode == 0 else 0) | \
            (HIP_TRSF_NORMALIZED_COORDINATES if r.normalized == 1 else 0) | (HIP_TRSF_SRGB if r.sRGB == 1 else 0)

    @guarded
    def hipTexRefGetFormat(fmt, n, tex):
        if fmt == ffi.NULL or n == ffi.NULL:
            raise HipError(INVALID, "null result pointer")
        r = texref(tex)
        fmt[0], n[0] = r.format, r.numChannels
