#!/usr/bin/env python3
"""AMD's own libraries (rocRAND, rocPRIM, rocSPARSE, hipSPARSE 5.3, as Debian 12 ships them) on pyhip.

    python tools/amd_libraries.py SOURCES [--libs rocRAND,rocPRIM] [-j 2] [--timeout 600] [--compare]

``SOURCES`` holds the upstream trees at their ``rocm-5.3.x`` tags, one directory per library
(``SOURCES/rocRAND``, ``SOURCES/rocPRIM``, ``SOURCES/rocSPARSE``, ``SOURCES/hipSPARSE``; see
docs/amd-libraries.md for fetching them).  The runner builds, with Debian's hipcc for gfx90a,

* rocRAND: every ``test/test_*.cpp`` (host API over the prebuilt ``librocrand.so.1``, device API compiled
  in through ``rocrand_kernel.h``, the generators' implementation from ``library/src``),
* rocPRIM: the chosen ``test/rocprim/test_*.cpp`` (header-only: every kernel compiled here),
* rocSPARSE: the C++ samples of ``clients/samples`` over the prebuilt ``librocsparse.so.0``,
* hipSPARSE: its C++ samples and a selection of its gtest tests (``clients/tests``) in one executable,

then runs each googletest *suite* (``--gtest_filter=Suite.*``) or sample in its own process under
``pyhip exec`` (and, with ``--compare``, under ``pyhip exec --runtime amd``: AMD's HIP over pyhip's thunk,
the second opinion) with a timeout, counts the individual tests from googletest's ``[ OK ]`` /
``[ FAILED ]`` lines (a suite that times out or dies fails its unreported tests), and prints a table per
library.  Binaries and results are cached under ``~/.cache/pyhip/amd-libraries`` (``--build-dir``).
The libraries' sources are never part of pyhip.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import fcntl
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hip_conformance as hc                                      # noqa: E402  (Builder._run, run_group)

ROOT = Path(__file__).resolve().parents[1]
ARCH = hc.ARCH

# rocPRIM's tests in the order they are built (the slow part: minutes of hipcc per file); ``--rocprim all``
# takes every plain .cpp test (the .cpp.in ones are sliced by CMake and are not built here)
ROCPRIM_TESTS = [
    "test_device_reduce", "test_device_scan", "test_device_merge_sort", "test_device_select",
    "test_device_histogram", "test_device_run_length_encode", "test_device_segmented_reduce",
    "test_device_segmented_scan", "test_device_partition", "test_device_reduce_by_key", "test_device_merge",
    "test_device_binary_search", "test_device_transform", "test_device_adjacent_difference",
    "test_block_reduce", "test_block_histogram", "test_block_load_store", "test_block_exchange",
    "test_block_radix_sort", "test_block_discontinuity", "test_block_shuffle", "test_block_sort",
    "test_warp_reduce", "test_warp_scan", "test_warp_sort", "test_warp_exchange", "test_warp_load",
    "test_warp_store", "test_intrinsics", "test_thread", "test_thread_algos", "test_basic",
]
# hipSPARSE gtest sources built into one hipsparse-test (level 1, 2, 3, extra, conversion)
HIPSPARSE_TESTS = [
    "axpyi", "doti", "dotci", "gthr", "gthrz", "roti", "sctr", "spvv",
    "csrmv", "bsrmv", "hybmv", "gemvi", "csrsv2", "spmv_csr", "spmv_coo",
    "csrmm", "bsrmm", "gemmi", "csrsm2", "spmm_csr", "spmm_coo",
    "csrgemm", "csrgeam", "csr2coo", "coo2csr", "csr2csc", "nnz", "gtsv",
]
SAMPLE_ARGS = ["32", "1", "1"]          # <ndim> <trials> <batch_size> for the samples that take them


class Lib:
    """One library: which programs to build (``[(name, [sources], extra flags, libraries)]``) and what a
    program's cases are (``gtest`` suites or a ``sample`` run once)."""

    def __init__(self, name: str, src: Path, programs: list, kind: dict):
        self.name, self.src, self.programs, self.kind = name, src, programs, kind


def libraries(sources: Path, rocprim: list[str], hipsparse_tests: list[str]) -> dict[str, Lib]:
    out = {}
    r = sources / "rocRAND"
    if (r / "test").is_dir():
        flags = ["-I", str(r / "library" / "src"), "-I", str(r / "test")]
        progs = [(p.stem, [p], flags, ["rocrand", "gtest", "gtest_main"])
                 for p in sorted((r / "test").glob("test_*.cpp"))]
        out["rocRAND"] = Lib("rocRAND", r, progs, {p[0]: "gtest" for p in progs})
    r = sources / "rocPRIM"
    if (r / "test" / "rocprim").is_dir():
        flags = ["-I", str(r / "test"), "-I", str(r / "test" / "rocprim")]
        names = rocprim
        if names == ["all"]:
            names = sorted(p.stem for p in (r / "test" / "rocprim").glob("test_*.cpp"))
        progs = []
        for n in names:
            src = r / "test" / "rocprim" / f"{n}.cpp"
            extra = [r / "test" / "rocprim" / "detail" / "get_rocprim_version.cpp"] if n == "test_basic" else []
            if src.exists():
                progs.append((n, [src, *extra], flags, ["gtest", "gtest_main"]))
        out["rocPRIM"] = Lib("rocPRIM", r, progs, {p[0]: "gtest" for p in progs})
    r = sources / "rocSPARSE"
    if (r / "clients" / "samples").is_dir():
        flags = ["-I", str(r / "clients" / "include"), "-I", "/usr/include/rocsparse"]   # Debian's header dir
        progs = [(p.stem, [p], flags, ["rocsparse"]) for p in sorted((r / "clients" / "samples").glob("example_*.cpp"))]
        out["rocSPARSE"] = Lib("rocSPARSE", r, progs, {p[0]: "sample" for p in progs})
    r = sources / "hipSPARSE"
    if (r / "clients" / "samples").is_dir():
        c = r / "clients"
        # C++14 as hipSPARSE's CMake has it (its utility.cpp aliases std::filesystem when C++17's is absent)
        inc = ["-std=c++14", "-I", str(c / "include"), "-I", "/usr/include/hipsparse"]
        flags = [*inc, "-DGOOGLE_TEST"]
        common = [c / "common" / f for f in ("utility.cpp",)]
        progs = [(p.stem, [p, *common], inc, ["hipsparse", "stdc++fs"])
                 for p in sorted((c / "samples").glob("example_*.cpp"))]
        kind = {p[0]: "sample" for p in progs}
        tests = [c / "tests" / f"test_{t}.cpp" for t in hipsparse_tests if (c / "tests" / f"test_{t}.cpp").exists()]
        if tests:
            srcs = [c / "tests" / "hipsparse_gtest_main.cpp", *tests,
                    *(c / "common" / f for f in ("utility.cpp", "unit.cpp", "arg_check.cpp",
                                                 "hipsparse_template_specialization.cpp"))]
            progs.append(("hipsparse-test", srcs, flags, ["hipsparse", "gtest", "stdc++fs"]))
            kind["hipsparse-test"] = "gtest"
        out["hipSPARSE"] = Lib("hipSPARSE", r, progs, kind)
    return out


# -- building ----------------------------------------------------------------------------------------------
class Builder:
    def __init__(self, build: Path):
        self.build = build
        self.env = dict(os.environ, HIP_PLATFORM="amd")   # an nvcc on PATH must not make hipcc pick CUDA
        self.cxx = ["hipcc", f"--offload-arch={ARCH}", "-std=c++17", "-w", "-O2"]

    _run = hc.Builder._run

    def obj_path(self, lib: str, src: Path, program: str) -> Path:
        # shared sources (hipSPARSE's clients/common) build once per program: their flags differ
        tag = f"-{program}" if src.parent.name == "common" else ""
        return self.build / lib / "obj" / f"{src.parent.name}_{src.stem}{tag}.o"

    def program(self, lib: str, name: str, srcs, flags, libs) -> tuple[Path | None, str | None]:
        objs = []
        for s in srcs:
            o = self.obj_path(lib, s, name)
            if not self._run(self.cxx + list(flags) + ["-c", str(s), "-o", str(o)], o, [s], o.with_suffix(".log")):
                return None, hc._first_line(o.with_suffix(".log"), "error")
            objs.append(o)
        exe = self.build / lib / "bin" / name
        cmd = self.cxx + [str(o) for o in objs] + ["-o", str(exe)] + [f"-l{l}" for l in libs] + ["-lpthread"]
        if not self._run(cmd, exe, objs, exe.with_suffix(".linklog")):
            return None, "link failed: " + hc._first_line(exe.with_suffix(".linklog"), "error")
        return exe, None


def build_all(libs: dict[str, Lib], build: Path, jobs: int) -> tuple[dict, dict]:
    """({lib: {program: exe}}, {lib/program: first error line}); rocPRIM's files build one per worker."""
    b = Builder(build)
    built: dict[str, dict] = {n: {} for n in libs}
    failed = {}
    with cf.ThreadPoolExecutor(jobs) as pool:
        futs = {pool.submit(b.program, n, *p): (n, p[0]) for n, lib in libs.items() for p in lib.programs}
        for f in cf.as_completed(futs):
            n, prog = futs[f]
            exe, err = f.result()
            if exe is None:
                failed[f"{n}/{prog}"] = err
            else:
                built[n][prog] = exe
    return built, failed


# -- running -------------------------------------------------------------------------------------------------
def gtest_suites(exe: Path, runtime: str, timeout: float) -> list[tuple[str, list[str]]]:
    """[(suite, [test names])] from ``--gtest_list_tests`` (run under the runtime: a static constructor
    may touch the device)."""
    rc, out = hc.run_group(hc.runtime_command(runtime, exe, ["--gtest_list_tests"]), timeout, exe.parent)
    if rc is None or rc != 0:
        return []
    suites: list[tuple[str, list[str]]] = []
    for line in out.decode(errors="replace").splitlines():
        if not line.strip() or line.startswith(("Running main", "pyhip", "Query", "[")):
            continue
        if not line.startswith(" "):
            head = line.split("#")[0].strip()         # typed suites: "Suite/0.  # TypeParam = ..."
            if head.endswith("."):
                suites.append((head[:-1], []))
        elif suites:
            suites[-1][1].append(line.split("#")[0].strip())
    # googletest runs no DISABLED_ test or suite unless asked to
    return [(s, [t for t in ts if not t.startswith("DISABLED_")]) for s, ts in suites
            if not s.split("/")[-1].startswith("DISABLED_") and any(not t.startswith("DISABLED_") for t in ts)]


# "[  FAILED  ] Suite/P.test/7, where GetParam() = (...) (12 ms)": a parameterized or typed test's line names
# its parameter after the test's name
_RESULT = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+?)(?:, where .*?)?(?: \(\d+ ms\))?$", re.M)


def run_gtest(exe: Path, suite: str, tests: list[str], runtime: str, timeout: float) -> dict:
    t0 = time.monotonic()
    rc, raw = hc.run_group(hc.runtime_command(runtime, exe, [f"--gtest_filter={suite}.*"]), timeout, exe.parent)
    out = raw.decode(errors="replace")
    end = "timeout" if rc is None else (f"signal {-rc}" if rc < 0 else ("exit 0" if rc == 0 else f"exit {rc}"))
    return {"tests": gtest_statuses(out, suite, tests, rc), "end": end, "seconds": round(time.monotonic() - t0, 1),
            "why": why(out)}


def gtest_statuses(out: str, suite: str, tests: list[str], rc: int | None) -> dict[str, str]:
    """{test: passed/failed/skipped, or timeout / not run when googletest printed no result for it}."""
    seen = {}
    for m in _RESULT.finditer(out):
        name = m.group(2)
        if name.startswith(suite + "."):
            seen[name[len(suite) + 1:]] = {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[m.group(1)]
    return {t: seen.get(t, "timeout" if rc is None else "not run") for t in tests}


def run_sample(exe: Path, runtime: str, timeout: float) -> dict:
    t0 = time.monotonic()
    rc, raw = hc.run_group(hc.runtime_command(runtime, exe, SAMPLE_ARGS), timeout, exe.parent)
    out = raw.decode(errors="replace")
    st = "timeout" if rc is None else ("passed" if rc == 0 else (f"signal {-rc}" if rc < 0 else "failed"))
    return {"tests": {"": st}, "end": st, "seconds": round(time.monotonic() - t0, 1), "why": why(out)}


def why(out: str) -> str:
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if "Failure" in l or "error" in l.lower() or "Expected" in l:
            return " | ".join(x.strip() for x in lines[i:i + 4] if x.strip())[:300]
    tail = [l for l in lines if l.strip()]
    return tail[-1][:300] if tail else ""


def passed(status: str) -> bool:
    return status in ("passed", "skipped")


def save(path: Path, entries: dict) -> None:
    """Merge ``entries`` into the JSON file at ``path`` under a lock (several runs may share a build dir)."""
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = json.loads(path.read_text()) if path.exists() else {}
        old.update(entries)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(old, indent=1, sort_keys=True))
        tmp.replace(path)


def run_runtime(libs, built, runtime: str, build: Path, jobs: int, timeout: float, rerun: bool,
                filt: str | None, cached_only: bool = False, tag: str = "") -> dict:
    """{lib: {case key: result}} where a case is a gtest suite (its tests counted apart) or a sample;
    ``tag`` names a variant of the runtime's results (``-threads1``: ``PYHIP_ENGINE_THREADS=1``)."""
    cache = build / f"results-{runtime}{tag}.json"
    old = json.loads(cache.read_text()) if cache.exists() else {}
    work = []
    for n, progs in built.items():
        for prog, exe in sorted(progs.items()):
            if libs[n].kind[prog] == "sample":
                work.append((n, f"{prog}", exe, None, None))
    listing = [(n, prog, exe) for n, progs in built.items() for prog, exe in sorted(progs.items())
               if libs[n].kind[prog] == "gtest"]
    lcache = build / f"listing-{runtime}.json"
    known = json.loads(lcache.read_text()) if lcache.exists() else {}

    def names_of(exe: Path):
        hit = known.get(str(exe))
        if hit and hit["mtime"] == exe.stat().st_mtime and hit["suites"]:
            return hit["suites"]
        if cached_only:
            return []
        s = gtest_suites(exe, runtime, timeout)
        known[str(exe)] = {"mtime": exe.stat().st_mtime, "suites": s}
        return s
    with cf.ThreadPoolExecutor(jobs) as pool:
        suites = list(pool.map(lambda x: names_of(x[2]), listing))
    save(lcache, {k: v for k, v in known.items() if k in {str(x[2]) for x in listing}})
    for (n, prog, exe), ss in zip(listing, suites):
        if not ss and not cached_only:
            work.append((n, f"{prog}::<listing>", exe, None, []))
        for suite, tests in ss:
            work.append((n, f"{prog}::{suite}", exe, suite, tests))
    if filt:
        work = [w for w in work if re.search(filt, w[1])]
    results: dict[str, dict] = {n: {} for n in built}
    todo = []
    for n, key, exe, suite, tests in work:
        prev = old.get(f"{n}/{key}")
        if prev and not rerun and prev.get("mtime") == exe.stat().st_mtime:
            results[n][key] = prev
        else:
            todo.append((n, key, exe, suite, tests))
    if cached_only:                                   # --cached: report what earlier runs measured
        todo = []
    print(f"  {runtime}{tag}: {len(work)} cases ({len(todo)} to run)", flush=True)

    def one(n, key, exe, suite, tests):
        if tests is None:
            return run_sample(exe, runtime, timeout)
        if not tests:
            return {"tests": {"<listing>": "failed"}, "end": "listing failed", "seconds": 0, "why": ""}
        return run_gtest(exe, suite, tests, runtime, timeout)
    with cf.ThreadPoolExecutor(jobs) as pool:
        futs = {pool.submit(one, *w): w for w in todo}
        for i, f in enumerate(cf.as_completed(futs)):
            n, key, exe, _, _ = futs[f]
            res = dict(f.result(), mtime=exe.stat().st_mtime)
            results[n][key] = old[f"{n}/{key}"] = res
            save(cache, {f"{n}/{key}": res})
            bad = sum(not passed(s) for s in res["tests"].values())
            print(f"    [{i + 1}/{len(todo)}] {n} {key}: {len(res['tests']) - bad}/{len(res['tests'])} "
                  f"({res['end']}, {res['seconds']} s)", flush=True)
    return results


def flat(results: dict) -> dict[str, str]:
    """{lib/program::suite.test: status} over every individual test."""
    out = {}
    for n, cases in results.items():
        for key, r in cases.items():
            for t, st in r["tests"].items():
                if t.startswith("DISABLED_"):
                    continue
                out[f"{n}/{key}" + (f".{t}" if t else "")] = st
    return out


def report(libs: list[str], ours: dict, oracle: dict | None, failed_builds: dict, runtime: str) -> str:
    head = f"{'library':<11}{'programs':>9}{'cases':>7}{'tests':>7}{'passed':>8}"
    if oracle is not None:
        head += f"{'amd ok':>8}{'both ok':>9}{'% of amd':>9}{'ours only fail':>15}"
    head += f"{'slowest s':>10}{'total s':>9}"
    rows = [f"AMD libraries 5.3 on {runtime} ({ARCH})", head, "-" * len(head)]
    fo = flat(ours)
    fa = flat(oracle) if oracle is not None else {}
    for n in libs:
        cases = ours.get(n, {})
        tests = {k: v for k, v in fo.items() if k.startswith(n + "/")}
        progs = {k.split("::")[0] for k in cases}
        p = sum(passed(v) for v in tests.values())
        line = f"{n:<11}{len(progs):>9}{len(cases):>7}{len(tests):>7}{p:>8}"
        if oracle is not None:
            a = [k for k in tests if passed(fa.get(k, ""))]
            both = sum(passed(tests[k]) for k in a)
            line += f"{len(a):>8}{both:>9}{(100 * both / len(a) if a else 0):>8.1f}%{len(a) - both:>15}"
        secs = [r["seconds"] for r in cases.values()]
        line += f"{max(secs, default=0):>10.0f}{sum(secs):>9.0f}"
        rows.append(line)
    if failed_builds:
        rows.append(f"{len(failed_builds)} programs do not build: " + ", ".join(sorted(failed_builds)))
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", type=Path, help="directory holding rocRAND/, rocPRIM/, rocSPARSE/, hipSPARSE/")
    ap.add_argument("--libs", default="rocRAND,rocPRIM,rocSPARSE,hipSPARSE")
    ap.add_argument("--rocprim", default=",".join(ROCPRIM_TESTS[:8]),
                    help="rocPRIM test files to build (names without .cpp, or 'all'); default: 8 device-wide ones")
    ap.add_argument("--hipsparse-tests", default=",".join(HIPSPARSE_TESTS),
                    help="hipSPARSE clients/tests/test_*.cpp to link into hipsparse-test ('' for none)")
    ap.add_argument("--build-dir", type=Path, default=Path.home() / ".cache" / "pyhip" / "amd-libraries")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per case (a gtest suite or a sample)")
    ap.add_argument("--runtime", choices=("pyhip", "amd"), default="pyhip")
    ap.add_argument("--compare", action="store_true", help="also run under --runtime amd and compare")
    ap.add_argument("--engine-threads", type=int,
                    help="PYHIP_ENGINE_THREADS for every run (default: the engine's, all CPUs); its results are "
                         "cached apart (results-RUNTIME-threadsN.json)")
    ap.add_argument("-k", "--filter", help="only cases (program::suite) matching this regular expression")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="run the programs already built, build none")
    ap.add_argument("--cached", action="store_true",
                    help="build nothing, run nothing: the table of the cached results of built programs")
    ap.add_argument("--rerun", action="store_true", help="run cases again even if a result is cached")
    ap.add_argument("--failures", action="store_true", help="list every failing test")
    ap.add_argument("--json", type=Path, help="write all results here")
    a = ap.parse_args(argv)
    names = [x for x in a.libs.split(",") if x]
    libs = libraries(a.sources.resolve(), [x for x in a.rocprim.split(",") if x],
                     [x for x in a.hipsparse_tests.split(",") if x])
    for n in names:
        if n not in libs:
            raise SystemExit(f"{n}: no sources under {a.sources / n} (see docs/amd-libraries.md)")
    libs = {n: libs[n] for n in names}
    t0 = time.monotonic()
    if a.cached or a.no_build:
        built = {n: {p[0]: a.build_dir / n / "bin" / p[0] for p in lib.programs
                     if (a.build_dir / n / "bin" / p[0]).exists()} for n, lib in libs.items()}
        failed = {}
    else:
        built, failed = build_all(libs, a.build_dir, a.jobs)
    print(f"built {sum(len(v) for v in built.values())} programs, {len(failed)} do not build "
          f"({time.monotonic() - t0:.0f} s; {a.build_dir})", flush=True)
    for k, v in sorted(failed.items()):
        print(f"  {k}: {v}")
    if a.build_only:
        return 0
    runtimes = [a.runtime] + (["amd"] if a.compare and a.runtime != "amd" else [])
    tag = ""
    if a.engine_threads is not None:                  # the runs inherit it (hip_conformance._env)
        if a.engine_threads < 1:
            raise SystemExit("--engine-threads: at least 1")
        os.environ["PYHIP_ENGINE_THREADS"] = str(a.engine_threads)
        tag = f"-threads{a.engine_threads}"
    res = {rt: run_runtime(libs, built, rt, a.build_dir, a.jobs, a.timeout, a.rerun, a.filter, a.cached, tag)
           for rt in runtimes}
    ours = res[a.runtime]
    oracle = res.get("amd") if a.compare else None
    print(report(names, ours, oracle, failed, a.runtime))
    if a.failures:
        fa = flat(oracle) if oracle else {}
        whys = {f"{n}/{key}": r.get("why", "") for n, cases in ours.items() for key, r in cases.items()}
        for k, st in sorted(flat(ours).items()):
            if not passed(st):
                case = k if k in whys else k.rsplit(".", 1)[0]
                amd = f" [amd: {fa.get(k, '-')}]" if oracle else ""
                print(f"{st:<10} {k}{amd}: {whys.get(case, '')[:200]}")
    if a.json:
        a.json.write_text(json.dumps({"results": res, "build_failures": failed}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
