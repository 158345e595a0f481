"""pyhip.hipapi.graphs: capture and graph rules checked once, at their home (both faces call them). A captured
memset is replayed by launching the graph and its effect read back (numpy as the reference)."""
from __future__ import annotations

import numpy as np
import pytest

from pyhip.errors import HipError, hipError_t as E
from pyhip.hipapi import graphs as api
from pyhip.hipapi import streams
from pyhip.runtime import ops
from pyhip.runtime.context import hipStreamPerThread, runtime
from pyhip.runtime.graph import Graph


def code(fn, *args):
    with pytest.raises(HipError) as info:
        fn(*args)
    return info.value.code


def test_capture_rules():
    runtime().set_device(0)
    s, other = streams.stream_create(), streams.stream_create()
    for null in (None, 0):
        assert code(api.begin_capture, null, 0) == E.hipErrorStreamCaptureUnsupported
    assert code(api.begin_capture, s, 3) == E.hipErrorInvalidValue
    assert code(api.begin_capture, s, -1) == E.hipErrorInvalidValue
    assert code(api.end_capture, s) == E.hipErrorIllegalState
    assert api.capture_status(s) == api.CAPTURE_NONE
    seen = []
    api.begin_capture(s, 2, seen.append)
    assert seen == [s] and api.capture_status(s) == api.CAPTURE_ACTIVE
    assert code(api.begin_capture, s, 0, seen.append) == E.hipErrorIllegalState
    assert seen == [s]                                   # not called when a check fails
    other.capture = s.capture                            # joined (as an event wait does): not its origin
    try:
        assert code(api.end_capture, other) == E.hipErrorStreamCaptureUnmatched
    finally:
        other.capture = None
    s.capture.invalidated = True
    assert api.capture_status(s) == api.CAPTURE_INVALIDATED
    assert code(api.end_capture, s) == E.hipErrorStreamCaptureInvalidated
    assert api.capture_status(s) == api.CAPTURE_NONE
    assert api.capture_status(hipStreamPerThread) == api.CAPTURE_NONE
    for st in (s, other):
        streams.stream_destroy(st)


def test_graph_rules_and_a_replayed_capture():
    runtime().set_device(0)
    assert code(api.graph_create, 1) == E.hipErrorInvalidValue
    for bad in (None, "graph", 7):
        assert code(api.graph_instantiate, bad) == E.hipErrorInvalidValue
        assert code(api.graph_launch, bad, None) == E.hipErrorInvalidValue
        assert code(api.graph_exec_destroy, bad) == E.hipErrorInvalidValue
        assert code(api.graph_destroy, bad) == E.hipErrorInvalidValue
    empty = api.graph_create(0)
    assert isinstance(empty, Graph)
    api.graph_destroy(empty)
    assert code(api.graph_instantiate, empty) == E.hipErrorInvalidValue     # destroyed

    n = 1000 + 13
    buf = ops.malloc(n)
    s = streams.stream_create()
    ops.memset(buf, 0, n)
    api.begin_capture(s, 0)
    ops.memset(buf, 0x5A, n - 7, 1, s, sync=False)       # captured: nothing happens yet
    g = api.end_capture(s)
    host = np.empty(n, np.uint8)
    ops.memcpy(host, buf, n, 2)
    assert not host.any()
    e = api.graph_instantiate(g)
    api.graph_launch(e, s)
    streams.stream_synchronize(s)
    ops.memcpy(host, buf, n, 2)
    want = np.zeros(n, np.uint8)
    want[:n - 7] = 0x5A
    assert np.array_equal(host, want)
    api.graph_exec_destroy(e)
    api.graph_destroy(g)
    ops.free(buf)
    streams.stream_destroy(s)
