"""The compiler behind pyhip's hiprtc: an installed clang (HIP 5.2's clang-15 first), ROCm's device libraries and
hiprtc's builtin header, driven the way AMD's hiprtc drives comgr (ROCm 5.2-5.4 hipamd/src/hiprtc):

- compile: ``-O3 -mwavefrontsize64 --hip-version=5.2.x -DHIP_VERSION_{MAJOR,MINOR,PATCH}=.. -D__HIPCC_RTC__
  -include hiprtc_runtime.h -std=c++14 -nogpuinc`` + the user's options, for the current device's ISA unless
  ``--offload-arch=`` (or nvcc's ``--gpu-architecture=``) is given; ``-fgpu-rdc`` stops at LLVM bitcode;
- link: the inputs (bitcode or textual LLVM IR) linked together, then the device libraries clang links for
  that ISA (only what is needed), then code generation and lld into a code object.

``hiprtc_runtime.h`` is the preprocessed header AMD ships in ``libhiprtc-builtins.so.5`` (symbol
``__hipRTC_header``); without it the HIP headers of libamdhip64-dev are included instead.  Results are cached
by everything that goes into them (in memory and under ``$PYHIP_CACHE/hiprtc``; ``PYHIP_HIPRTC_CACHE=0``
turns the disk cache off).  Tool overrides: ``PYHIP_HIPRTC_CLANG``, ``PYHIP_HIPRTC_DEVICE_LIBS``.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from .._hip_enums import hipError_t  # noqa: F401  (keeps the enum module loaded first)
from ..hip._constants import HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH

CLANGS = ("clang-15", "/usr/lib/llvm-15/bin/clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang")
DEVICE_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/usr/lib/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode",
                   "/opt/rocm/lib/amdgcn/bitcode")
BUILTINS = ("libhiprtc-builtins.so.5", "/usr/lib/x86_64-linux-gnu/libhiprtc-builtins.so.5",
            "/opt/rocm/lib/libhiprtc-builtins.so.5")
INSTALL_HINT = ("install a HIP device compiler: Debian/Ubuntu `apt-get install clang-15 lld-15 llvm-15 "
                "rocm-device-libs libhiprtc-builtins5` (hipcc 5.2's toolchain), or point PYHIP_HIPRTC_CLANG at a "
                "clang with the AMDGPU target and PYHIP_HIPRTC_DEVICE_LIBS at ROCm's amdgcn/bitcode directory")
TIMEOUT = 600


class ToolchainError(RuntimeError):
    """No usable compiler, device library or header: the message says what to install."""


class Toolchain:
    def __init__(self, clang: str | None = None):
        self.clang = clang or self._find_clang()
        bindir = Path(os.path.realpath(self.clang)).parent
        self.llvm_link = self._sibling(bindir, "llvm-link")
        self.version = subprocess.run([self.clang, "--version"], capture_output=True, text=True,
                                      timeout=60).stdout.splitlines()[0]
        self.device_libs = self._find_device_libs()
        self.header, self.header_kind = self._builtin_header()
        self.fingerprint = hashlib.sha256("\0".join(
            [self.clang, self.version, self.device_libs, hashlib.sha256(self.header).hexdigest()]).encode()).hexdigest()
        self._libs: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _find_clang() -> str:
        wanted = os.environ.get("PYHIP_HIPRTC_CLANG")
        for c in ((wanted,) if wanted else CLANGS):
            path = shutil.which(c)
            if path:
                out = subprocess.run([path, "-print-targets"], capture_output=True, text=True, timeout=60).stdout
                if "amdgcn" in out:
                    return path
        raise ToolchainError(f"hiprtc: no clang with the AMDGPU target was found ({', '.join(CLANGS)}); "
                             + INSTALL_HINT)

    @staticmethod
    def _sibling(bindir: Path, tool: str) -> str:
        for cand in (bindir / tool, shutil.which(f"{tool}-{bindir.parent.name.split('-')[-1]}")):
            if cand and Path(cand).exists():
                return str(cand)
        raise ToolchainError(f"hiprtc: {tool} of {bindir} is missing; " + INSTALL_HINT)

    @staticmethod
    def _find_device_libs() -> str:
        wanted = os.environ.get("PYHIP_HIPRTC_DEVICE_LIBS")
        for d in ((wanted,) if wanted else DEVICE_LIB_DIRS):
            if d and (Path(d) / "ocml.bc").exists():
                return d
        raise ToolchainError("hiprtc: ROCm's device libraries (ocml.bc, ockl.bc...) were not found; " + INSTALL_HINT)

    @staticmethod
    def _builtin_header() -> tuple[bytes, str]:
        for name in BUILTINS:
            try:
                lib = ctypes.CDLL(name)
            except OSError:
                continue
            size = ctypes.c_uint.in_dll(lib, "__hipRTC_header_size").value
            return ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(lib, "__hipRTC_header")), size), "builtins"
        for inc in ("/usr/include", "/opt/rocm/include"):
            if (Path(inc) / "hip" / "hip_runtime.h").exists():
                return b"", inc
        raise ToolchainError("hiprtc: neither hiprtc's builtin header (libhiprtc-builtins.so.5) nor the HIP headers "
                             "(hip/hip_runtime.h) were found; " + INSTALL_HINT)

    # -- commands ------------------------------------------------------------------------------------------
    def compile_args(self, options: list[str], arch: str, rdc: bool) -> list[str]:
        args = [self.clang, "-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-mwavefrontsize64",
                f"--hip-version={HIP_VERSION_MAJOR}.{HIP_VERSION_MINOR}.{HIP_VERSION_PATCH}",
                f"-DHIP_VERSION_MAJOR={HIP_VERSION_MAJOR}", f"-DHIP_VERSION_MINOR={HIP_VERSION_MINOR}",
                f"-DHIP_VERSION_PATCH={HIP_VERSION_PATCH}"]
        if self.header_kind == "builtins":
            args += ["-D__HIPCC_RTC__", "-include", "hiprtc_runtime.h", "-std=c++14", "-nogpuinc"]
        else:                                   # no builtin header: the regular HIP headers
            args += ["-include", "hip/hip_runtime.h", "-std=c++14", "-isystem", self.header_kind]
        args += [f"--rocm-device-lib-path={self.device_libs}"] if not rdc else ["-nogpulib"]
        args += options + [f"--offload-arch={arch}"]
        if rdc:
            args += ["-fgpu-rdc", "-emit-llvm", "-c"]
        return args

    def link_libs(self, arch: str) -> list[str]:
        """The device libraries clang itself links into HIP code for ``arch`` (read from ``-###``)."""
        with self._lock:
            libs = self._libs.get(arch)
            if libs is None:
                with tempfile.TemporaryDirectory() as tmp:
                    src = Path(tmp, "e.hip")
                    src.write_text("")
                    r = subprocess.run([self.clang, "-x", "hip", "--cuda-device-only", f"--offload-arch={arch}",
                                        f"--rocm-device-lib-path={self.device_libs}", "-nogpuinc", "-###", "-c",
                                        str(src)], capture_output=True, text=True, timeout=TIMEOUT)
                libs = re.findall(r'"-mlink-builtin-bitcode" "([^"]+)"', r.stderr)
                if not libs:
                    raise ToolchainError(f"hiprtc: {self.clang} links no device library for {arch}:\n{r.stderr}")
                self._libs[arch] = libs
            return libs

    def code_object_version(self, arch: str) -> int | None:
        """The code object version the device libraries linked for ``arch`` assume (their
        ``oclc_abi_version_<N>00.bc``), or None if they name none.  The link step generates code with it:
        a clang newer than the libraries (clang-19 over ROCm 5.2's, COV4) would otherwise default to another
        version, and the libraries' hard-coded implicit-argument offsets (device printf's hostcall buffer)
        would read the wrong slots."""
        for lib in self.link_libs(arch):
            m = re.search(r"oclc_abi_version_(\d+)00\.bc$", lib)
            if m:
                return int(m.group(1))
        return None

    def run(self, args: list[str], cwd: str) -> tuple[bool, str]:
        r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
        return r.returncode == 0, r.stderr + r.stdout


_toolchain: Toolchain | None = None
_toolchain_error: ToolchainError | None = None
_alternates: list[Toolchain] | None = None
_tc_lock = threading.Lock()


def toolchain() -> Toolchain:
    """The toolchain (found once); raises ToolchainError naming what to install."""
    global _toolchain, _toolchain_error
    with _tc_lock:
        if _toolchain is None and _toolchain_error is None:
            try:
                _toolchain = Toolchain()
            except (ToolchainError, OSError, subprocess.SubprocessError) as exc:
                _toolchain_error = exc if isinstance(exc, ToolchainError) else ToolchainError(
                    f"hiprtc: cannot run the compiler ({exc}); " + INSTALL_HINT)
        if _toolchain is None:
            raise _toolchain_error
        return _toolchain


def link_toolchains() -> list[Toolchain]:
    """The toolchain, then any other installed clang with the AMDGPU target (newest first): the link step
    falls back to them for inputs the first one cannot read (LLVM IR written by a newer LLVM, as hip-python's
    examples do).  Raises ToolchainError like toolchain()."""
    global _alternates
    first = toolchain()
    with _tc_lock:
        if _alternates is None:
            _alternates = []
            seen = {os.path.realpath(first.clang)}
            for c in CLANGS:
                path = shutil.which(c)
                if not path or os.path.realpath(path) in seen:
                    continue
                seen.add(os.path.realpath(path))
                try:
                    out = subprocess.run([path, "-print-targets"], capture_output=True, text=True, timeout=60).stdout
                    if "amdgcn" in out:
                        _alternates.append(Toolchain(path))
                except (ToolchainError, OSError, subprocess.SubprocessError):
                    continue
        return [first] + _alternates


# -- cache ---------------------------------------------------------------------------------------------------
_memo: dict[str, dict] = {}
_memo_lock = threading.Lock()


def _cache_dir() -> Path | None:
    if os.environ.get("PYHIP_HIPRTC_CACHE", "1") == "0":
        return None
    return Path(os.environ.get("PYHIP_CACHE", Path.home() / ".cache" / "pyhip")) / "hiprtc"


def _store(d: Path, key: str, files: dict) -> None:
    """Write a finished entry atomically (a private directory renamed into place)."""
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=d))
    except OSError:
        return                                  # read-only cache: memory only
    try:
        for k, v in files.items():
            (tmp / k).write_bytes(v)
        (tmp / ".done").write_bytes(b"")
        os.replace(tmp, d / key)
    except OSError:                             # another process stored it first
        shutil.rmtree(tmp, ignore_errors=True)


def cached(key_parts: list[bytes], produce) -> dict:
    """``produce() -> {name: bytes}`` once per key (memory, then disk); failures are not cached."""
    h = hashlib.sha256()
    for p in key_parts:
        h.update(hashlib.sha256(p).digest())
    key = h.hexdigest()
    with _memo_lock:
        hit = _memo.get(key)
    if hit is not None:
        return hit
    d = _cache_dir()
    if d is not None and (d / key).is_dir() and (d / key / ".done").exists():
        hit = {p.name: p.read_bytes() for p in (d / key).iterdir() if p.name != ".done"}
    else:
        hit = produce()
        if hit.get("ok") == b"1" and d is not None:
            _store(d, key, hit)
    if hit.get("ok") == b"1":
        with _memo_lock:
            _memo[key] = hit
    return hit
