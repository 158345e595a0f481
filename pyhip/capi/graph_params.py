"""Graph node parameters between HIP's structs (hipKernelNodeParams, hipMemcpy3DParms, hipMemsetParams,
hipHostNodeParams) and runtime/graph.py's node params, and the node Get/SetParams exports.  Parameters are
copied when a node is made (kernel arguments included), as CUDA/HIP specify."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime.graph import Node
from .common import c, export, invalid
from .memory import symbol_address
from .module import module_args


def kernel_params(p) -> dict:
    ffi, rt = c.ffi, c.rt
    c.need(p)
    if p.func == ffi.NULL:
        raise invalid("null kernel function")
    f = rt.registry.kernel(c.addr(p.func), rt.device())
    g, b = (p.gridDim.x, p.gridDim.y, p.gridDim.z), (p.blockDim.x, p.blockDim.y, p.blockDim.z)
    if 0 in g or 0 in b:
        raise invalid("empty grid or block")
    if p.kernelParams != ffi.NULL and p.extra != ffi.NULL:
        raise invalid("both kernelParams and extra")
    raw = module_args(f, p.kernelParams, p.extra)
    return {"handle": c.addr(p.func), "grid": g, "block": b, "shared": int(p.sharedMemBytes), "raw": raw}


def memcpy3d_params(p) -> dict:
    ffi = c.ffi
    c.need(p)
    if p.srcArray != ffi.NULL or p.dstArray != ffi.NULL:
        raise HipError(hipError_t.hipErrorNotSupported, "hipArray copies in graphs")
    if p.srcPtr.ptr == ffi.NULL or p.dstPtr.ptr == ffi.NULL:
        raise invalid("srcPtr and dstPtr are needed")
    if not 0 <= int(p.kind) <= 4:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, "kind")
    e = p.extent
    w, h, d = int(e.width), int(e.height), int(e.depth)
    if 0 in (w, h, d):
        raise invalid("empty extent")
    sp, dp = int(p.srcPtr.pitch), int(p.dstPtr.pitch)
    sh, dh = int(p.srcPtr.ysize) or h, int(p.dstPtr.ysize) or h
    src = c.addr(p.srcPtr.ptr) + int(p.srcPos.x) + int(p.srcPos.y) * sp + int(p.srcPos.z) * sp * sh
    dst = c.addr(p.dstPtr.ptr) + int(p.dstPos.x) + int(p.dstPos.y) * dp + int(p.dstPos.z) * dp * dh
    return dict(dst=dst, dpitch=dp, dslice=dp * dh, src=src, spitch=sp, sslice=sp * sh, width=w, height=h,
                depth=d, kind=int(p.kind))


def memcpy1d_params(dst, src, count, kind) -> dict:
    ffi = c.ffi
    if dst == ffi.NULL or src == ffi.NULL or int(count) == 0:
        raise invalid("null pointer or empty copy")
    if not 0 <= int(kind) <= 4:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, "kind")
    n = int(count)
    return dict(dst=c.addr(dst), dpitch=n, dslice=n, src=c.addr(src), spitch=n, sslice=n, width=n, height=1,
                depth=1, kind=int(kind))


def symbol_params(symbol, other, count, offset, kind, to_symbol: bool) -> dict:
    base = symbol_address(symbol, offset, count)
    if to_symbol:
        return memcpy1d_params(c.ffi.cast("void*", base), other, count, kind)
    return memcpy1d_params(other, c.ffi.cast("void*", base), count, kind)


def memset_params(p) -> dict:
    c.need(p)
    if p.dst == c.ffi.NULL or int(p.width) == 0 or int(p.height) == 0:
        raise invalid("null destination or empty fill")
    if int(p.elementSize) not in (1, 2, 4):
        raise invalid("element size must be 1, 2 or 4")
    e, w, h = int(p.elementSize), int(p.width), int(p.height)
    pitch = int(p.pitch) if h > 1 else w * e
    if h > 1 and pitch < w * e:
        raise invalid("pitch below the row width")
    return dict(dst=c.addr(p.dst), pitch=pitch, value=int(p.value), elem=e, width=w, height=h)


def host_params(p) -> dict:
    ffi = c.ffi
    c.need(p)
    if p.fn == ffi.NULL:
        raise invalid("null host function")
    fn = ffi.cast("void(*)(void*)", p.fn)
    user = p.userData
    return {"fn": lambda: fn(user), "c_fn": c.addr(p.fn), "c_user": c.addr(user)}


def node(h, kind) -> Node:
    n = c.obj(h, Node, hipError_t.hipErrorInvalidValue)
    if n.kind != kind:
        raise invalid(f"not a {kind} node")
    return n


@export
def hipGraphKernelNodeGetParams(n, out):
    c.need(out)
    p = node(n, "kernel").params
    f = p.get("function")
    handle = p.get("handle", getattr(f, "host_handle", 0))
    if f is None:
        f = c.rt.registry.kernel(handle, c.rt.device())
    args = [c.ffi.new("char[]", p["raw"][a.offset:a.offset + a.size] or b"\0") for a in f.kernel.explicit_args]
    arr = c.ffi.new("void*[]", [c.ffi.cast("void*", x) for x in args] or [c.ffi.NULL])
    c.keep[("kernel node args", id(p))] = (args, arr)
    out.func = c.ffi.cast("void*", handle)
    g = p.get("grid") or tuple(-(-i // b) for i, b in zip(p["items"], p["block"]))
    out.gridDim.x, out.gridDim.y, out.gridDim.z = g
    out.blockDim.x, out.blockDim.y, out.blockDim.z = p["block"]
    out.sharedMemBytes = p.get("shared", 0)
    out.kernelParams = arr
    out.extra = c.ffi.NULL


@export
def hipGraphKernelNodeSetParams(n, params):
    node(n, "kernel").params = kernel_params(params)


@export
def hipGraphMemcpyNodeGetParams(n, out):
    c.need(out)
    p = node(n, "memcpy").params
    c.ffi.memmove(out, bytes(c.ffi.sizeof("hipMemcpy3DParms")), c.ffi.sizeof("hipMemcpy3DParms"))
    out.srcPtr.ptr, out.srcPtr.pitch = c.ffi.cast("void*", p["src"]), p["spitch"]
    out.srcPtr.xsize, out.srcPtr.ysize = p["width"], p["sslice"] // max(p["spitch"], 1)
    out.dstPtr.ptr, out.dstPtr.pitch = c.ffi.cast("void*", p["dst"]), p["dpitch"]
    out.dstPtr.xsize, out.dstPtr.ysize = p["width"], p["dslice"] // max(p["dpitch"], 1)
    out.extent.width, out.extent.height, out.extent.depth = p["width"], p["height"], p["depth"]
    out.kind = p.get("kind", 4)


@export
def hipGraphMemcpyNodeSetParams(n, params):
    node(n, "memcpy").params = memcpy3d_params(params)


@export
def hipGraphMemcpyNodeSetParams1D(n, dst, src, count, kind):
    node(n, "memcpy").params = memcpy1d_params(dst, src, count, kind)


@export
def hipGraphMemcpyNodeSetParamsToSymbol(n, symbol, src, count, offset, kind):
    node(n, "memcpy").params = symbol_params(symbol, src, count, offset, kind, True)


@export
def hipGraphMemcpyNodeSetParamsFromSymbol(n, dst, symbol, count, offset, kind):
    node(n, "memcpy").params = symbol_params(symbol, dst, count, offset, kind, False)


@export
def hipGraphMemsetNodeGetParams(n, out):
    c.need(out)
    p = node(n, "memset").params
    out.dst = c.ffi.cast("void*", p["dst"])
    out.elementSize, out.value = p["elem"], p["value"]
    out.width, out.height, out.pitch = p["width"], p["height"], p["pitch"]


@export
def hipGraphMemsetNodeSetParams(n, params):
    node(n, "memset").params = memset_params(params)


@export
def hipGraphHostNodeGetParams(n, out):
    c.need(out)
    p = node(n, "host").params
    if "c_fn" not in p:
        raise invalid("the host node was captured from a stream callback")
    out.fn = c.ffi.cast("void(*)(void*)", p["c_fn"])
    out.userData = c.ffi.cast("void*", p["c_user"])


@export
def hipGraphHostNodeSetParams(n, params):
    node(n, "host").params = host_params(params)
