"""The C ABI's graphs: creation, nodes of every kind HIP 5.2 exports, dependencies, cloning, instantiation,
launch, update, and stream capture (runtime/graph.py holds the graphs; graph_params.py converts the node
parameter structs)."""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from ..hipapi import graphs as api
from ..runtime.event import Event
from ..runtime.graph import Graph, GraphExec, Node
from . import graph_params as gp
from .common import c, export, invalid


tls = threading.local()


def graph(h) -> Graph:
    return api.graph(c.obj(h, Graph, hipError_t.hipErrorInvalidValue))


def node(h) -> Node:
    return c.obj(h, Node, hipError_t.hipErrorInvalidValue)


def gexec(h) -> GraphExec:
    return c.obj(h, GraphExec, hipError_t.hipErrorInvalidValue)


def handle(o):
    c.objects[id(o)] = o
    return c.ffi.cast("void*", id(o))


def deps_of(g: Graph, deps, n):
    n = int(n)
    if n and deps == c.ffi.NULL:
        raise invalid("dependencies missing")
    return [node(deps[i]) for i in range(n)]


def add(out, g, deps, n, kind, params):
    c.need(out)
    gr = graph(g)
    nd = gr.add(kind, params, deps_of(gr, deps, n))
    out[0] = handle(nd)
    return nd


def put_list(out, count, items):
    """The count/array convention of hipGraphGetNodes and friends: a NULL array asks for the count;
    otherwise up to *count entries are written, the rest NULL, and *count is left as given."""
    c.need(count)
    if out == c.ffi.NULL:
        count[0] = len(items)
        return
    n = int(count[0])
    for i in range(n):
        out[i] = handle(items[i]) if i < len(items) else c.ffi.NULL
    if n > len(items):
        count[0] = len(items)


@export
def hipGraphCreate(out, flags):
    c.need(out)
    out[0] = handle(api.graph_create(flags))


@export
def hipGraphDestroy(g):
    api.graph_destroy(graph(g))
    c.objects.pop(c.addr(g), None)


# -- nodes ---------------------------------------------------------------------------------------------
@export
def hipGraphAddKernelNode(out, g, deps, n, params):
    add(out, g, deps, n, "kernel", gp.kernel_params(params))


@export
def hipGraphAddMemcpyNode(out, g, deps, n, params):
    add(out, g, deps, n, "memcpy", gp.memcpy3d_params(params))


@export
def hipGraphAddMemcpyNode1D(out, g, deps, n, dst, src, count, kind):
    add(out, g, deps, n, "memcpy", gp.memcpy1d_params(dst, src, count, kind))


@export
def hipGraphAddMemcpyNodeToSymbol(out, g, deps, n, symbol, src, count, offset, kind):
    add(out, g, deps, n, "memcpy", gp.symbol_params(symbol, src, count, offset, kind, to_symbol=True))


@export
def hipGraphAddMemcpyNodeFromSymbol(out, g, deps, n, dst, symbol, count, offset, kind):
    add(out, g, deps, n, "memcpy", gp.symbol_params(symbol, dst, count, offset, kind, to_symbol=False))


@export
def hipGraphAddMemsetNode(out, g, deps, n, params):
    add(out, g, deps, n, "memset", gp.memset_params(params))


@export
def hipGraphAddHostNode(out, g, deps, n, params):
    add(out, g, deps, n, "host", gp.host_params(params))


@export
def hipGraphAddEmptyNode(out, g, deps, n):
    add(out, g, deps, n, "empty", {})


@export
def hipGraphAddChildGraphNode(out, g, deps, n, child):
    ch = graph(child)
    if ch is graph(g):
        raise invalid("a graph cannot contain itself")
    add(out, g, deps, n, "graph", {"child": ch.clone()})


@export
def hipGraphAddEventRecordNode(out, g, deps, n, event):
    add(out, g, deps, n, "event_record", {"event": c.obj(event, Event, hipError_t.hipErrorInvalidValue)})


@export
def hipGraphAddEventWaitNode(out, g, deps, n, event):
    add(out, g, deps, n, "event_wait", {"event": c.obj(event, Event, hipError_t.hipErrorInvalidValue)})


@export
def hipGraphDestroyNode(n):
    nd = node(n)
    nd.graph.remove(nd)
    c.objects.pop(c.addr(n), None)


@export
def hipGraphNodeGetType(n, out):
    c.need(out)
    out[0] = node(n).type_code


@export
def hipGraphChildGraphNodeGetGraph(n, out):
    c.need(out)
    nd = node(n)
    if nd.kind != "graph":
        raise invalid("not a child graph node")
    out[0] = handle(nd.params["child"])


def event_of(n, kind):
    nd = node(n)
    if nd.kind != kind:
        raise invalid(f"not an {kind} node")
    return nd


@export
def hipGraphEventRecordNodeGetEvent(n, out):
    c.need(out)
    out[0] = c.ffi.cast("void*", id(event_of(n, "event_record").params["event"]))


@export
def hipGraphEventRecordNodeSetEvent(n, event):
    event_of(n, "event_record").params["event"] = c.obj(event, Event, hipError_t.hipErrorInvalidValue)


@export
def hipGraphEventWaitNodeGetEvent(n, out):
    c.need(out)
    out[0] = c.ffi.cast("void*", id(event_of(n, "event_wait").params["event"]))


@export
def hipGraphEventWaitNodeSetEvent(n, event):
    event_of(n, "event_wait").params["event"] = c.obj(event, Event, hipError_t.hipErrorInvalidValue)


# -- structure -----------------------------------------------------------------------------------------------
@export
def hipGraphGetNodes(g, out, count):
    put_list(out, count, graph(g).nodes)


@export
def hipGraphGetRootNodes(g, out, count):
    put_list(out, count, graph(g).roots())


@export
def hipGraphNodeGetDependencies(n, out, count):
    nd = node(n)
    put_list(out, count, nd.graph.dependencies(nd))


@export
def hipGraphNodeGetDependentNodes(n, out, count):
    nd = node(n)
    put_list(out, count, nd.graph.dependents(nd))


@export
def hipGraphGetEdges(g, src, dst, count):
    gr = graph(g)
    c.need(count)
    if src == c.ffi.NULL or dst == c.ffi.NULL:
        if src != dst:
            raise invalid("from and to must both be given")
        count[0] = len(gr.edges)
        return
    n = int(count[0])
    for i in range(n):
        a, b = gr.edges[i] if i < len(gr.edges) else (None, None)
        src[i] = handle(a) if a else c.ffi.NULL
        dst[i] = handle(b) if b else c.ffi.NULL
    if n > len(gr.edges):
        count[0] = len(gr.edges)


def pairs(g, src, dst, n):
    if int(n) and (src == c.ffi.NULL or dst == c.ffi.NULL):
        raise invalid("null node arrays")
    return [(node(src[i]), node(dst[i])) for i in range(int(n))]


@export
def hipGraphAddDependencies(g, src, dst, n):
    gr = graph(g)
    gr.add_edges(pairs(gr, src, dst, n))


@export
def hipGraphRemoveDependencies(g, src, dst, n):
    gr = graph(g)
    gr.remove_edges(pairs(gr, src, dst, n))


@export
def hipGraphClone(out, g):
    c.need(out)
    out[0] = handle(graph(g).clone())


@export
def hipGraphNodeFindInClone(out, n, clone):
    c.need(out)
    nd, cl = node(n), graph(clone)
    for x in cl.nodes:
        if x.clone_of is nd:
            out[0] = handle(x)
            return
    raise invalid("the node has no counterpart in that clone")


# -- executable graphs --------------------------------------------------------------------------------------
@export
def hipGraphInstantiate(out, g, error_node, log, size):
    c.need(out)
    out[0] = handle(api.graph_instantiate(graph(g)))


@export
def hipGraphInstantiateWithFlags(out, g, flags):
    c.need(out)
    if int(flags) not in (0, 1):             # hipGraphInstantiateFlagAutoFreeOnLaunch
        raise invalid("flags")
    out[0] = handle(api.graph_instantiate(graph(g)))


@export
def hipGraphExecDestroy(e):
    api.graph_exec_destroy(gexec(e))
    c.objects.pop(c.addr(e), None)


@export
def hipGraphLaunch(e, stream):
    api.graph_launch(gexec(e), c.stream_of(stream))


@export
def hipGraphExecUpdate(e, g, error_node, result):
    ex, gr = gexec(e), graph(g)
    c.need(result)
    if error_node != c.ffi.NULL:
        error_node[0] = c.ffi.NULL
    new = gr.topo()
    if len(new) != len(ex.order) or any(a.kind != b.kind for a, b in zip(new, ex.graph.topo())):
        result[0] = 2                        # hipGraphExecUpdateErrorTopologyChanged
        raise HipError(hipError_t.hipErrorGraphExecUpdateFailure, "the topology changed")
    for a, b in zip(new, ex.graph.topo()):
        if a.kind == "kernel" and a.params.get("handle", id(a.params.get("function"))) != \
                b.params.get("handle", id(b.params.get("function"))):
            result[0] = 4                    # hipGraphExecUpdateErrorFunctionChanged
            if error_node != c.ffi.NULL:
                error_node[0] = handle(a)
            raise HipError(hipError_t.hipErrorGraphExecUpdateFailure, "a kernel node's function changed")
    for a, b in zip(new, ex.graph.topo()):
        b.params = dict(a.params)
    result[0] = 0


def exec_node(e, n, kind):
    nd = gexec(e).node_for(node(n))
    if nd.kind != kind:
        raise invalid(f"not a {kind} node")
    return nd


@export
def hipGraphExecKernelNodeSetParams(e, n, params):
    exec_node(e, n, "kernel").params = gp.kernel_params(params)


@export
def hipGraphExecMemcpyNodeSetParams(e, n, params):
    exec_node(e, n, "memcpy").params = gp.memcpy3d_params(params)


@export
def hipGraphExecMemcpyNodeSetParams1D(e, n, dst, src, count, kind):
    exec_node(e, n, "memcpy").params = gp.memcpy1d_params(dst, src, count, kind)


@export
def hipGraphExecMemcpyNodeSetParamsToSymbol(e, n, symbol, src, count, offset, kind):
    exec_node(e, n, "memcpy").params = gp.symbol_params(symbol, src, count, offset, kind, True)


@export
def hipGraphExecMemcpyNodeSetParamsFromSymbol(e, n, dst, symbol, count, offset, kind):
    exec_node(e, n, "memcpy").params = gp.symbol_params(symbol, dst, count, offset, kind, False)


@export
def hipGraphExecMemsetNodeSetParams(e, n, params):
    exec_node(e, n, "memset").params = gp.memset_params(params)


@export
def hipGraphExecHostNodeSetParams(e, n, params):
    exec_node(e, n, "host").params = gp.host_params(params)


@export
def hipGraphExecChildGraphNodeSetParams(e, n, child):
    exec_node(e, n, "graph").params = {"child": graph(child).clone()}


@export
def hipGraphExecEventRecordNodeSetEvent(e, n, event):
    exec_node(e, n, "event_record").params = {"event": c.obj(event, Event, hipError_t.hipErrorInvalidValue)}


@export
def hipGraphExecEventWaitNodeSetEvent(e, n, event):
    exec_node(e, n, "event_wait").params = {"event": c.obj(event, Event, hipError_t.hipErrorInvalidValue)}


# -- stream capture ---------------------------------------------------------------------------------------------
def capturing_stream(stream):
    s = c.stream_of(stream)
    if s is None:
        return None
    return c.rt.resolve_stream(s)


@export
def hipStreamBeginCapture(stream, mode):
    def no_native_launches(st):              # its launches must come through Python to be recorded
        st.disable_fast()
        c.fast.invalidate()
    api.begin_capture(c.stream_of(stream), mode, no_native_launches)


@export
def hipStreamEndCapture(stream, out):
    c.need(out)
    out[0] = handle(api.end_capture(c.stream_of(stream)))


@export
def hipStreamIsCapturing(stream, status):
    c.need(status)
    status[0] = api.capture_status(c.stream_of(stream))


@export
def hipStreamGetCaptureInfo(stream, status, cid):
    c.need(status)
    st = capturing_stream(stream)
    cap = None if st is None else st.capture
    status[0] = 0 if cap is None else (2 if cap.invalidated else 1)
    if cid != c.ffi.NULL and cap is not None:
        cid[0] = cap.id


@export
def hipStreamGetCaptureInfo_v2(stream, status, cid, graph_out, deps_out, count):
    try:                  # what hipStreamGetCaptureInfo fails on (a null status) does not fail _v2 (as it always did)
        hipStreamGetCaptureInfo(stream, status, cid)
    except Exception:  # noqa: BLE001
        pass
    st = capturing_stream(stream)
    cap = None if st is None else st.capture
    if cap is None:
        return
    if graph_out != c.ffi.NULL:
        graph_out[0] = handle(cap.graph)
    deps = cap.frontier.get(id(st), [])
    if deps_out != c.ffi.NULL:
        arr = c.ffi.new("void*[]", [handle(d) for d in deps] or [c.ffi.NULL])
        c.keep[("capture deps", id(st))] = arr
        deps_out[0] = c.ffi.cast("void*", arr)
    if count != c.ffi.NULL:
        count[0] = len(deps)


@export
def hipStreamUpdateCaptureDependencies(stream, nodes, n, flags):
    st = capturing_stream(stream)
    if st is None or st.capture is None:
        raise HipError(hipError_t.hipErrorIllegalState, "the stream is not capturing")
    new = [node(nodes[i]) for i in range(int(n))]
    if int(flags) == 0:
        st.capture.frontier[id(st)] = list(dict.fromkeys(st.capture.frontier.get(id(st), []) + new))
    elif int(flags) == 1:
        st.capture.frontier[id(st)] = new
    else:
        raise invalid("flags")


@export
def hipThreadExchangeStreamCaptureMode(mode):
    c.need(mode)
    if not 0 <= int(mode[0]) <= 2:
        raise invalid("capture mode")
    old = getattr(tls, "mode", 0)
    tls.mode = int(mode[0])
    mode[0] = old
