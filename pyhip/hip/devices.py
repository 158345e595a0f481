"""``pyhip.hip``: device lookup and identity (ordinal, name, PCI bus id, total memory, compute capability),
peer access, limits, the stream priority range, cache configuration — hip-python's face over
``pyhip.hipapi.devices``."""
from __future__ import annotations

from .._hip_enums import hipFuncCache_t
from ..hipapi import devices as api
from ._api import hip_api


@hip_api(1)
def hipDeviceGet(ordinal):
    return api.get(ordinal)


@hip_api(1)
def hipDeviceGetName(len, device):  # noqa: A002 - hip-python's parameter name
    return api.name(device, len)


@hip_api(1)
def hipDeviceGetPCIBusId(len, device):  # noqa: A002
    return api.pci_bus_id(device, len)


@hip_api(1)
def hipDeviceGetByPCIBusId(pciBusId):
    return api.by_pci_bus_id(pciBusId.decode() if isinstance(pciBusId, (bytes, bytearray)) else str(pciBusId))


@hip_api(1)
def hipDeviceTotalMem(device):
    return api.total_mem(device)


@hip_api(2)
def hipDeviceComputeCapability(device):
    return api.compute_capability(device)


@hip_api(1)
def hipDeviceCanAccessPeer(deviceId, peerDeviceId):
    return api.can_access_peer(deviceId, peerDeviceId)


@hip_api()
def hipDeviceEnablePeerAccess(peerDeviceId, flags):
    api.enable_peer_access(peerDeviceId, flags)


@hip_api()
def hipDeviceDisablePeerAccess(peerDeviceId):
    api.disable_peer_access(peerDeviceId)


@hip_api(1)
def hipDeviceGetLimit(limit):
    return api.limit(limit)


@hip_api(2)
def hipDeviceGetStreamPriorityRange():
    return api.stream_priority_range()


@hip_api(1)
def hipDeviceGetCacheConfig():
    return hipFuncCache_t(api.cache_config())


@hip_api()
def hipDeviceSetCacheConfig(cacheConfig):
    api.set_cache_config(cacheConfig)


__all__ = [n for n in dir() if n.startswith("hip")]
