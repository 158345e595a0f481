"""The C ABI's peer access between emulated devices, P2P attributes and link types (clr's hip_peer.cpp); the
rules are runtime/peer.py's."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..hipapi import devices as api
from .common import invalid


def install(c) -> None:
    ffi, rt = c.ffi, c.rt
    from ..runtime import peer

    @c.export
    def hipDeviceCanAccessPeer(out, d, p):
        c.need(out)
        out[0] = api.can_access_peer(d, p)

    @c.export
    def hipDeviceEnablePeerAccess(p, flags):
        api.enable_peer_access(p, flags)

    @c.export
    def hipDeviceDisablePeerAccess(p):
        api.disable_peer_access(p)

    @c.export
    def hipCtxEnablePeerAccess(ctx, flags):
        return None

    @c.export
    def hipCtxDisablePeerAccess(ctx):
        return None

    @c.export
    def hipDeviceGetP2PAttribute(out, attr, src, dst):
        c.need(out)
        src, dst, attr = int(src), int(dst), int(attr)
        if src == dst or not 0 <= src < len(rt.devices) or not 0 <= dst < len(rt.devices):
            raise HipError(hipError_t.hipErrorInvalidDevice, "two different devices")
        if attr == 0:                              # performance rank: the link type (XGMI = 4 between them)
            out[0] = peer.LINK_TYPE
        elif attr == 1:
            out[0] = peer.can_access(rt, src, dst)
        elif attr == 2:
            out[0] = 1
        elif attr == 3:
            same = rt.devices[src].props.gcnArch == rt.devices[dst].props.gcnArch
            out[0] = peer.can_access(rt, src, dst) if same else 0
        else:
            raise invalid(f"P2P attribute {attr}")

    @c.export
    def hipExtGetLinkTypeAndHopCount(d1, d2, link, hops):
        d1, d2 = int(d1), int(d2)
        if link == ffi.NULL or hops == ffi.NULL or d1 == d2 or d1 < 0 or d2 < 0:
            raise invalid("bad arguments")
        c.device(d1), c.device(d2)
        link[0], hops[0] = peer.LINK_TYPE, 1

