"""The C ABI's arrays, array copies, texture and surface objects and legacy texture references: thin
wrappers over ``pyhip.hip``'s functions (``textures``, ``driver_textures``, ``texrefs``, ``ext``), which take C
structs by address as hip-python takes them, so both share one implementation.  hipcc's static ``texture<>`` globals are registered (``__hipRegisterTexture``)
like other device variables; their host shadows are the references the program binds.

The C prototypes are native/hip/build_shim.py's TEXTURE_API, the by-value struct entry points
native/hip/textures.c."""
from __future__ import annotations

import ctypes

from ..errors import HipError, hipError_t
from ..hip import driver_textures as DT, ext as X, structs, texrefs, textures as HT
from ..runtime import textures as T
from ..runtime.module import Module
from .common import c, export, export_raw
from .memory import symbol_address


INVALID = hipError_t.hipErrorInvalidValue


def resolve_static_references() -> None:
    """pyhip.hip's texture references find the device address of hipcc's static ``texture<>`` globals through
    the C ABI's registry (run by impl.install)."""
    texrefs.static_resolver = lambda a: symbol_address(c.ffi.cast("void*", a))


def module_of(h):
    return c.obj(h, Module)


def view(p):
    """A struct argument: its address (NULL is None), as hip-python's ``T.fromPyobj`` takes it."""
    return None if p == c.ffi.NULL else c.addr(p)


def out_ptr(p, value: int) -> None:
    if p == c.ffi.NULL:
        raise HipError(INVALID, "null result pointer")
    p[0] = c.ffi.cast("void*", int(value))


def array(p):
    return None if p == c.ffi.NULL else c.addr(p)


def mem(p):
    return c.addr(p)                 # pointers from C are raw addresses (host or device)


# -- arrays -----------------------------------------------------------------------------------------------
@export
def hipMallocArray(out, desc, width, height, flags):
    if desc == c.ffi.NULL:
        raise HipError(INVALID, "null channel descriptor")
    out_ptr(out, int(c.check(HT.hipMallocArray(view(desc), width, height, flags))))


@export
def pyhip_hipMalloc3DArray(out, desc, extent, flags):
    if desc == c.ffi.NULL:
        raise HipError(INVALID, "null channel descriptor")
    out_ptr(out, int(c.check(HT.hipMalloc3DArray(view(desc), view(extent), flags))))


@export
def hipArrayCreate(out, d):
    if d == c.ffi.NULL:
        raise HipError(INVALID, "null descriptor")
    out_ptr(out, int(c.check(HT.hipArrayCreate(view(d)))))


@export
def hipArray3DCreate(out, d):
    if d == c.ffi.NULL:
        raise HipError(INVALID, "null descriptor")
    out_ptr(out, int(c.check(HT.hipArray3DCreate(view(d)))))


@export
def hipArrayDestroy(a):
    c.check(HT.hipArrayDestroy(array(a)))


@export
def hipFreeArray(a):
    c.check(HT.hipFreeArray(array(a)))


@export
def hipGetChannelDesc(desc, a):
    c.check(HT.hipGetChannelDesc(view(desc), array(a)))


@export
def pyhip_hipMallocMipmappedArray(out, desc, extent, levels, flags):
    c.check(HT.hipMallocMipmappedArray(view(desc), view(extent), levels, flags))


@export
def hipFreeMipmappedArray(m):
    c.check(HT.hipFreeMipmappedArray(array(m)))


@export
def hipGetMipmappedArrayLevel(out, m, level):
    c.check(HT.hipGetMipmappedArrayLevel(array(m), level))


@export
def hipMipmappedArrayCreate(out, d, levels):
    if d == c.ffi.NULL:
        raise HipError(INVALID, "null descriptor")
    out_ptr(out, int(c.check(HT.hipMipmappedArrayCreate(view(d), levels))))


@export
def hipMipmappedArrayDestroy(m):
    c.check(HT.hipMipmappedArrayDestroy(array(m)))


@export
def hipMipmappedArrayGetLevel(out, m, level):
    out_ptr(out, int(c.check(HT.hipMipmappedArrayGetLevel(array(m), level))))


# -- copies -----------------------------------------------------------------------------------------------------
@export
def hipMemcpy2DToArray(dst, wo, ho, src, spitch, w, h, kind):
    c.check(HT.hipMemcpy2DToArray(array(dst), wo, ho, mem(src), spitch, w, h, kind))


@export
def hipMemcpy2DToArray_spt(dst, wo, ho, src, spitch, w, h, kind):
    c.check(HT.hipMemcpy2DToArrayAsync(array(dst), wo, ho, mem(src), spitch, w, h, kind, 2))
    c.rt.resolve_stream(2).synchronize()


@export
def hipMemcpy2DToArrayAsync(dst, wo, ho, src, spitch, w, h, kind, stream):
    c.check(HT.hipMemcpy2DToArrayAsync(array(dst), wo, ho, mem(src), spitch, w, h, kind, c.stream_of(stream)))


@export
def hipMemcpy2DFromArray(dst, dpitch, src, wo, ho, w, h, kind):
    c.check(HT.hipMemcpy2DFromArray(mem(dst), dpitch, array(src), wo, ho, w, h, kind))


@export
def hipMemcpy2DFromArray_spt(dst, dpitch, src, wo, ho, w, h, kind):
    c.check(HT.hipMemcpy2DFromArrayAsync(mem(dst), dpitch, array(src), wo, ho, w, h, kind, 2))
    c.rt.resolve_stream(2).synchronize()


@export
def hipMemcpy2DFromArrayAsync(dst, dpitch, src, wo, ho, w, h, kind, stream):
    c.check(HT.hipMemcpy2DFromArrayAsync(mem(dst), dpitch, array(src), wo, ho, w, h, kind, c.stream_of(stream)))


@export
def hipMemcpyToArray(dst, wo, ho, src, count, kind):
    c.check(HT.hipMemcpyToArray(array(dst), wo, ho, mem(src), count, kind))


@export
def hipMemcpyFromArray(dst, src, wo, ho, count, kind):
    c.check(HT.hipMemcpyFromArray(mem(dst), array(src), wo, ho, count, kind))


@export
def hipMemcpyAtoH(dst, src, offset, count):
    c.check(HT.hipMemcpyAtoH(mem(dst), array(src), offset, count))


@export
def hipMemcpyHtoA(dst, offset, src, count):
    c.check(HT.hipMemcpyHtoA(array(dst), offset, mem(src), count))


@export
def hipMemcpy3D(p):
    c.check(HT.hipMemcpy3D(view(p)))


@export
def hipMemcpy3D_spt(p):
    c.check(HT.hipMemcpy3DAsync(view(p), 2))
    c.rt.resolve_stream(2).synchronize()


@export
def hipMemcpy3DAsync(p, stream):
    c.check(HT.hipMemcpy3DAsync(view(p), c.stream_of(stream)))


# -- texture and surface objects ---------------------------------------------------------------------------------
@export
def hipCreateTextureObject(out, res, tex, viewd):
    if out == c.ffi.NULL or res == c.ffi.NULL or tex == c.ffi.NULL:
        raise HipError(INVALID, "null argument")
    out_ptr(out, int(c.check(HT.hipCreateTextureObject(view(res), view(tex), view(viewd)))))


@export
def hipDestroyTextureObject(t):
    c.check(HT.hipDestroyTextureObject(c.addr(t)))


@export
def hipGetTextureObjectResourceDesc(out, t):
    c.check(HT.hipGetTextureObjectResourceDesc(view(out), c.addr(t)))


@export
def hipGetTextureObjectResourceViewDesc(out, t):
    c.check(HT.hipGetTextureObjectResourceViewDesc(view(out), c.addr(t)))


@export
def hipGetTextureObjectTextureDesc(out, t):
    c.check(HT.hipGetTextureObjectTextureDesc(view(out), c.addr(t)))


@export
def hipTexObjectCreate(out, res, tex, viewd):
    if out == c.ffi.NULL or res == c.ffi.NULL or tex == c.ffi.NULL:
        raise HipError(INVALID, "null argument")
    out_ptr(out, int(c.check(DT.hipTexObjectCreate(view(res), view(tex), view(viewd)))))


@export
def hipTexObjectDestroy(t):
    c.check(DT.hipTexObjectDestroy(c.addr(t)))


@export
def hipTexObjectGetResourceDesc(out, t):
    c.check(DT.hipTexObjectGetResourceDesc(view(out), c.addr(t)))


@export
def hipTexObjectGetResourceViewDesc(out, t):
    c.check(DT.hipTexObjectGetResourceViewDesc(view(out), c.addr(t)))


@export
def hipTexObjectGetTextureDesc(out, t):
    c.check(DT.hipTexObjectGetTextureDesc(view(out), c.addr(t)))


@export
def _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(out, res):
    if out == c.ffi.NULL or res == c.ffi.NULL:
        raise HipError(INVALID, "null argument")
    out_ptr(out, int(c.check(X.hipCreateSurfaceObject(view(res)))))


@export
def _Z23hipDestroySurfaceObjectP13__hip_surface(s):
    c.check(X.hipDestroySurfaceObject(c.addr(s)))


# -- texture references ------------------------------------------------------------------------------------------
@export_raw("__hipRegisterTexture")
def register_texture(modules, var, host_var, device_var, typ, norm, ext):
    _register(modules, var, device_var)


@export_raw("__hipRegisterSurface")
def register_surface(modules, var, host_var, device_var, typ, ext):
    _register(modules, var, device_var)


def _register(modules, var, device_var):
    try:
        c.rt.registry.register_variable(c.addr(modules), c.addr(var), c.ffi.string(device_var).decode(),
                                      ctypes.sizeof(structs.ctypes_type("textureReference")))
    except Exception:  # noqa: BLE001 - nothing may unwind into C (a later bind reports the error)
        pass


def ref(p):
    if p == c.ffi.NULL:
        raise HipError(INVALID, "null texture reference")
    return c.addr(p)


def set_offset(offset, off: int) -> None:
    if off and offset == c.ffi.NULL:
        raise HipError(INVALID, f"device pointer not {T.ALIGN}-byte aligned and no offset was asked for")
    if offset != c.ffi.NULL:
        offset[0] = off


def out_value(p, value) -> None:
    if p == c.ffi.NULL:
        raise HipError(INVALID, "null result pointer")
    p[0] = value


@export
def hipBindTexture(offset, tex, dev_ptr, desc, size):
    if offset == c.ffi.NULL and c.addr(dev_ptr) % T.ALIGN:
        raise HipError(INVALID, f"device pointer not {T.ALIGN}-byte aligned and no offset was asked for")
    set_offset(offset, texrefs.bind_linear(ref(tex), c.addr(dev_ptr), view(desc), size))


@export
def hipBindTexture2D(offset, tex, dev_ptr, desc, width, height, pitch):
    if offset == c.ffi.NULL and c.addr(dev_ptr) % T.ALIGN:
        raise HipError(INVALID, f"device pointer not {T.ALIGN}-byte aligned and no offset was asked for")
    set_offset(offset, texrefs.bind_2d(ref(tex), c.addr(dev_ptr), view(desc), width,
                                       height, pitch))


@export
def hipBindTextureToArray(tex, a, desc):
    texrefs.bind_array(ref(tex), array(a), view(desc))


@export
def hipBindTextureToMipmappedArray(tex, m, desc):
    c.check(texrefs.hipBindTextureToMipmappedArray(ref(tex), array(m), view(desc)))


@export
def hipUnbindTexture(tex):
    c.check(texrefs.hipUnbindTexture(ref(tex)))


@export
def hipGetTextureReference(out, symbol):
    out_value(out, symbol)


@export
def hipGetTextureAlignmentOffset(offset, tex):
    out_value(offset, c.check(texrefs.hipGetTextureAlignmentOffset(ref(tex))))


@export
def hipModuleGetTexRef(out, hmod, name):
    if out == c.ffi.NULL or name == c.ffi.NULL:
        raise HipError(INVALID, "null argument")
    out[0] = c.ffi.cast("void*", int(c.check(texrefs.hipModuleGetTexRef(module_of(hmod), c.ffi.string(name)))))


@export
def hipTexRefSetArray(tex, a, flags):
    c.check(texrefs.hipTexRefSetArray(ref(tex), array(a), flags))


@export
def hipTexRefSetAddress(offset, tex, dev_ptr, size):
    set_offset(offset, c.check(texrefs.hipTexRefSetAddress(ref(tex), c.addr(dev_ptr), size)))


@export
def hipTexRefSetAddress2D(tex, d, dev_ptr, pitch):
    c.check(texrefs.hipTexRefSetAddress2D(ref(tex), view(d), c.addr(dev_ptr), pitch))


@export
def hipTexRefSetAddressMode(tex, dim, mode):
    c.check(texrefs.hipTexRefSetAddressMode(ref(tex), dim, mode))


@export
def hipTexRefSetFilterMode(tex, mode):
    c.check(texrefs.hipTexRefSetFilterMode(ref(tex), mode))


@export
def hipTexRefSetFlags(tex, flags):
    c.check(texrefs.hipTexRefSetFlags(ref(tex), flags))


@export
def hipTexRefSetFormat(tex, fmt, n):
    c.check(texrefs.hipTexRefSetFormat(ref(tex), fmt, n))


@export
def hipTexRefGetAddress(out, tex):
    if out == c.ffi.NULL:
        raise HipError(INVALID, "null result pointer")
    out[0] = c.ffi.cast("void*", int(c.check(texrefs.hipTexRefGetAddress(ref(tex)))))


@export
def hipTexRefGetAddressMode(out, tex, dim):
    out_value(out, int(c.check(texrefs.hipTexRefGetAddressMode(ref(tex), dim))))


@export
def hipTexRefGetFilterMode(out, tex):
    out_value(out, int(c.check(texrefs.hipTexRefGetFilterMode(ref(tex)))))


@export
def hipTexRefGetFlags(out, tex):
    out_value(out, int(c.check(texrefs.hipTexRefGetFlags(ref(tex)))))


@export
def hipTexRefGetFormat(fmt, n, tex):
    if fmt == c.ffi.NULL or n == c.ffi.NULL:
        raise HipError(INVALID, "null result pointer")
    f, channels = c.check(texrefs.hipTexRefGetFormat(ref(tex)))
    fmt[0], n[0] = int(f), int(channels)
