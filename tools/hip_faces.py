"""Which HIP functions are written twice: once in the hip-python face (pyhip/hip, pyhip/hiprtc) and once in the
C ABI (pyhip/capi).

For every HIP function both faces define, the two bodies are read (ast, nothing imported) and put in one of:

  shared    both bodies call the same function of the shared layer (pyhip/hipapi, runtime, registry, errors)
            and at most one of them raises HIP errors itself: the rule lives in one place
  delegates the C body calls the hip-python face (``H.hipX``, a pyhip.hip module): one implementation, but
            the C ABI reaches it through the other face
  twice     anything else: each face carries its own checks and conversions

Usage: python3 tools/hip_faces.py [--all] [ROOT]   (prints one line per twice-written function, then counts)
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

SHARED_PACKAGES = ("pyhip.hipapi", "pyhip.runtime", "pyhip.registry", "pyhip.errors")
HIP_FACE_PACKAGES = ("pyhip.hip", "pyhip.hiprtc")
ERROR_CALLS = {"invalid", "HipError"}                # helpers that build a HIP error where they are called


@dataclass
class Body:
    path: str
    node: ast.FunctionDef
    imports: dict[str, str]                          # local name -> dotted module (or module.attr)
    helpers: dict[str, ast.FunctionDef]              # the file's other functions (followed when called)
    calls: set[str] = field(default_factory=set)     # resolved callees (dotted)
    checks: int = 0                                  # raise statements + HIP errors built here
    via_hip_face: bool = False


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST, module: str, is_package: bool) -> dict[str, str]:
    """Every import in the file (module level and in functions)."""
    out: dict[str, str] = {}
    pkg = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = imported_module(pkg, node)
            for a in node.names:
                out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def imported_module(package: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` statement in ``package`` reads from."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return base


def _dotted(expr: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        return [expr.id] + parts[::-1]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "runtime":
        return ["<Runtime>"] + parts[::-1]               # runtime().method(...)
    return None


def _analyse(body: Body, fn: ast.FunctionDef | None = None, seen: set | None = None) -> None:
    """Checks and callees of the body, and of the same file's helpers it calls (``_event``, ``new_stream``)."""
    fn = fn or body.node
    seen = seen if seen is not None else {fn.name}
    for node in ast.walk(fn):
        if isinstance(node, ast.Raise):
            body.checks += 1
        if not isinstance(node, ast.Call):
            continue
        chain = _dotted(node.func)
        if not chain:
            continue
        if chain[:2] == ["c", "rt"]:                      # the C ABI's context's runtime (capi/common.py)
            chain = chain[1:]
        head = chain[0]
        helper = body.helpers.get(head) if len(chain) == 1 else None
        if helper is not None and head not in seen:
            seen.add(head)
            _analyse(body, helper, seen)
            continue
        if head in ERROR_CALLS and len(chain) == 1:
            body.checks += 1
            continue
        if head in ("rt", "<Runtime>"):                   # the runtime object
            body.calls.add("pyhip.runtime.context.Runtime." + ".".join(chain[1:]))
            continue
        target = body.imports.get(head)
        if target is None:
            continue
        name = ".".join([target] + chain[1:])
        if target.startswith(HIP_FACE_PACKAGES) and body.path.startswith("pyhip/capi"):
            body.via_hip_face = True
        body.calls.add(name)


def _helpers(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    """The file's functions that are not HIP functions themselves."""
    return {n.name: n for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("hip") and _export_name(n) is None}


def _is_face(node: ast.AST) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.startswith("hip") and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "face" and len(node.value.args) > 1)


def _hip_face(root: Path) -> dict[str, Body]:
    out: dict[str, Body] = {}
    for pkg in ("hip", "hiprtc"):
        for path in sorted((root / "pyhip" / pkg).glob("*.py")):
            tree = ast.parse(path.read_text())
            imports = _imports(tree, _module_name(root, path), path.name == "__init__.py")
            helpers = _helpers(tree)
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("hip"):
                    out[node.name] = Body(str(path.relative_to(root)), node, imports, helpers)
                elif _is_face(node):      # hipX = face("hipX", api.x, …): a body that only calls api.x
                    name = node.targets[0].id
                    call = ast.Expr(ast.Call(func=node.value.args[1], args=[], keywords=[]))
                    fn = ast.FunctionDef(name=name, args=ast.arguments([], [], None, [], [], None, []), body=[call],
                                         decorator_list=[], returns=None, type_params=[])
                    out[name] = Body(str(path.relative_to(root)), fn, imports, helpers)
    return out


def _export_name(fn: ast.FunctionDef) -> str | None:
    for d in fn.decorator_list:
        if isinstance(d, ast.Name) and d.id == "export":                    # capi/common.py's
            return fn.name
        if (isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "export_raw"
                and d.args and isinstance(d.args[0], ast.Constant)):
            return d.args[0].value
    return None


def _c_face(root: Path) -> dict[str, Body]:
    out: dict[str, Body] = {}
    for path in sorted((root / "pyhip" / "capi").glob("*.py")):
        tree = ast.parse(path.read_text())
        imports = _imports(tree, _module_name(root, path), path.name == "__init__.py")
        helpers = _helpers(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                name = _export_name(node)
                if name and name.startswith("hip"):
                    out[name] = Body(str(path.relative_to(root)), node, imports, helpers)
    return out


def overlap(root: Path) -> list[tuple[str, str, Body, Body]]:
    """(name, verdict, hip-face body, C body) for every HIP function both faces define."""
    hip, c = _hip_face(root), _c_face(root)
    rows = []
    for name in sorted(hip.keys() & c.keys()):
        h, cb = hip[name], c[name]
        _analyse(h)
        _analyse(cb)
        common = {x for x in h.calls & cb.calls if x.startswith(SHARED_PACKAGES)}
        if common and (h.checks == 0 or cb.checks == 0):
            verdict = "shared"
        elif cb.via_hip_face:
            verdict = "delegates"
        else:
            verdict = "twice"
        rows.append((name, verdict, h, cb))
    return rows


def main(argv: list[str]) -> int:
    show_all = "--all" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    rows = overlap(root)
    counts: dict[str, int] = {}
    by_file: dict[str, int] = {}
    for name, verdict, h, cb in rows:
        counts[verdict] = counts.get(verdict, 0) + 1
        if verdict == "twice":
            by_file[cb.path] = by_file.get(cb.path, 0) + 1
        if show_all or verdict == "twice":
            print(f"{verdict:9} {name:44} {h.path} ({h.checks} checks)  {cb.path} ({cb.checks} checks)")
    print(f"\n{len(rows)} HIP functions in both faces: " +
          ", ".join(f"{counts.get(v, 0)} {v}" for v in ("shared", "delegates", "twice")))
    for path, n in sorted(by_file.items(), key=lambda kv: -kv[1]):
        print(f"  {n:3} written twice in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
