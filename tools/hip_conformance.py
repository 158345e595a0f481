#!/usr/bin/env python3
"""AMD's HIP conformance tests (ROCm/hip-tests ``catch/unit``) on pyhip.

    python tools/hip_conformance.py PATH_TO_HIP_TESTS [--areas memory,stream] [-j 2] [--timeout 120]

Builds every test source of the chosen areas the way hip-tests' standalone mode does (one executable per
source, linked with the Catch2 main, the shared kernels and the directory's common sources) with Debian's
hipcc 5.2 for gfx90a — sources that do not compile against HIP 5.2's headers are listed, not counted —
then runs each TEST_CASE alone under ``pyhip exec`` with a timeout and prints a table per area and
``N passed, M failed``.  Binaries and results are cached (``--build-dir``; default
``~/.cache/pyhip/hip-conformance/<checkout>``), so a rerun only rebuilds what changed.

``--check CHECKS`` runs each case under ``pyhip exec --check CHECKS`` (a comma list or ``all``; results
cached apart, as ``results-check-<CHECKS>.json``), keeps each case's JSON-lines report log
(``<build-dir>/check-logs/``) and ends with the cases that had reports and what kinds: the sanitizer's
false-alarm hunt over programs that are not ours.

``--runtime amd`` runs the same cases on AMD's own HIP (libamdhip64 5.2 over pyhip's emulated device,
when pyhip provides that runtime): the oracle.  ``--compare`` prints both and lists the cases that pass
on AMD's runtime and fail on pyhip's (pyhip's bugs).  The hip-tests sources are never part of pyhip.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# area -> directories of catch/unit that hold its tests (missing directories are fine: older checkouts)
AREAS = {
    "module": ["module"],
    "kernel": ["kernel", "launchBounds", "executionControl"],
    "stream": ["stream", "streamperthread"],
    "event": ["event"],
    "memory": ["memory"],
    "errorHandling": ["errorHandling"],
    "device": ["device"],
    "occupancy": ["occupancy"],
    "printf": ["printf"],
    "cooperativeGrps": ["cooperativeGrps"],
    "graph": ["graph"],
    "multiproc": ["../multiproc"],      # catch/multiproc: several processes (fork), IPC memory and events
}
GOAL_AREAS = ("module", "kernel", "stream", "event", "memory", "errorHandling", "device")
ARCH = "gfx90a"


# -- a small CMake subset: which sources make which test executables --------------------------------------
def _truth(cond: str) -> bool:
    """Conditions of hip-tests' CMakeLists for a Linux + AMD build."""
    c = cond.strip()
    if c.startswith("NOT "):
        return not _truth(c[4:])
    if " AND " in c:
        return all(_truth(x) for x in c.split(" AND "))
    if " OR " in c:
        return any(_truth(x) for x in c.split(" OR "))
    if "nvidia" in c or "NVIDIA" in c or c in ("WIN32", "MSVC"):
        return False
    if '"amd"' in c or c == "UNIX" or "LINUX" in c.upper():
        return True
    return False


def _commands(text: str):
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(r"(\w+)\s*\(((?:[^()]|\([^()]*\))*)\)", text, re.S):
        yield m.group(1).lower(), m.group(2)


def parse_cmake(directory: Path) -> dict:
    """{'targets': [(sources, common_sources, link_libs)], 'helpers': {exe: source},
    'options': {source: [flags]}, 'genco': [(source, output, flags)]}"""
    cm = directory / "CMakeLists.txt"
    out = {"targets": [], "helpers": {}, "options": {}, "genco": []}
    if not cm.exists():                               # no build script: every file with a TEST_CASE
        srcs = sorted(p.name for p in directory.glob("*.cc") if "TEST_CASE" in p.read_text(errors="replace"))
        out["targets"].append((srcs, [], []))
        return out
    var: dict[str, list[str]] = {}
    stack: list[list[bool]] = []                       # [active, taken]

    def active() -> bool:
        return all(s[0] for s in stack)

    def expand(args: str) -> list[str]:
        words = []
        for w in shlex.split(args, posix=True):
            m = re.fullmatch(r"\$\{(\w+)\}", w)
            words += var.get(m.group(1), []) if m else [w]
        return words

    for cmd, args in _commands(cm.read_text(errors="replace")):
        if cmd == "if":
            t = _truth(args)
            stack.append([t, t])
        elif cmd == "elseif":
            t = not stack[-1][1] and _truth(args)
            stack[-1] = [t, stack[-1][1] or t]
        elif cmd == "else":
            stack[-1] = [not stack[-1][1], True]
        elif cmd == "endif":
            stack.pop()
        elif not active():
            continue
        elif cmd == "set":
            words = expand(args)
            if words:
                var[words[0]] = [w for w in words[1:] if w not in ("CACHE", "STRING", "PARENT_SCOPE")]
        elif cmd == "list":
            words = expand(args)
            if len(words) >= 2 and words[0] == "APPEND":
                var.setdefault(words[1], []).extend(words[2:])
        elif cmd == "set_source_files_properties":
            words = expand(args)
            if "PROPERTIES" in words:
                i = words.index("PROPERTIES")
                flags = " ".join(words[i + 2:]).split()
                for src in words[:i]:
                    out["options"].setdefault(src, []).extend(flags)
        elif cmd.startswith("hip_add_exe_to_target"):
            words = expand(args)
            sections: dict[str, list[str]] = {}
            key = None
            for w in words:
                if w in ("NAME", "TEST_SRC", "TEST_TARGET_NAME", "COMMON_SHARED_SRC", "LINKER_LIBS", "PROPERTY",
                         "COMPILE_OPTIONS", "PLATFORM"):
                    key = w
                    sections.setdefault(key, [])
                elif key:
                    sections[key].append(w)
            srcs = [s for s in sections.get("TEST_SRC", []) if s.endswith((".cc", ".cpp"))]
            common = list(sections.get("COMMON_SHARED_SRC", []))
            # sources without test cases are helpers every test of the directory links (one executable
            # per source here; hip-tests' non-standalone build links them all into one)
            for s in srcs:
                f = directory / s
                if f.exists() and "TEST_CASE" not in f.read_text(errors="replace") and s not in common:
                    common.append(s)
            srcs = [s for s in dict.fromkeys(srcs) if s not in common]
            out["targets"].append((srcs, common, sections.get("LINKER_LIBS", [])))
        elif cmd == "add_executable":
            words = expand(args)
            srcs = [w for w in words[1:] if w.endswith((".cc", ".cpp"))]
            if srcs:
                out["helpers"][words[0]] = srcs[0]
        elif cmd in ("add_custom_command", "add_custom_target") and re.search(r"\s-S\s", args):
            words = expand(args)                  # device assembly some tests read (copyKernel.s)
            src = next((Path(w).name for w in words if w.endswith((".cc", ".cpp"))), None)
            if src and "-o" in words:
                flags = [w for w in words if w.startswith("-mcode-object-version")]
                out["genco"].append((src, Path(words[words.index("-o") + 1]).name, ["-S", *flags]))
        elif cmd in ("add_custom_command", "add_custom_target") and "--genco" in args:
            words = expand(args)
            src = next((Path(w).name for w in words if w.endswith((".cc", ".cpp"))), None)
            dst = None
            if "-o" in words:
                dst = Path(words[words.index("-o") + 1]).name
            elif "OUTPUT" in words:
                dst = Path(words[words.index("OUTPUT") + 1]).name
            elif cmd == "add_custom_target":
                dst = words[0]
            flags = [w for w in words if w.startswith("-mcode-object-version")]
            if src and dst:
                out["genco"].append((src, dst, flags))
    return out


# -- building ----------------------------------------------------------------------------------------------
def _have_lib(name: str) -> bool:
    dirs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/local/lib", *Path("/opt").glob("rocm*/lib")]
    return any((Path(d) / f"lib{name}.so").exists() for d in dirs)


def _compat_flags(catch: Path, build: Path) -> list[str]:
    """Newer checkouts' shared harness header (include/utils.hh, ``LaunchDelayKernel``/``Delay``) uses a
    device attribute and a host-visible declaration of ``wall_clock64`` that HIP 5.2's headers lack (5.2
    defines ``wall_clock64`` for the device pass only).  Supply both as later HIP has them: the attribute's
    number (pyhip answers it; AMD's 5.2 runtime returns hipErrorInvalidValue) and a forced-include header
    declaring the device function for the host pass.  Test sources themselves are never patched: a case
    that uses a post-5.2 name still fails to build and is listed, not counted."""
    utils = catch / "include" / "utils.hh"
    header = Path("/usr/include/hip/hip_runtime_api.h")
    if not (utils.exists() and header.exists()) or \
            "hipDeviceAttributeWallClockRate" in header.read_text(errors="replace"):
        return []
    text = utils.read_text(errors="replace")
    out = []
    if "hipDeviceAttributeWallClockRate" in text:
        out.append("-DhipDeviceAttributeWallClockRate=((hipDeviceAttribute_t)10017)")
    if "wall_clock64" in text:
        compat = build / "compat" / "hip52_compat.h"
        compat.parent.mkdir(parents=True, exist_ok=True)
        body = ("#pragma once\n#if defined(__HIP__) && !defined(__HIP_DEVICE_COMPILE__)\n"
                "__attribute__((device)) long long int wall_clock64();\n#endif\n")
        if not compat.exists() or compat.read_text() != body:
            compat.write_text(body)
        out += ["-include", str(compat)]
    return out


class Builder:
    def __init__(self, tests: Path, build: Path, jobs: int, verbose: bool = False, no_build: bool = False):
        self.catch = tests / "catch"
        self.no_build = no_build            # only the executables an earlier build made (nothing compiled)
        self.build = build
        self.jobs = jobs
        self.verbose = verbose
        self.env = dict(os.environ, HIP_PLATFORM="amd")
        self.cxx = ["hipcc", f"--offload-arch={ARCH}", "-std=c++17", "-w",
                    "-I", str(self.catch / "external" / "Catch2"), "-I", str(self.catch / "include"),
                    "-I", str(self.catch / "kernels"), "-I", str(self.catch / "external" / "picojson"),
                    f'-DKERNELS_PATH="{self.catch / "kernels"}/"']
        # host code at -O0, device code at hipcc's default -O3: the kernels are the ones a default build makes,
        # the host side (Catch2's assertion templates, mostly) compiles in half the time and behaves the same
        self.cxx += ["-Xarch_host", "-O0", "-Xarch_device", "-O3"]
        self.cxx += _compat_flags(self.catch, build)

    def _run(self, cmd, out: Path, inputs, log: Path) -> bool:
        """Run a compile/link step unless the same command already made ``out`` (or failed, keeping its
        log) after every input last changed."""
        line = " ".join(cmd)
        stamp = out.with_name(out.name + ".cmd")

        def fresh(p: Path) -> bool:
            return p.exists() and all(p.stat().st_mtime >= Path(i).stat().st_mtime for i in inputs)
        if fresh(out) and (not stamp.exists() or stamp.read_text() == line):
            stamp.write_text(line)              # (outputs made before stamps existed count as this command)
            return True
        if fresh(log) and log.read_text(errors="replace").split("\n", 1)[0] == line:
            return False                                   # failed before, same command and inputs
        out.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            log.write_text(line + "\n" + r.stdout + r.stderr)
            out.unlink(missing_ok=True)
            return False
        log.unlink(missing_ok=True)
        stamp.write_text(line)
        return True

    def obj(self, src: Path, flags=()) -> Path | None:
        rel = src.relative_to(self.catch)
        o = self.build / "obj" / rel.with_suffix(".o")
        ok = self._run(self.cxx + list(flags) + ["-c", str(src), "-o", str(o)], o, [src], o.with_suffix(".log"))
        return o if ok else None

    def link(self, objs, exe: Path, libs=()) -> Path | None:
        # HIP 5.2 has no separate libhiprtc.so: its libamdhip64 exports hiprtc's API (newer checkouts link it)
        libs = [l for l in libs if l in ("hiprtc",) and _have_lib(l)]
        cmd = self.cxx + [str(o) for o in objs] + ["-o", str(exe), "-lstdc++fs", "-ldl", "-lpthread"] + \
            [f"-l{l}" for l in libs]
        ok = self._run(cmd, exe, objs, exe.with_suffix(".linklog"))
        return exe if ok else None

    def build_all(self, areas: list[str]) -> tuple[dict, dict]:
        """Returns ({area: [(exe, source)]}, {source: first error line}) ."""
        mains = [self.catch / "hipTestMain" / n for n in ("main.cc", "hip_test_context.cc", "hip_test_features.cc")]
        mains = [m for m in mains if m.exists()] + sorted((self.catch / "kernels").glob("*.cpp"))
        jobs: list = []
        plan: dict[str, list] = {}
        for area in areas:
            for d in AREAS[area]:
                directory = self.catch / "unit" / d
                if not directory.is_dir():
                    continue
                cm = parse_cmake(directory)
                helpers = list(dict.fromkeys(c for _, common, _ in cm["targets"] for c in common))
                outdir = self.build / "bin" / d
                for srcs, common, libs in cm["targets"]:
                    for s in srcs:          # every helper source of the directory (targets split them)
                        plan.setdefault(area, []).append((directory, outdir, s, helpers, libs, cm["options"]))
                for exe, src in cm["helpers"].items():
                    jobs.append(("helper", directory / src, outdir / exe, cm["options"].get(src, [])))
                for src, dst, flags in cm["genco"]:
                    jobs.append(("genco", directory / src, outdir / dst, flags))
                # data files the tests open from their working directory (not_a_module.txt)
                for f in directory.glob("*.txt"):
                    if f.name != "CMakeLists.txt":
                        outdir.mkdir(parents=True, exist_ok=True)
                        if not (outdir / f.name).exists() or (outdir / f.name).read_bytes() != f.read_bytes():
                            (outdir / f.name).write_bytes(f.read_bytes())
        if self.no_build:
            jobs = []
        with cf.ThreadPoolExecutor(self.jobs) as pool:
            main_objs = [] if self.no_build else list(pool.map(self.obj, mains))
            if any(o is None for o in main_objs):
                raise SystemExit(f"the Catch2 main does not build: see {self.build / 'obj' / 'hipTestMain'}")
            aux = [pool.submit(self._aux, *j, main_objs) for j in jobs]
            work = {}
            for area, items in plan.items():
                for directory, outdir, s, common, libs, opts in items:
                    f = pool.submit(self._test, directory, outdir, s, common, libs, opts, main_objs)
                    work[f] = (area, directory / s)
            built: dict[str, list] = {a: [] for a in areas}
            failed = {}
            for f in cf.as_completed(list(work)):
                area, src = work[f]
                exe, err = f.result()
                if exe is None:
                    failed[str(src.relative_to(self.catch))] = err
                else:
                    built[area].append((exe, src))
            for a in aux:
                a.result()
        for a in built:
            built[a].sort()
        return built, failed

    def _aux(self, kind, src, out, flags, main_objs):
        if not src.exists():
            return
        if kind == "genco" and "-S" in flags:
            cmd = ["hipcc", "--cuda-device-only", f"--offload-arch={ARCH}", "-std=c++17", "-w", *flags,
                   "-I", str(self.catch / "include"), str(src), "-o", str(out)]
            self._run(cmd, out, [src], out.with_suffix(out.suffix + ".log"))
        elif kind == "genco":
            cmd = ["hipcc", "--genco", f"--offload-arch={ARCH}", "-std=c++17", "-w", *flags,
                   "-I", str(self.catch / "include"), str(src), "-o", str(out)]
            self._run(cmd, out, [src], out.with_suffix(out.suffix + ".log"))
        else:
            o = self.obj(src, flags)
            if o is not None:
                self.link([o], out)

    def _test(self, directory, outdir, s, common, libs, opts, main_objs):
        src = directory / s
        if not src.exists():
            return None, "source listed in CMakeLists.txt is missing"
        if self.no_build:
            exe = outdir / Path(s).stem
            return (exe, None) if exe.exists() else (None, "not built yet (--no-build)")
        o = self.obj(src, opts.get(s, []))
        if o is None:
            return None, first_error(src.relative_to(self.catch), self.build)
        cobjs = []
        for c in common:
            co = self.obj(directory / c, opts.get(c, []))
            if co is None:
                return None, f"common source {c} does not build"
            cobjs.append(co)
        exe = self.link([o, *cobjs, *main_objs], outdir / Path(s).stem, libs)
        if exe is None:
            return None, "link failed: " + _first_line((outdir / Path(s).stem).with_suffix(".linklog"), "error")
        return exe, None


def _first_line(log: Path, word: str) -> str:
    try:
        for line in log.read_text(errors="replace").splitlines()[1:]:
            if word in line:
                return line.strip()[:200]
    except OSError:
        pass
    return "?"


def first_error(rel: Path, build: Path) -> str:
    return _first_line(build / "obj" / rel.with_suffix(".log"), "error")


# -- running -------------------------------------------------------------------------------------------------
def runtime_command(runtime: str, exe: Path, args: list[str], check: tuple[str, Path] | None = None) -> list[str]:
    """How one case runs: on pyhip's libamdhip64 (``pyhip exec``) or on AMD's (``--runtime amd``; the
    oracle, provided by ``pyhip exec --runtime amd`` once pyhip serves AMD's HIP through its thunk);
    ``check`` = (CHECKS, log file): under ``pyhip exec --check CHECKS --check-log FILE``."""
    base = [sys.executable, "-m", "pyhip", "exec"]
    if runtime == "amd":
        base += ["--runtime", "amd"]
    if check is not None:
        base += ["--check", check[0], "--check-log", str(check[1])]
    return base + [str(exe), *args]


def check_runtime(runtime: str) -> None:
    if runtime == "pyhip":
        return
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", "--help"], capture_output=True, text=True,
                       cwd=PYHIP)
    if "--runtime" not in r.stdout:
        raise SystemExit(f"--runtime {runtime}: this pyhip's `pyhip exec` has no --runtime option yet")


def catch_escape(name: str) -> str:
    return re.sub(r"([\\,\[\]*\"])", r"\\\1", name)


def run_group(cmd, timeout: float, cwd: Path):
    """Run ``cmd`` in its own process group; on timeout the whole group (pyhip exec and the test program it
    started) is killed.  Returns (returncode or None on timeout, output bytes)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, env=_env(),
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out


def list_cases(exe: Path, runtime: str, timeout: float) -> list[str]:
    rc, out = run_group(runtime_command(runtime, exe, ["--list-test-names-only"]), timeout, exe.parent)
    text = out.decode(errors="replace")
    if rc is None or rc < 0:
        print(f"  {exe.name}: listing its cases failed ({'timeout' if rc is None else f'signal {-rc}'})")
        return []
    return [l.strip() for l in text.splitlines() if l.strip() and not l.startswith(("HIP_SKIP", " ", "pyhip"))]


PYHIP = ROOT                       # the pyhip checkout under test (--pyhip)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PYHIP) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def check_log_path(logs: Path, key: str) -> Path:
    """One case's report log: a file name made from the case's key (names hold spaces, slashes, quotes)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)[:80]
    return logs / f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.jsonl"


def read_check_log(log: Path) -> list[dict]:
    """The reports ``pyhip exec --check-log`` wrote (none when the case timed out before writing it)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(r, dict) and "totals" not in r:
            out.append(r)
    return out


def run_case(exe: Path, name: str, runtime: str, timeout: float, check: tuple[str, Path] | None = None) -> dict:
    t0 = time.monotonic()
    if check is not None:
        check[1].parent.mkdir(parents=True, exist_ok=True)
        check[1].unlink(missing_ok=True)
    rc, raw = run_group(runtime_command(runtime, exe, [catch_escape(name)], check), timeout, exe.parent)
    out = raw.decode(errors="replace")
    extra = {}
    if check is not None:
        reports = read_check_log(check[1])
        kinds: dict[str, int] = {}
        for r in reports:
            k = f"{r.get('checker', '?')} {r.get('kind', '?')}"
            kinds[k] = kinds.get(k, 0) + 1
        extra = {"reports": len(reports), "report_kinds": kinds, "log": str(check[1]),
                 "kernels": sorted({r.get("kernel") or "-" for r in reports})}
        # `pyhip exec --check` exits 1 when it found something and the program exited 0: a Catch2 run that
        # passed says so in its output
        if reports and rc == 1 and re.search(r"All tests passed", out):
            rc = 0
    if rc is None:
        status = "timeout"
    elif rc == 0 and "No tests ran" not in out and "No test cases matched" not in out:
        status = "skipped" if "HIP_SKIP_THIS_TEST" in out or "Skipping test" in out else "passed"
    elif rc < 0:
        status = f"signal {-rc}"
    else:
        status = "failed"
    return {"status": status, "seconds": round(time.monotonic() - t0, 2), "why": failure_summary(out), **extra}


def failure_summary(out: str) -> str:
    """The first failed assertion of a Catch2 report (with its expansion), or the output's last line."""
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if "FAILED:" in l or "failed:" in l.lower() and "test cases" not in l:
            return " | ".join(x.strip() for x in lines[i:i + 5] if x.strip())[:300]
    tail = [l for l in lines if l.strip()]
    return tail[-1][:300] if tail else ""


def passed(status: str) -> bool:
    return status in ("passed", "skipped")


def amd_disabled(catch: Path) -> set[str]:
    """The tests hip-tests' own AMD Linux configuration disables for a gfx90a (MI2xx) run
    (catch/hipTestMain/config: ``config_amd_linux`` — JSON behind C preprocessor conditions — or the older
    ``config_amd_linux_{common,MI2xx}.json``).  AMD's CI does not run them on its own stack."""
    cfg = catch / "hipTestMain" / "config"
    names: set[str] = set()
    for f in ("config_amd_linux", "config_amd_linux_common.json", "config_amd_linux_MI2xx.json"):
        path = cfg / f
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if "#if" in text or "#define" in text:
            r = subprocess.run(["cpp", "-P", "-Dgfx90a", '-DGITHASH="pyhip"', str(path)], capture_output=True,
                               text=True)
            if r.returncode != 0:
                continue
            text = r.stdout
        try:
            names |= {n for n in json.loads(text).get("DisabledTests", []) if isinstance(n, str)}
        except json.JSONDecodeError:
            continue
    return names


def is_disabled(key: str, disabled: set[str]) -> bool:
    name = key.split("::", 1)[-1]
    return name in disabled or name.split(" - ", 1)[0] in disabled


def report(results: dict, areas: list[str], failed_builds: dict, title: str, oracle: dict | None = None,
           disabled: set[str] | None = None) -> str:
    rows = []
    head = f"{'area':<16}{'cases':>7}{'passed':>8}{'failed':>8}{'skipped':>9}{'%pass':>7}"
    if oracle is not None:
        head += f"{'amd ok':>8}{'ours only fails':>17}"
    rows += [title, head, "-" * len(head)]
    tot = [0, 0, 0, 0, 0, 0]
    for area in areas:
        cases = {k: v for k, v in results.items() if v["area"] == area}
        n = len(cases)
        p = sum(passed(v["status"]) for v in cases.values())
        s = sum(v["status"] == "skipped" for v in cases.values())
        line = f"{area:<16}{n:>7}{p:>8}{n - p:>8}{s:>9}{(100 * p / n if n else 0):>6.0f}%"
        a = ours = 0
        if oracle is not None:
            a = sum(passed(oracle.get(k, {}).get("status", "")) for k in cases)
            ours = sum(passed(oracle.get(k, {}).get("status", "")) and not passed(v["status"]) for k, v in cases.items())
            line += f"{a:>8}{ours:>17}"
        rows.append(line)
        for i, v in enumerate((n, p, n - p, s, a, ours)):
            tot[i] += v
    rows.append("-" * len(head))
    rows.append(f"{'total':<16}{tot[0]:>7}{tot[1]:>8}{tot[2]:>8}{tot[3]:>9}{(100 * tot[1] / tot[0] if tot[0] else 0):>6.0f}%")
    goal = [k for k, v in results.items() if v["area"] in GOAL_AREAS]
    if goal:
        gp = sum(passed(results[k]["status"]) for k in goal)
        rows.append(f"goal areas ({', '.join(a for a in GOAL_AREAS if a in areas)}): {gp}/{len(goal)} = "
                    f"{100 * gp / len(goal):.1f}%")
        if disabled:
            on = [k for k in goal if not is_disabled(k, disabled)]
            op = sum(passed(results[k]["status"]) for k in on)
            rows.append(f"  without the {len(goal) - len(on)} cases hip-tests' AMD Linux configuration disables: "
                        f"{op}/{len(on)} = {100 * op / len(on) if on else 0:.1f}%")
    rows.append(f"{tot[1]} passed, {tot[2]} failed ({tot[3]} of the passes skipped themselves); "
                f"{len(failed_builds)} test sources do not build with HIP 5.2")
    return "\n".join(rows)


def check_summary(results: dict, checks: str) -> str:
    """The cases that had reports under ``--check``, with their kinds and kernels."""
    hit = {k: v for k, v in results.items() if v.get("reports")}
    timed = sum(v["status"] == "timeout" for v in results.values())
    rows = [f"--check {checks}: {len(hit)} of {len(results)} cases with reports "
            f"({sum(passed(v['status']) for v in results.values())} passed; {timed} timed out, unchecked past it)"]
    for k, v in sorted(hit.items()):
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(v["report_kinds"].items()))
        rows.append(f"  {v['status']:<8} {k}: {kinds} in {'; '.join(v.get('kernels', []))} ({v['log']})")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tests", type=Path, help="a ROCm/hip-tests checkout (the directory holding catch/)")
    ap.add_argument("--areas", default=",".join(AREAS), help="comma-separated: " + ", ".join(AREAS))
    ap.add_argument("--build-dir", type=Path)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    ap.add_argument("--runtime", choices=("pyhip", "amd"), default="pyhip")
    ap.add_argument("--compare", action="store_true", help="also run on --runtime amd and compare")
    ap.add_argument("-k", "--filter", help="only cases whose name matches this regular expression")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="compile nothing: run the executables an earlier "
                    "build made (the others are listed as not built)")
    ap.add_argument("--rerun", action="store_true", help="run cases again even if a result is cached")
    ap.add_argument("--failures", action="store_true", help="list every failing case with its first failure")
    ap.add_argument("--json", type=Path, help="write all results here")
    ap.add_argument("--pyhip", type=Path, default=ROOT, help="the pyhip checkout to test (default: this one)")
    ap.add_argument("--name", help="results cache name (default: the runtime; e.g. 'baseline')")
    ap.add_argument("--check", metavar="CHECKS", help="run each case under `pyhip exec --check CHECKS` and list "
                    "the cases with reports (CHECKS: a comma list or all)")
    a = ap.parse_args(argv)
    global PYHIP
    PYHIP = a.pyhip.resolve()
    tests = a.tests.resolve()
    if not (tests / "catch" / "unit").is_dir():
        raise SystemExit(f"{tests} is not a hip-tests checkout (no catch/unit)")
    areas = [x for x in a.areas.split(",") if x]
    for x in areas:
        if x not in AREAS:
            raise SystemExit(f"unknown area {x!r}: " + ", ".join(AREAS))
    build = a.build_dir or Path.home() / ".cache" / "pyhip" / "hip-conformance" / (
        tests.name + "-" + hashlib.sha256(str(tests).encode()).hexdigest()[:8])
    if a.check:
        r = subprocess.run([sys.executable, "-c", "import sys, pyhip.sanitizer as s; s.parse(sys.argv[1])",
                            a.check], capture_output=True, text=True, env=_env())
        if r.returncode != 0:                          # a bad name fails before anything runs
            raise SystemExit(f"--check {a.check}: " + (r.stderr.strip().splitlines() or ["?"])[-1])
        if a.compare or a.runtime != "pyhip":
            raise SystemExit("--check runs on pyhip's runtime only (AMD's HIP over the thunk is not checked)")
        a.name = a.name or "check-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", a.check)
    t0 = time.monotonic()
    built, failed_builds = Builder(tests, build, a.jobs, no_build=a.no_build).build_all(areas)
    nexe = sum(len(v) for v in built.values())
    print(f"built {nexe} test executables, {len(failed_builds)} sources do not build with HIP 5.2 "
          f"({time.monotonic() - t0:.0f} s; {build})", flush=True)
    if a.build_only:
        for src, why in sorted(failed_builds.items()):
            print(f"  {src}: {why}")
        return 0
    # every case starts a fresh interpreter: with PYTHONDONTWRITEBYTECODE set (or a fresh checkout) each one
    # would compile all of pyhip again (~2 s of CPU a case); byte-compile it once here
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(PYHIP / "pyhip")], capture_output=True)
    runtimes = [a.runtime] + (["amd"] if a.compare and a.runtime != "amd" else [])
    for rt in runtimes:
        check_runtime(rt)
    all_results = {}
    for rt in runtimes:
        cache = build / f"results-{a.name or rt}{'-amd' if a.name and rt == 'amd' else ''}.json"
        old = json.loads(cache.read_text()) if cache.exists() else {}
        cases = []
        listing = [(area, exe) for area, exes in built.items() for exe, _ in exes]
        # an executable's case names are cached with its mtime (listing runs the program under the runtime)
        lcache = build / f"listing-{rt}.json"
        known = json.loads(lcache.read_text()) if lcache.exists() else {}

        def names_of(exe: Path) -> list[str]:
            hit = known.get(str(exe))
            if hit and hit["mtime"] == exe.stat().st_mtime and hit["names"]:
                return hit["names"]
            ns = list_cases(exe, rt, a.timeout)
            known[str(exe)] = {"mtime": exe.stat().st_mtime, "names": ns}
            return ns
        with cf.ThreadPoolExecutor(a.jobs) as pool:
            names = list(pool.map(lambda ae: names_of(ae[1]), listing))
        lcache.write_text(json.dumps(known, indent=1, sort_keys=True))
        for (area, exe), ns in zip(listing, names):
            for n in ns:
                if a.filter and not re.search(a.filter, n):
                    continue
                cases.append((area, exe, n))
        print(f"  {len(cases)} cases", flush=True)
        results = {}
        todo = []
        for area, exe, n in cases:
            key = f"{exe.stem}::{n}"
            prev = old.get(key)
            if prev and not a.rerun and prev.get("mtime") == exe.stat().st_mtime:
                results[key] = prev
            else:
                todo.append((key, area, exe, n))
        with cf.ThreadPoolExecutor(a.jobs) as pool:
            logs = build / "check-logs" / (a.name or rt)
            futs = {pool.submit(run_case, exe, n, rt, a.timeout,
                                (a.check, check_log_path(logs, key)) if a.check else None): (key, area, exe)
                    for key, area, exe, n in todo}
            for i, f in enumerate(cf.as_completed(futs)):
                key, area, exe = futs[f]
                results[key] = dict(f.result(), area=area, mtime=exe.stat().st_mtime)
                old[key] = results[key]
                cache.write_text(json.dumps(old, indent=1, sort_keys=True))   # an interrupted run keeps its results
                if i % 25 == 24:
                    print(f"  {i + 1}/{len(todo)} cases run", flush=True)
        cache.write_text(json.dumps(old, indent=1, sort_keys=True))
        all_results[rt] = results
    ours = all_results[a.runtime]
    oracle = all_results.get("amd") if a.compare else None
    disabled = amd_disabled(tests / "catch")
    print(report(ours, areas, failed_builds, f"hip-tests {tests.name} on {a.runtime} ({ARCH})", oracle, disabled))
    if a.failures:
        for k, v in sorted(ours.items()):
            if not passed(v["status"]):
                off = " [disabled by AMD's config]" if is_disabled(k, disabled) else ""
                print(f"{v['area']:<14} {v['status']:<9} {k}{off}: {v['why']}")
    if a.check:
        print(check_summary(ours, a.check))
    if a.json:
        a.json.write_text(json.dumps({"results": all_results, "build_failures": failed_builds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
