"""``pyhip.hip``: device lookup and identity (ordinal, name, PCI bus id, total memory, compute capability),
peer access, limits, the stream priority range, cache configuration."""
from __future__ import annotations

from .._hip_enums import hipError_t
from ..errors import HipError
from ..runtime import peer
from ..runtime.context import runtime
from ._api import hip_api, invalid

# -- devices and peers --------------------------------------------------------------------------------------------
def _device(d):
    return runtime().device(int(d))


@hip_api(1)
def hipDeviceGet(ordinal):
    return _device(ordinal).index


@hip_api(1)
def hipDeviceGetName(len, device):  # noqa: A002 - hip-python's parameter name
    if int(len) <= 0:
        raise invalid("len must be positive")
    return _device(device).props.name.encode()[:int(len) - 1]


@hip_api(1)
def hipDeviceGetPCIBusId(len, device):  # noqa: A002
    p = _device(device).props
    if int(len) <= 12:
        raise invalid("the buffer must hold 13 characters")
    return f"{p.pciDomainID:04x}:{p.pciBusID:02x}:{p.pciDeviceID:02x}.0".encode()[:int(len) - 1]


@hip_api(1)
def hipDeviceGetByPCIBusId(pciBusId):
    import re

    text = pciBusId.decode() if isinstance(pciBusId, (bytes, bytearray)) else str(pciBusId)
    m = re.match(r"\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)", text)
    if m:
        want = tuple(int(x, 16) for x in m.groups())
        for d in runtime().devices:
            if (d.props.pciDomainID, d.props.pciBusID, d.props.pciDeviceID) == want:
                return d.index
    raise invalid(f"no device at PCI bus id {text!r}")


@hip_api(1)
def hipDeviceTotalMem(device):
    return _device(device).props.totalGlobalMem


@hip_api(2)
def hipDeviceComputeCapability(device):
    p = _device(device).props
    return p.major, p.minor


@hip_api(1)
def hipDeviceCanAccessPeer(deviceId, peerDeviceId):
    return peer.can_access(int(deviceId), int(peerDeviceId))


@hip_api()
def hipDeviceEnablePeerAccess(peerDeviceId, flags):
    if int(flags) != 0:
        raise invalid("flags must be 0")
    peer.enable(runtime().current_index(), int(peerDeviceId))


@hip_api()
def hipDeviceDisablePeerAccess(peerDeviceId):
    peer.disable(runtime().current_index(), int(peerDeviceId))


@hip_api(1)
def hipDeviceGetLimit(limit):
    if int(limit) == 2:
        return runtime().device().props.totalGlobalMem
    if int(limit) == 0:
        return runtime().device().stack_size
    raise HipError(hipError_t.hipErrorUnsupportedLimit, f"limit {int(limit)}")


@hip_api(2)
def hipDeviceGetStreamPriorityRange():
    return 1, -1                                    # least, greatest (ROCclr: Low = 1, High = -1)


@hip_api(1)
def hipDeviceGetCacheConfig():
    from .._hip_enums import hipFuncCache_t
    return hipFuncCache_t(runtime().device().cache_config)


@hip_api()
def hipDeviceSetCacheConfig(cacheConfig):
    if not 0 <= int(cacheConfig) <= 3:
        raise invalid("cache config")
    runtime().device().cache_config = int(cacheConfig)


__all__ = [n for n in dir() if n.startswith("hip")]
