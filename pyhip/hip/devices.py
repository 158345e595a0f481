"""``pyhip.hip``: device lookup and identity (ordinal, name, PCI bus id, total memory, compute capability),
peer access, limits, the stream priority range, cache configuration — hip-python's face over
``pyhip.hipapi.devices``."""
from __future__ import annotations

from .._hip_enums import hipFuncCache_t
from ..hipapi import devices as api
from ._api import face

hipGetDeviceCount = face("hipGetDeviceCount", api.count, 1)
hipDeviceGet = face("hipDeviceGet", api.get, 1)
hipDeviceGetName = face("hipDeviceGetName", api.name, 1)
hipDeviceGetPCIBusId = face("hipDeviceGetPCIBusId", api.pci_bus_id, 1)
hipDeviceGetByPCIBusId = face("hipDeviceGetByPCIBusId", api.by_pci_bus_id, 1)
hipDeviceTotalMem = face("hipDeviceTotalMem", api.total_mem, 1)
hipDeviceComputeCapability = face("hipDeviceComputeCapability", api.compute_capability, 2)
hipDeviceCanAccessPeer = face("hipDeviceCanAccessPeer", api.can_access_peer, 1)
hipDeviceEnablePeerAccess = face("hipDeviceEnablePeerAccess", api.enable_peer_access)
hipDeviceDisablePeerAccess = face("hipDeviceDisablePeerAccess", api.disable_peer_access)
hipDeviceGetLimit = face("hipDeviceGetLimit", api.limit, 1)
hipDeviceGetStreamPriorityRange = face("hipDeviceGetStreamPriorityRange", api.stream_priority_range, 2)
hipDeviceGetCacheConfig = face("hipDeviceGetCacheConfig", api.cache_config, 1, hipFuncCache_t)
hipDeviceSetCacheConfig = face("hipDeviceSetCacheConfig", api.set_cache_config)

__all__ = [n for n in dir() if n.startswith("hip")]
