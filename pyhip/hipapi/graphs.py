"""Stream capture and graphs: capture begun, ended and asked about; graphs created, instantiated, launched and
destroyed (clr's hip_graph.cpp; runtime/graph.py holds the graphs). Streams are given as hipapi.streams takes
them."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime.graph import Capture, Graph, GraphExec
from . import invalid
from .streams import _is_null, stream

CAPTURE_NONE, CAPTURE_ACTIVE, CAPTURE_INVALIDATED = 0, 1, 2      # hipStreamCaptureStatus
CAPTURE_MODES = range(3)                                          # global, thread local, relaxed


def graph(g) -> Graph:
    if not isinstance(g, Graph) or g.destroyed:
        raise invalid("not a graph")
    return g


def graph_exec(e) -> GraphExec:
    if not isinstance(e, GraphExec):
        raise invalid("not an executable graph")
    return e


def begin_capture(s, mode, before=None) -> None:
    """``before(st)``: what the caller must do once the checks passed, before the stream starts capturing."""
    if _is_null(s):
        raise HipError(hipError_t.hipErrorStreamCaptureUnsupported, "the null stream cannot be captured")
    st = stream(s)
    if int(mode) not in CAPTURE_MODES:
        raise invalid(f"capture mode {int(mode)}")
    if st.capture is not None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is capturing already")
    if before is not None:
        before(st)
    st.capture = Capture(st, int(mode))


def end_capture(s) -> Graph:
    st = stream(s)
    if st.capture is None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is not capturing")
    if st.capture.origin is not st:
        raise HipError(hipError_t.hipErrorStreamCaptureUnmatched, "capture began on another stream")
    return st.capture.end()


def capture_status(s) -> int:
    cap = stream(s).capture
    return CAPTURE_NONE if cap is None else (CAPTURE_INVALIDATED if cap.invalidated else CAPTURE_ACTIVE)


def graph_create(flags) -> Graph:
    if int(flags) != 0:
        raise invalid("flags must be 0")
    return Graph()


def graph_instantiate(g) -> GraphExec:
    return GraphExec(graph(g))


def graph_launch(e, s) -> None:
    graph_exec(e).launch(stream(s))


def graph_exec_destroy(e) -> None:
    graph_exec(e)


def graph_destroy(g) -> None:
    if not isinstance(g, Graph):
        raise invalid("not a graph")
    g.destroyed = True
