#!/usr/bin/env python3
"""Generate pyhip/hip/_hippython_api.py: every function of AMD's hip-python (hip.hip and hip.hiprtc) with
its Python signature, the C type or adapter of each parameter, and the types in its return tuple.

The facts come from hip-python's generated Cython sources (hip/hip.pyx, hip/hiprtc.pyx) on its
``codegen/rocm-rel-5.4.3`` branch, and the struct classes' property lists from the same file.  Fetch that
checkout outside the repository (never commit it), e.g. into /work/ref/hip-python, then:

    python3 tools/gen_hippython_api.py /work/ref/hip-python

The output is committed; never edit it by hand.  tests/runtime/test_hippython_signatures.py checks
pyhip.hip and pyhip.hiprtc against it.
"""
from __future__ import annotations

import pprint
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pyhip" / "hip" / "_hippython_api.py"

DEF_RE = re.compile(r"^def (\w+)\((.*)\):\s*$")
ADAPTER_RE = re.compile(r"([\w.]+)\.fromPyobj\((\w+)\)")
ENUM_RE = re.compile(r"if not isinstance\((\w+),_(\w+)__Base\)")
LOCAL_PTR_RE = re.compile(r"^\s*(\w+) = ([\w.]+)\.(?:fromPtr\(NULL\)|new\(\))")
LOCAL_C_RE = re.compile(r"^\s*cdef ([\w. ]+?) (\w+)\s*(?:=.*)?$")
RETVAL_RE = re.compile(r"^\s*_\w+__retval = ([\w.]+)\(")
CALL_RE = re.compile(r"^(\w+)\(\w+\)$")
RETURN_RE = re.compile(r"^\s*return \((.*)\)\s*$")
CLASS_RE = re.compile(r"^cdef class (\w+)\(hip\._util\.types\.Pointer\):")
PROPS_RE = re.compile(r"^\s*return (\[.*\])\s*$")


def split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def parse_functions(path: Path, module: str) -> dict:
    lines = path.read_text().splitlines()
    funcs = {}
    i = 0
    while i < len(lines):
        m = DEF_RE.match(lines[i])
        if not m:
            i += 1
            continue
        name, raw = m.group(1), m.group(2)
        body = []
        i += 1
        in_doc = False
        while i < len(lines) and not (lines[i].startswith("def ") or lines[i].startswith("@cython")
                                      or lines[i].startswith("cdef class") or lines[i].startswith("class ")):
            line = lines[i]
            if line.strip().startswith(('r"""', '"""')):
                closes = line.strip().count('"""') >= 2
                in_doc = not in_doc if not closes else in_doc
                i += 1
                continue
            if not in_doc:
                body.append(line)
            i += 1
        params = []
        for p in split_top(raw):
            p = p.split("=")[0].strip()
            toks = p.split()
            params.append([toks[-1], " ".join(toks[:-1])])
        text = "\n".join(body)
        for cls, arg in ADAPTER_RE.findall(text):
            for p in params:
                if p[0] == arg and p[1] == "object":
                    p[1] = short(cls)
        for arg, enum in ENUM_RE.findall(text):
            for p in params:
                if p[0] == arg:
                    p[1] = "enum " + enum
        locals_ = {}
        retval = None
        returns = None
        for line in body:
            if (mm := LOCAL_PTR_RE.match(line)):
                locals_[mm.group(1)] = short(mm.group(2))
            elif (mm := LOCAL_C_RE.match(line)):
                locals_[mm.group(2)] = short(mm.group(1))
            elif (mm := RETVAL_RE.match(line)):
                cls = mm.group(1)
                if cls.endswith((".fromPtr", ".fromValue")):      # a returned CStr / struct by value
                    cls = cls.rsplit(".", 1)[0]
                retval = short(cls)
            elif (mm := RETURN_RE.match(line)):
                returns = []
                for item in split_top(mm.group(1)):
                    ref = item.split()[-1] if item.startswith("None if ") else item
                    if ref.startswith("_") and ref.endswith("__retval"):
                        returns.append(locals_.get(ref, retval))
                    elif item.startswith("None if "):
                        returns.append(locals_.get(ref, "?"))
                    elif (cm := CALL_RE.match(item)):                  # an enum out-value: E(x)
                        returns.append(cm.group(1))
                    elif "." in item and item.split(".")[0] in ("hipError_t", "hiprtcResult"):
                        returns.append(item.split(".")[0])
                    else:
                        returns.append(locals_.get(item, "?"))
                # the CStr of hipGetErrorName & co. is built by fromPtr of the call, not of NULL
        if returns is None:
            continue
        funcs[name] = {"module": module, "params": tuple(tuple(p) for p in params), "returns": tuple(returns)}
    return funcs


def parse_structs(path: Path) -> dict:
    """hip-python's struct wrapper classes and their PROPERTIES() lists (C field names, in order)."""
    lines = path.read_text().splitlines()
    structs, cur = {}, None
    for i, line in enumerate(lines):
        if (m := CLASS_RE.match(line)):
            cur = m.group(1)
        elif cur and line.strip() == "def PROPERTIES():":
            pm = PROPS_RE.match(lines[i + 1])
            props = eval(pm.group(1), {"__builtins__": {}}) if pm else []
            if props:
                structs[cur] = tuple(props)
            cur = None
    return structs


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/ref/hip-python")
    src = root / "hip-python" / "hip"
    if not (src / "hip.pyx").exists():
        sys.exit(f"{src}/hip.pyx not found: check out hip-python's codegen/rocm-rel-5.4.3 branch there")
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        branch = subprocess.run(["git", "-C", str(root), "rev-parse", "--abbrev-ref", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, branch = "unknown", "unknown"
    funcs = parse_functions(src / "hip.pyx", "hip")
    funcs.update(parse_functions(src / "hiprtc.pyx", "hiprtc"))
    structs = parse_structs(src / "hip.pyx")
    constants = re.findall(r"^(\w+) = chip\.(\w+)$", (src / "hip.pyx").read_text(), re.M)
    constants = [a for a, b in constants if a == b]
    init = (src / "__init__.py").read_text()
    consts = {}
    for key in ("ROCM_VERSION", "ROCM_VERSION_NAME", "ROCM_VERSION_TUPLE", "HIP_VERSION", "HIP_VERSION_NAME",
                "HIP_VERSION_TUPLE"):
        m = re.search(rf"^{key} = (?:\w+ = )?(.*)$", init, re.M)
        consts[key] = eval(m.group(1), {"__builtins__": {}})
    out = ['"""hip-python\'s API (functions, parameters, return tuples, struct properties), generated by',
           f"tools/gen_hippython_api.py from hip-python {branch} @ {commit}. Do not edit.",
           "",
           "params: (name, C type | 'enum <E>' | adapter class); returns: the types in the returned tuple.",
           '"""',
           f"HIP_PYTHON_BRANCH = {branch!r}",
           f"HIP_PYTHON_COMMIT = {commit!r}",
           f"HIP_PYTHON_VERSIONS = {pprint.pformat(consts, width=110, sort_dicts=False)}",
           "",
           "FUNCTIONS = " + pprint.pformat(funcs, width=110, sort_dicts=True),
           "",
           "STRUCT_PROPERTIES = " + pprint.pformat(structs, width=110, sort_dicts=True),
           "",
           "# module-level constants of hip.hip (the C headers' #defines; values come from HIP 5.2, see",
           "# tools/gen_hip_layouts.py)",
           "CONSTANTS = " + pprint.pformat(tuple(constants), width=110, compact=True),
           ""]
    OUT.write_text("\n".join(out))
    print(f"wrote {OUT}: {len(funcs)} functions, {len(structs)} structs")


if __name__ == "__main__":
    main()
