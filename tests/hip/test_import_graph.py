"""pyhip's module-level imports form no cycle (read with ast: nothing is imported). Imports inside functions and
under ``if TYPE_CHECKING`` are not edges. The cycles that remain are listed in ALLOWED, which may only shrink:
a module listed there that is no longer in a cycle fails the test too, so the list is kept true."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "pyhip"
sys.path.insert(0, str(ROOT / "tools"))
from hip_faces import imported_module  # noqa: E402 (tools/ is not a package)

# Module-level imports: no cycle is left anywhere in pyhip.
ALLOWED: set[str] = set()
# Counting the imports inside functions too (issue 25's "12-module cycle hidden by in-function imports"): the
# pyhip.runtime modules (runtime/hsa included) in such a cycle — none any more (leaf modules receive the device or
# the runtime's parts they work on; runtime/context.py builds the runtime from them).
ALLOWED_IN_FUNCTIONS: set[str] = set()
# The same count over all of pyhip: the modules still in such a cycle (this list, too, may only shrink).  The
# spec language folds constants with its numpy backend.
ALLOWED_IN_FUNCTIONS_ANYWHERE = {"pyhip.emu.spec.lang", "pyhip.emu.spec.numpy_backend"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _all_statements(body):
    """Every import statement, wherever it is (module level or inside functions)."""
    for stmt in body:
        yield from ast.walk(stmt)


def _top_level(body):
    """Statements that run at import: the module's own, those in if/try blocks (not ``if TYPE_CHECKING``)."""
    for node in body:
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if "TYPE_CHECKING" not in test:
                yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                yield from _top_level(block)
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)
        else:
            yield node


def _extensions() -> set[str]:
    """Compiled modules (pyhip/_native_aql*.so): leaves, importing no pyhip module."""
    return {".".join(p.relative_to(ROOT).parts[:-1] + (p.name.split(".")[0],)) for p in PKG.rglob("*.so")}


def import_graph(in_functions: bool = False) -> dict[str, set[str]]:
    mods, leaves = _modules(), _extensions()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        statements = _all_statements if in_functions else _top_level
        for node in statements(ast.parse(path.read_text()).body):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = imported_module(package, node)
                for a in node.names:                 # ``from . import x`` imports the submodule x
                    sub = f"{base}.{a.name}"
                    if sub not in leaves:
                        targets.append(sub if sub in mods else base)
            for t in targets:
                while t and t not in mods:           # ``import a.b.c`` of a name inside a module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


def test_cycle_finder_finds_a_known_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}, "f": {"g"}, "g": {"f"}}
    assert sorted(sorted(c) for c in cycles(g)) == [["a", "b", "c"], ["f", "g"]]


def test_the_graph_sees_relative_and_package_imports():
    g = import_graph()
    assert "pyhip.errors" in g["pyhip.hipapi.devices"]            # from ..errors import …
    assert "pyhip.runtime.peer" in g["pyhip.hipapi.devices"]      # from ..runtime import peer


def _check(found, allowed):
    in_cycles = set().union(*found) if found else set()
    new = [sorted(c) for c in found if not c <= allowed]
    assert not new, f"import cycles among modules not allowed: {new}"
    stale = sorted(allowed - in_cycles)
    assert not stale, f"no longer in a cycle, remove from the allow-list: {stale}"


def test_no_module_level_import_cycle():
    _check(cycles(import_graph()), ALLOWED)


def test_runtime_has_no_cycle_through_function_imports():
    def inside(m):
        return m.startswith("pyhip.runtime")
    graph = {m: {t for t in ts if inside(t)} for m, ts in import_graph(in_functions=True).items() if inside(m)}
    _check(cycles(graph), ALLOWED_IN_FUNCTIONS)


def test_no_new_cycle_through_function_imports():
    """The ISA decoder/disassembler, the semantics registry, hiprtc and the CLI are free of cycles counted with
    the imports inside functions; what is left is listed above."""
    _check(cycles(import_graph(in_functions=True)), ALLOWED_IN_FUNCTIONS_ANYWHERE)

