"""The C ABI's peer access between emulated devices, P2P attributes and link types (clr's hip_peer.cpp); the
rules are runtime/peer.py's."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..hipapi import devices as api
from ..runtime import peer
from .common import c, export, invalid


@export
def hipDeviceCanAccessPeer(out, d, p):
    c.need(out)
    out[0] = api.can_access_peer(d, p)


@export
def hipDeviceEnablePeerAccess(p, flags):
    api.enable_peer_access(p, flags)


@export
def hipDeviceDisablePeerAccess(p):
    api.disable_peer_access(p)


@export
def hipCtxEnablePeerAccess(ctx, flags):
    return None


@export
def hipCtxDisablePeerAccess(ctx):
    return None


@export
def hipDeviceGetP2PAttribute(out, attr, src, dst):
    c.need(out)
    src, dst, attr = int(src), int(dst), int(attr)
    if src == dst or not 0 <= src < len(c.rt.devices) or not 0 <= dst < len(c.rt.devices):
        raise HipError(hipError_t.hipErrorInvalidDevice, "two different devices")
    if attr == 0:                              # performance rank: the link type (XGMI = 4 between them)
        out[0] = peer.LINK_TYPE
    elif attr == 1:
        out[0] = peer.can_access(c.rt, src, dst)
    elif attr == 2:
        out[0] = 1
    elif attr == 3:
        same = c.rt.devices[src].props.gcnArch == c.rt.devices[dst].props.gcnArch
        out[0] = peer.can_access(c.rt, src, dst) if same else 0
    else:
        raise invalid(f"P2P attribute {attr}")


@export
def hipExtGetLinkTypeAndHopCount(d1, d2, link, hops):
    d1, d2 = int(d1), int(d2)
    if link == c.ffi.NULL or hops == c.ffi.NULL or d1 == d2 or d1 < 0 or d2 < 0:
        raise invalid("bad arguments")
    c.device(d1), c.device(d2)
    link[0], hops[0] = peer.LINK_TYPE, 1

