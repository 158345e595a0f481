"""The structures of pyhip's drop-in libhsakmt (native/hsakmt/hsakmt_abi.h) against Debian's libhsakmt-dev
5.2 hsakmttypes.h: one C program, compiled once with each header, prints the size of every structure and the
offset and size of every field; the two outputs must be identical.  Also: the library exports exactly the
67 names of AMD's libhsakmt.so.1 5.2.3 with the HSAKMT_1 version node, and the build reports nothing
missing."""
import re
import subprocess
from pathlib import Path

import pytest

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[2]
ABI = ROOT / "native" / "hsakmt" / "hsakmt_abi.h"
SYSTEM_HEADER = Path("/usr/include/hsakmttypes.h")
SKIP_TYPES = {"HsaEventPayload"}            # an anonymous union inside HsaEventData in the 5.2 header
SIZE_ONLY = {"HsaSharedMemoryHandle"}       # HSAuint32[8] there, a struct of the same size here


def structures() -> dict[str, list[str]]:
    text = re.sub(r"/\*.*?\*/", "", ABI.read_text(), flags=re.S)
    out = {}
    for body, name in re.findall(r"typedef (?:struct|union) \{(.*?)\} (\w+);", text, flags=re.S):
        fields = []
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            for part in decl.split(","):
                m = re.search(r"(\w+)\s*(\[\d+\])?\s*$", part.strip())
                fields.append(m.group(1))
        out[name] = fields
    return out


def program(include: str) -> str:
    lines = ["#include <stdbool.h>", "#include <stdint.h>", "#include <stddef.h>", "#include <stdio.h>", include,
             "int main(void) {"]
    for name, fields in structures().items():
        if name in SKIP_TYPES:
            continue
        lines.append(f'  printf("{name} %zu\\n", sizeof({name}));')
        if name in SIZE_ONLY:
            continue
        for f in fields:
            lines.append(f'  printf("{name}.{f} %zu %zu\\n", offsetof({name}, {f}), sizeof((({name}*)0)->{f}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def run(tmp: Path, tag: str, include: str) -> str:
    src, exe = tmp / f"{tag}.c", tmp / tag
    src.write_text(program(include))
    subprocess.run([require_tool("gcc"), "-std=gnu11", str(src), "-o", str(exe)], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_layouts_match_the_5_2_header(tmp_path):
    if not SYSTEM_HEADER.exists():
        pytest.fail("libhsakmt-dev is not installed (tools/run_tests.sh installs it)")
    theirs = run(tmp_path, "debian", "#include <hsakmttypes.h>")
    ours = run(tmp_path, "pyhip", f'#include "{ABI}"')
    assert len(theirs.splitlines()) > 150
    assert ours == theirs


def test_exports_and_version_node():
    from pyhip.thunk import thunk_path

    lib = thunk_path() / "libhsakmt.so.1"
    out = subprocess.run([require_tool("readelf"), "--dyn-syms", "--wide", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    ours = set(re.findall(r"FUNC\s+GLOBAL\s+DEFAULT\s+\d+\s+(\S+)@@HSAKMT_1", out))
    amd = set(re.findall(r"FUNC\s+GLOBAL\s+DEFAULT\s+\d+\s+(\S+)@@HSAKMT_1",
                         subprocess.run([require_tool("readelf"), "--dyn-syms", "--wide",
                                         "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1"],
                                        capture_output=True, text=True, check=True).stdout))
    later = {l.split()[0] for l in (ROOT / "native" / "hsakmt" / "exports.txt").read_text().splitlines()
             if l.endswith(" later")}
    assert later == {"hsaKmtWaitOnEvent_Ext", "hsaKmtWaitOnMultipleEvents_Ext"}    # event age, ROCT 6.0
    assert len(amd) == 67 and ours == amd | later
    assert not re.search(r"GLOBAL\s+DEFAULT\s+\d+\s+(pyhip_|_cffi)", out)     # nothing else is exported
    dyn = subprocess.run([require_tool("readelf"), "-d", str(lib)], capture_output=True, text=True).stdout
    assert "Library soname: [libhsakmt.so.1]" in dyn
