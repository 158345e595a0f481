"""The docs stay true: every file a doc or a source comment cites exists, docs/capi.md is what
tools/gen_capi_docs.py makes of the current sources, and the README's snippets run and print what they say
(each in a subprocess, from the repository root; the hipcc one in a scratch directory under ``pyhip exec``)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = ("pyhip/", "docs/", "tests/", "tools/", "native/", "benchmarks/", ".ci/")
PACKAGES = ("loader/", "registry/", "aql/", "emu/", "runtime/", "hip/", "hiprtc/", "capi/", "thunk/", "spec/",
            "semantics/", "isa/", "jit/")
# paths in another project's tree that docs name as sources of facts, and files a doc records as removed
NOT_HERE = {"docs/hip-python.md": ("hip/hip.pyx", "hip/hiprtc.pyx", "hip/_util/types.pyx"),
            "docs/engine.md": ("native/engine/ops_valu.h", "native/engine/rows64.h")}
CITATION = re.compile(r"`([A-Za-z0-9_./*<>|-]+/[A-Za-z0-9_.*<>|-]+)`")


def _exists(path: str) -> bool:
    """A cited path, from the repository root or (``runtime/stream.py``, ``spec/lang.py``) from the package or
    the emulator's package; ``*`` globs;
    ``<area>`` placeholders and ``a.c|h`` alternatives are checked for at least one match."""
    path = path.rstrip("/.").split("|")[0]
    if "<" in path:
        path = re.sub(r"<[^>]*>", "*", path)
    for base in (ROOT, ROOT / "pyhip", ROOT / "pyhip" / "emu"):
        if any(ch in path for ch in "*?"):
            if list(base.glob(path)):
                return True
        elif (base / path).exists():
            return True
    return False


def _cited_paths(doc: Path) -> list[str]:
    rel = doc.relative_to(ROOT).as_posix()
    out = []
    for m in CITATION.finditer(doc.read_text()):
        p = m.group(1)
        if p.startswith(("http", "/")) or p in NOT_HERE.get(rel, ()):
            continue
        if p.startswith(TOP) or p.startswith(PACKAGES) or p.endswith((".md", ".py", ".c", ".h", ".hip", ".txt")):
            out.append(p)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_citations_exist(doc):
    missing = [p for p in _cited_paths(doc) if not _exists(p)]
    assert not missing, f"{doc.name} cites files that do not exist: {missing}"


def test_source_citations_of_docs_exist():
    """A comment or docstring naming ``docs/<page>.md``, or a page by its bare name (``code-object.md``),
    names a page of this repository (documents outside it are cited by a relative path: ``../shared/…``)."""
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} | {"README.md", "ARCHITECTURE.md"}
    bad = []
    for top in ("pyhip", "tests", "tools", "native", "benchmarks"):
        for f in (ROOT / top).rglob("*"):
            if f.suffix not in (".py", ".c", ".h", ".md", ".sh") or not f.is_file():
                continue
            text = f.read_text(errors="replace")
            for m in re.finditer(r"(?<![\w./-])(?:docs/)?([A-Za-z0-9_-]+\.md)\b", text):
                if m.group(1) not in pages:
                    bad.append(f"{f.relative_to(ROOT)}: {m.group(0)}")
    assert not bad, bad


def test_capi_doc_is_generated_from_the_sources():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_capi_docs
    finally:
        sys.path.pop(0)
    assert (ROOT / "docs" / "capi.md").read_text() == gen_capi_docs.render(), \
        "docs/capi.md is stale: run python3 tools/gen_capi_docs.py"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)


def _expected(code: str, marker: str) -> list[str]:
    """The output a snippet promises: the trailing comment of each line containing ``marker``."""
    return [line.split("# ", 1)[1].strip() for line in code.splitlines() if marker in line and "# " in line]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_snippet_runs(index):
    code = _blocks("python")[index]
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    want = _expected(code, "print(")
    assert want and r.stdout.splitlines() == want, r.stdout


def test_readme_hipcc_program_runs_under_pyhip_exec(tmp_path):
    require_tool("hipcc")
    [script] = [b for b in _blocks("sh") if "pyhip exec" in b]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "pyhip").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pyhip "$@"\n')
    (bindir / "pyhip").chmod(0o755)
    env = _env()
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
    r = subprocess.run(["bash", "-euc", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert r.stdout.splitlines() == _expected(script, "pyhip exec"), r.stdout


def test_quickstart_is_the_ci_entry_point():
    """The README's two quickstart commands: the demo, and the script CI runs (.ci/run)."""
    sh = _blocks("sh")
    assert "python3 -m pip install . && pyhip demo\n" in sh
    assert "bash tools/run_tests.sh\n" in sh
    assert "tools/run_tests.sh" in (ROOT / ".ci" / "run").read_text()
