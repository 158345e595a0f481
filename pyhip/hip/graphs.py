"""``pyhip.hip``: stream capture and graphs — hipStreamBeginCapture/EndCapture/IsCapturing, hipGraphCreate,
instantiate, launch, destroy — hip-python's face over ``pyhip.hipapi.graphs``."""
from __future__ import annotations

from .._hip_enums import hipStreamCaptureStatus
from ..hipapi import graphs as api
from ._api import face, hip_api

hipStreamBeginCapture = face("hipStreamBeginCapture", api.begin_capture)
hipStreamEndCapture = face("hipStreamEndCapture", api.end_capture, 1)
hipStreamIsCapturing = face("hipStreamIsCapturing", api.capture_status, 1, hipStreamCaptureStatus)
hipGraphCreate = face("hipGraphCreate", api.graph_create, 1)
hipGraphLaunch = face("hipGraphLaunch", api.graph_launch)
hipGraphExecDestroy = face("hipGraphExecDestroy", api.graph_exec_destroy)
hipGraphDestroy = face("hipGraphDestroy", api.graph_destroy)


@hip_api(2)
def hipGraphInstantiate(graph, pLogBuffer, bufferSize):
    return api.graph_instantiate(graph), None


__all__ = [n for n in dir() if n.startswith("hip")]
