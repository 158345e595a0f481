#!/usr/bin/env python3
"""Generate, from HIP 5.2's headers (Debian's /usr/include/hip) through clang:
- pyhip/hip/_struct_layouts.py: the memory layout of every HIP struct hip-python wraps (clang's record-layout
  dump);
- pyhip/hip/_constants.py: the values of the #define constants hip-python's hip.hip exports (a host program
  compiled against the headers prints them).

Which structs: the classes with properties in hip-python's API table (pyhip/hip/_hippython_api.py, see
tools/gen_hippython_api.py); nested unnamed structs and unions get hip-python's names
(``hipResourceDesc_union_0_struct_1``).  Structs hip-python has but HIP 5.2 does not are left out.

    python3 tools/gen_hip_layouts.py [clang] [include-dir]

The output is committed; never edit it by hand.
"""
from __future__ import annotations

import importlib.util
import pprint
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_hippython_api", ROOT / "pyhip" / "hip" / "_hippython_api.py")
_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_api)                 # by path: importing pyhip.hip needs this tool's outputs
CONSTANTS, STRUCT_PROPERTIES = _api.CONSTANTS, _api.STRUCT_PROPERTIES

OUT = ROOT / "pyhip" / "hip" / "_struct_layouts.py"
OUT_CONST = ROOT / "pyhip" / "hip" / "_constants.py"


def constants(clang: str, inc: str) -> dict:
    """Compile and run a host program printing each #define hip-python exports (skipping those HIP 5.2 lacks)."""
    names = list(CONSTANTS)
    with tempfile.TemporaryDirectory() as tmp:
        while True:
            body = "".join(
                f'  printf("%s %d %s\\n", "{n}", _pyhip_is_str({n}), _pyhip_fmt({n}).c_str());\n' for n in names)
            src = ("#include <hip/hip_runtime_api.h>\n#include <hip/hip_version.h>\n#include <cstdio>\n#include <string>\n"
                   "template <class T> std::string _pyhip_fmt(T v) { return std::to_string(v); }\n"
                   "std::string _pyhip_fmt(const char* v) { return v; }\n"
                   "std::string _pyhip_fmt(void* v) { return std::to_string((unsigned long long)v); }\n"
                   "template <class T> int _pyhip_is_str(T) { return 0; }\nint _pyhip_is_str(const char*) { return 1; }\n"
                   "int main() {\n" + body + "}\n")
            Path(tmp, "c.cpp").write_text(src)
            r = subprocess.run([clang, "-x", "c++", "-std=c++17", "-D__HIP_PLATFORM_AMD__", f"-I{inc}", "-ferror-limit=0",
                                "-o", f"{tmp}/c", f"{tmp}/c.cpp", "-lstdc++"], capture_output=True, text=True)
            bad = {int(m.group(1)) - 11 for m in re.finditer(r"c\.cpp:(\d+):\d+: error", r.stderr)}
            if r.returncode == 0:
                break
            if not bad or not bad <= set(range(len(names))):
                sys.exit(r.stderr[-3000:])
            names = [n for i, n in enumerate(names) if i not in bad]
        out = subprocess.run([f"{tmp}/c"], capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        name, is_str, value = line.split(" ", 2)
        values[name] = value.encode() if is_str == "1" else int(value)   # char* macros are bytes in hip-python
    return values
LINE_RE = re.compile(r"^\s*(\d+)(?::(\d+)-(\d+))? \|( *)(.*)$")
SIZE_RE = re.compile(r"\[sizeof=(\d+)")
NESTED_RE = re.compile(r"^_(union|struct)_\d+$")


def dump(clang: str, inc: str, names: list[str]) -> tuple[str, list[str]]:
    """Compile one C++ file that takes sizeof() of every name; drop names HIP 5.2 does not define."""
    names = list(names)
    while True:
        src = "#include <hip/hip_runtime_api.h>\n" + "".join(
            f"unsigned long __pyhip_{i} = sizeof({n});\n" for i, n in enumerate(names))
        with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
            f.write(src)
        r = subprocess.run([clang, "-x", "c++", "-std=c++17", "-D__HIP_PLATFORM_AMD__", f"-I{inc}", "-fsyntax-only",
                            "-ferror-limit=0", "-Xclang", "-fdump-record-layouts-complete", "-Xclang",
                            "-fdump-record-layouts-canonical", f.name], capture_output=True, text=True)
        bad = {int(m.group(1)) - 2 for m in re.finditer(re.escape(f.name) + r":(\d+):\d+: error", r.stderr)}
        if not bad:
            return r.stdout, names
        if not bad <= set(range(len(names))):
            sys.exit(r.stderr[-3000:])
        names = [n for i, n in enumerate(names) if i not in bad]


def parse_type(t: str):
    """(kind, C type) of a canonical clang type string."""
    if "*" in t or "(" in t and ")" in t and "unnamed" not in t:
        return "pointer"
    t = t.replace("const ", "").replace("volatile ", "").strip()
    if t.startswith("enum "):
        return "enum " + t.split()[1]
    return t


def parse_records(text: str, wanted: set[str]) -> dict:
    records: dict[str, tuple] = {}
    blocks = text.split("*** Dumping AST Record Layout")
    for block in blocks:
        lines = [ln for ln in block.splitlines() if LINE_RE.match(ln)]
        if not lines:
            continue
        m = LINE_RE.match(lines[0])
        head = m.group(5).split()
        if len(head) < 2 or head[0] not in ("struct", "union") or head[1] not in wanted or head[1] in records:
            continue
        size = SIZE_RE.search(block)
        rows = []
        for ln in lines[1:]:
            mm = LINE_RE.match(ln)
            rows.append((int(mm.group(1)), mm.group(2), mm.group(3), len(mm.group(4)) // 2 - 1, mm.group(5)))
        build(head[1], head[0], rows, 0, records, int(size.group(1)) if size else None)
    return records


def build(name: str, kind: str, rows: list, base: int, records: dict, size=None) -> None:
    """Fields of record ``name`` from the rows one level below it (rows are (offset, bitlo, bithi, depth, text))."""
    fields, counters = [], {"struct": 0, "union": 0}
    i = 0
    while i < len(rows):
        off, blo, bhi, depth, text = rows[i]
        j = i + 1
        while j < len(rows) and rows[j][3] > depth:
            j += 1
        children = rows[i + 1:j]
        ctype, fname = text.rsplit(" ", 1)
        arr = 0
        if (am := re.search(r"\[(\d+)\]$", ctype)):
            arr, ctype = int(am.group(1)), ctype[:am.start()]
        if children and "*" not in ctype:
            if "(unnamed" in ctype or "(anonymous" in ctype:
                sub_kind = "union" if ctype.startswith("union") else "struct"
                sub = f"{name}_{sub_kind}_{counters[sub_kind]}"
                counters[sub_kind] += 1
            else:
                sub_kind = "union" if ctype.startswith("union ") else "struct"
                sub = ctype.split()[-1] if ctype.split()[0] in ("struct", "union") else ctype
            if sub not in records:
                build(sub, sub_kind, [(o, a, b, d, t) for o, a, b, d, t in children], off, records)
            ftype = "record " + sub
        else:
            ftype = parse_type(ctype)
        bits = (int(blo), int(bhi) - int(blo) + 1) if blo is not None else None
        fields.append((fname, ftype, arr, off - base, bits))
        i = j
    records[name] = (kind, size, tuple(fields))


def main() -> None:
    clang = sys.argv[1] if len(sys.argv) > 1 else "clang-19"
    inc = sys.argv[2] if len(sys.argv) > 2 else "/usr/include"
    top = sorted(n for n in STRUCT_PROPERTIES if not re.search(r"_(union|struct)_\d+", n))
    text, present = dump(clang, inc, top)
    records = parse_records(text, set(present))
    missing = sorted(set(present) - set(records))
    out = ['"""HIP 5.2 struct layouts (clang record-layout dump of /usr/include/hip), generated by',
           "tools/gen_hip_structs.py. Do not edit.",
           "",
           "RECORDS[name] = (struct|union, sizeof or None for nested, fields); a field is",
           "(name, C type | 'pointer' | 'enum E' | 'record R', array length or 0, byte offset, (bit, width) or None).",
           '"""',
           "RECORDS = " + pprint.pformat(records, width=110, sort_dicts=True), ""]
    OUT.write_text("\n".join(out))
    values = constants(clang, inc)
    OUT_CONST.write_text("\n".join(
        ['"""The #define constants of hip-python\'s hip.hip with HIP 5.2\'s values, generated by',
         'tools/gen_hip_layouts.py. Do not edit."""'] + [f"{k} = {v!r}" for k, v in values.items()]) + "\n")
    print(f"wrote {OUT_CONST}: {len(values)} constants; not in HIP 5.2: {sorted(set(CONSTANTS) - set(values))}")
    print(f"wrote {OUT}: {len(records)} records; hip-python structs not in HIP 5.2: "
          f"{sorted(set(top) - set(present))}; not dumped: {missing}")


if __name__ == "__main__":
    main()
