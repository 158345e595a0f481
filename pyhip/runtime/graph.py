"""Graphs (hipGraph*): nodes with dependencies, instantiated into executable graphs launched on a stream,
and stream capture (hipStreamBeginCapture … hipStreamEndCapture) that records a stream's work as a graph.

A node's ``params`` are a dict whose meaning depends on its ``kind`` (hipGraphNodeType):
- kernel: function (runtime Function) or handle (host function address, resolved on the launch stream's
  device), grid, block, shared, raw (explicit argument bytes), items (global sizes, hipExtModuleLaunch)
- memcpy: the 3-D copy's dst/dpitch/dslice/src/spitch/sslice/width/height/depth/kind (1-D and symbol
  copies are memcpy nodes with height = depth = 1)
- memset: dst, pitch, value, elem (element size), width (elements), height (and depth, slice for 3-D)
- host: fn (a Python callable)
- graph: child (a Graph)
- event_record / event_wait: event
- empty: nothing
An executable graph enqueues its nodes on the stream in a topological order (one stream: every dependency
holds).  Capture: while a stream captures, the runtime's enqueue paths add nodes to the capture's graph
instead of running them (see Stream.capture); a stream that waits on an event recorded during a capture joins
that capture.
"""
from __future__ import annotations

import itertools
import threading

from ..errors import HipError, hipError_t

KIND_CODES = {"kernel": 1, "memcpy": 2, "memset": 3, "host": 4, "graph": 5, "empty": 6, "event_wait": 7,
              "event_record": 8}
_ids = itertools.count(1)


def invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


class Node:
    def __init__(self, graph: "Graph", kind: str, params: dict):
        self.graph, self.kind, self.params = graph, kind, dict(params)
        self.handle = id(self)
        self.clone_of = None                 # the node this one was cloned from (hipGraphNodeFindInClone)

    @property
    def type_code(self) -> int:
        return KIND_CODES[self.kind]

    def enqueue(self, stream) -> None:
        """Put this node's work on ``stream`` (at graph launch)."""
        p, k = self.params, self.kind
        if k == "kernel":
            f = p.get("function")
            if f is None:
                from .context import runtime
                f = runtime().registry.kernel(p["handle"], stream.device)
            f.launch(stream, p.get("grid"), p["block"], p.get("shared", 0), raw=p["raw"], items=p.get("items"))
        elif k == "memcpy":
            from .copies import copy3d
            copy3d(p["dst"], p["dpitch"], p["dslice"], p["src"], p["spitch"], p["sslice"], p["width"], p["height"],
                   p["depth"], stream, False, p.get("kind", 4))
        elif k == "memset":
            from .copies import fill3d
            e = p["elem"]
            fill3d(p["dst"], p["pitch"], p.get("slice", p["pitch"] * p["height"]), p["value"], p["width"] * e,
                   p["height"], p.get("depth", 1), e, stream, False)
        elif k == "host":
            stream.host_op(p["fn"], "graph host node")
        elif k == "graph":
            for n in p["child"].topo():
                n.enqueue(stream)
        elif k == "event_record":
            p["event"].record(stream)
        elif k == "event_wait":
            ev = p["event"]
            if ev.command is not None:
                stream.wait_signal(ev.command.signal)
        elif k == "replay":
            p["replay"](stream)


class Graph:
    def __init__(self):
        self.nodes: list[Node] = []
        self.edges: list[tuple[Node, Node]] = []
        self.lock = threading.RLock()
        self.handle = id(self)
        self.destroyed = False

    def add(self, kind: str, params: dict, deps=()) -> Node:
        deps = list(deps)
        for d in deps:
            if d not in self.nodes:
                raise invalid("a dependency is not a node of this graph")
        if len(set(map(id, deps))) != len(deps):
            raise invalid("a dependency is listed twice")
        n = Node(self, kind, params)
        with self.lock:
            self.nodes.append(n)
            self.edges.extend((d, n) for d in deps)
        return n

    def dependencies(self, n: Node) -> list[Node]:
        return [a for a, b in self.edges if b is n]

    def dependents(self, n: Node) -> list[Node]:
        return [b for a, b in self.edges if a is n]

    def roots(self) -> list[Node]:
        targets = {id(b) for _, b in self.edges}
        return [n for n in self.nodes if id(n) not in targets]

    def add_edges(self, pairs) -> None:
        with self.lock:
            for a, b in pairs:
                if a not in self.nodes or b not in self.nodes or a is b:
                    raise invalid("an edge needs two different nodes of this graph")
                if any(x is a and y is b for x, y in self.edges):
                    raise invalid("the edge exists already")
            self.edges.extend(pairs)

    def remove_edges(self, pairs) -> None:
        with self.lock:
            for a, b in pairs:
                for i, (x, y) in enumerate(self.edges):
                    if x is a and y is b:
                        del self.edges[i]
                        break
                else:
                    raise invalid("no such edge")

    def remove(self, n: Node) -> None:
        with self.lock:
            if n not in self.nodes:
                raise invalid("not a node of this graph")
            self.nodes.remove(n)
            self.edges = [(a, b) for a, b in self.edges if a is not n and b is not n]

    def topo(self) -> list[Node]:
        """Kahn's algorithm, keeping insertion order among ready nodes; a cycle is hipErrorInvalidValue."""
        with self.lock:
            indeg = {id(n): 0 for n in self.nodes}
            for _, b in self.edges:
                indeg[id(b)] += 1
            order, ready = [], [n for n in self.nodes if indeg[id(n)] == 0]
            while ready:
                n = ready.pop(0)
                order.append(n)
                for b in self.dependents(n):
                    indeg[id(b)] -= 1
                    if indeg[id(b)] == 0:
                        ready.append(b)
            if len(order) != len(self.nodes):
                raise invalid("the graph has a cycle")
            return order

    def clone(self) -> "Graph":
        g = Graph()
        mapping = {}
        with self.lock:
            for n in self.nodes:
                params = dict(n.params)
                if n.kind == "graph":
                    params["child"] = n.params["child"].clone()
                c = Node(g, n.kind, params)
                c.clone_of = n
                mapping[id(n)] = c
                g.nodes.append(c)
            g.edges = [(mapping[id(a)], mapping[id(b)]) for a, b in self.edges]
        return g


class GraphExec:
    """An instantiated graph: a snapshot of the graph's nodes (later edits of the graph do not change it)."""

    def __init__(self, graph: Graph):
        self.graph = graph.clone()
        self.order = self.graph.topo()
        self.handle = id(self)

    def node_for(self, original: Node) -> Node:
        for n in self.graph.nodes:
            if n.clone_of is original:
                return n
        raise invalid("the node is not part of the instantiated graph")

    def launch(self, stream) -> None:
        if getattr(stream, "capture", None) is not None:
            raise HipError(hipError_t.hipErrorStreamCaptureUnsupported, "launching a graph into a capturing stream")
        for n in self.order:
            n.enqueue(stream)


class Capture:
    """One stream capture: the graph being built, the capturing streams and each one's frontier (the nodes
    its next operation depends on)."""

    def __init__(self, origin, mode: int):
        self.graph = Graph()
        self.origin = origin
        self.mode = mode
        self.id = next(_ids)
        self.frontier: dict[int, list[Node]] = {id(origin): []}
        self.streams = [origin]
        self.invalidated = False

    def add(self, stream, kind: str, params: dict) -> Node:
        deps = self.frontier.get(id(stream), [])
        n = self.graph.add(kind, params, deps)
        self.frontier[id(stream)] = [n]
        return n

    def record(self, stream, kind: str, params: dict) -> "CapturedCommand":
        """An enqueue on a capturing stream: a node added (:meth:`add`), the command the enqueue returns."""
        return CapturedCommand(self.add(stream, kind, params))

    def join(self, stream, nodes: list[Node]) -> None:
        if id(stream) not in self.frontier:
            self.frontier[id(stream)] = []
            self.streams.append(stream)
            stream.capture = self
        self.frontier[id(stream)] = list(dict.fromkeys(self.frontier[id(stream)] + list(nodes)))

    def end(self) -> Graph:
        for s in self.streams:
            s.capture = None
        if self.invalidated:
            raise HipError(hipError_t.hipErrorStreamCaptureInvalidated, "the capture was invalidated")
        return self.graph


class CapturedCommand:
    """What an enqueue returns while its stream captures: nothing runs, so it is complete already."""

    __slots__ = ("node", "signal", "keep", "what")

    class _Done:
        pinned = False

        def wait(self, timeout=None) -> bool:
            return True

        def is_complete(self) -> bool:
            return True

        def error(self):
            return None

        def release(self) -> None:
            pass

        def end_time(self) -> float:
            return 0.0

    def __init__(self, node):
        self.node, self.signal, self.keep, self.what = node, CapturedCommand._Done(), None, "captured"

    def done(self) -> bool:
        return True
