"""``pyhip.hip``: stream capture and graphs — hipStreamBeginCapture/EndCapture/IsCapturing, hipGraphCreate,
instantiate, launch, destroy (runtime/graph.py holds the graphs)."""
from __future__ import annotations

from .._hip_enums import hipError_t, hipStreamCaptureStatus
from ..errors import HipError
from ..runtime.context import runtime
from ..runtime.graph import Capture, Graph, GraphExec
from ._api import hip_api, invalid

@hip_api()
def hipStreamBeginCapture(stream, mode):
    if stream is None or (isinstance(stream, int) and stream == 0):
        raise HipError(hipError_t.hipErrorStreamCaptureUnsupported, "the null stream cannot be captured")
    st = runtime().resolve_stream(stream)
    if st.capture is not None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is capturing already")
    st.capture = Capture(st, int(mode))


@hip_api(1)
def hipStreamEndCapture(stream):
    st = runtime().resolve_stream(stream)
    if st.capture is None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is not capturing")
    if st.capture.origin is not st:
        raise HipError(hipError_t.hipErrorStreamCaptureUnmatched, "capture began on another stream")
    return st.capture.end()


@hip_api(1)
def hipStreamIsCapturing(stream):
    st = runtime().resolve_stream(stream)
    return hipStreamCaptureStatus(0 if st.capture is None else (2 if st.capture.invalidated else 1))


@hip_api(1)
def hipGraphCreate(flags):
    if int(flags) != 0:
        raise invalid("flags must be 0")
    return Graph()


@hip_api(2)
def hipGraphInstantiate(graph, pLogBuffer, bufferSize):
    if not isinstance(graph, Graph) or graph.destroyed:
        raise invalid("not a graph")
    return GraphExec(graph), None


@hip_api()
def hipGraphLaunch(graphExec, stream):
    if not isinstance(graphExec, GraphExec):
        raise invalid("not an executable graph")
    graphExec.launch(runtime().resolve_stream(stream))


@hip_api()
def hipGraphExecDestroy(graphExec):
    if not isinstance(graphExec, GraphExec):
        raise invalid("not an executable graph")


@hip_api()
def hipGraphDestroy(graph):
    if not isinstance(graph, Graph):
        raise invalid("not a graph")
    graph.destroyed = True


__all__ = [n for n in dir() if n.startswith("hip")]
