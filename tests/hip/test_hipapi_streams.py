"""pyhip.hipapi.streams: each stream and event rule checked once, at its home (both faces call it). Work is
held back by a host function waiting on a threading.Event, so 'not ready' is observed, not guessed."""
from __future__ import annotations

import threading
import time

import pytest

from pyhip.errors import HipError, hipError_t as E
from pyhip.hipapi import streams as api
from pyhip.runtime.context import hipStreamPerThread, runtime
from pyhip.runtime.graph import Capture
from pyhip.runtime.event import Event


def code(fn, *args):
    with pytest.raises(HipError) as info:
        fn(*args)
    return info.value.code


@pytest.fixture
def dev0():
    runtime().set_device(0)
    yield runtime().device()


def test_create_clamps_priorities_and_destroy_rules(dev0):
    made = [api.stream_create(0, p) for p in (-7, -1, 0, 1, 9)]
    assert [api.stream_priority(s) for s in made] == [-1, -1, 0, 1, 1]
    assert api.stream_priority(None) == api.stream_priority(0) == 0
    assert api.stream_flags(api.stream_create(1)) == 1
    assert code(api.stream_flags, None) == E.hipErrorInvalidValue
    assert code(api.stream_flags, 0) == E.hipErrorInvalidValue
    assert code(api.stream_destroy, None) == E.hipErrorInvalidHandle
    assert code(api.stream_destroy, 0) == E.hipErrorInvalidHandle
    assert code(api.stream_destroy, hipStreamPerThread) == E.hipErrorInvalidResourceHandle
    for s in made:
        api.stream_destroy(s)
    assert code(api.stream_destroy, made[0]) == E.hipErrorContextIsDestroyed
    assert code(api.stream_query, made[0]) == E.hipErrorContextIsDestroyed
    assert code(api.stream_synchronize, "not a stream") == E.hipErrorInvalidHandle


def test_pending_work_is_not_ready_until_it_runs(dev0):
    s = api.stream_create()
    gate, ran = threading.Event(), []
    start, stop = Event(), Event()
    api.event_record(start, s)
    api.stream_add_callback(s, 0, lambda st: lambda: (gate.wait(10), time.sleep(0.05), ran.append(st)))
    api.event_record(stop, s)
    try:
        assert code(api.stream_query, s) == E.hipErrorNotReady
        assert code(api.event_query, stop) == E.hipErrorNotReady
    finally:
        gate.set()
    api.stream_synchronize(s)
    assert ran == [s]
    api.stream_query(s)
    api.event_query(stop)
    api.event_synchronize(stop)
    assert 40 <= api.event_elapsed_ms(start, stop) < 10_000        # the host function slept 50 ms
    api.stream_destroy(s)


def test_callback_and_wait_rules(dev0):
    s = api.stream_create()
    ev = Event()
    assert code(api.stream_add_callback, s, 0, None) == E.hipErrorInvalidValue
    assert code(api.stream_add_callback, s, 1, lambda st: lambda: None) == E.hipErrorInvalidValue
    assert code(api.stream_wait_event, s, ev, 1) == E.hipErrorInvalidValue
    assert code(api.stream_wait_event, s, "not an event", 0) == E.hipErrorInvalidHandle
    api.stream_wait_event(s, ev, 0)                  # an event never recorded: nothing to wait for
    api.stream_synchronize(s)
    api.event_destroy(ev)
    for fn in (api.event_query, api.event_synchronize, api.event_destroy):
        assert code(fn, ev) == E.hipErrorInvalidHandle
    assert code(api.event_record, ev, s) == E.hipErrorInvalidHandle
    assert code(api.event_elapsed_ms, ev, Event()) == E.hipErrorInvalidHandle
    api.stream_destroy(s)


def test_synchronous_calls_on_a_capturing_stream(dev0):
    s = api.stream_create()
    s.capture = Capture(s, 0)
    try:
        assert code(api.stream_query, s) == E.hipErrorStreamCaptureUnsupported
        assert code(api.stream_synchronize, s) == E.hipErrorStreamCaptureUnsupported
        assert s.capture.invalidated                  # and the capture is spoilt, as ROCclr
    finally:
        s.capture = None
    api.stream_destroy(s)
