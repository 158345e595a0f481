"""hiprtc programs and link states (shared by ``pyhip.hiprtc`` and the C ABI's ``libhiprtc.so.5``).

A program compiles HIP source with its headers and options (toolchain.py); name expressions are resolved to
lowered (mangled) names as AMD's hiprtc does: ``extern "C" constexpr auto __hiprtc_N = <expr>;`` is appended
to the source, and each code-object symbol whose demangled name (return type and parameters dropped, spaces
removed) equals a stripped expression is that expression's lowered name.  A link state links LLVM bitcode /
IR (plain, bundled, or archives of bundles) into a code object.
"""
from __future__ import annotations

import ctypes
import io
import itertools
import tempfile
import threading
from pathlib import Path

import cxxfilt
from elftools.elf.elffile import ELFFile

from ..hip.pointers import address_of
from ._enums import hiprtcJITInputType as IT
from ._enums import hiprtcResult as R
from .toolchain import ToolchainError, cached, link_toolchains, toolchain

BC_MAGIC = b"BC\xc0\xde"


class RtcError(Exception):
    """A hiprtc failure: ``code`` is the hiprtcResult."""

    def __init__(self, code: R, message: str = ""):
        super().__init__(message or code.name)
        self.code = code


# -- handles (what C sees as hiprtcProgram / hiprtcLinkState) --------------------------------------------------
_handles: dict[int, object] = {}
_handles_lock = threading.Lock()


class Handle:
    """An object with a stable address-like handle (a small C allocation it owns)."""

    def __init__(self):
        self._cell = ctypes.create_string_buffer(8)
        self.handle = ctypes.addressof(self._cell)
        with _handles_lock:
            _handles[self.handle] = self

    def destroy(self) -> None:
        with _handles_lock:
            _handles.pop(self.handle, None)

    # hip-python's pointer surface (the handle is what C sees)
    def __int__(self) -> int:
        return self.handle

    __hip_pointer__ = __int__

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.handle)

    def createRef(self):
        """A ``hiprtcProgram*`` / ``hiprtcLinkState*``: what hiprtcDestroyProgram takes."""
        from ..hip.pointers import Pointer

        return Pointer(self.handle).createRef()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object, ptr: {self.handle}>"


def lookup(handle: int, kind: type):
    with _handles_lock:
        obj = _handles.get(int(handle))
    if not isinstance(obj, kind):
        raise RtcError(_invalid(kind), f"0x{int(handle):x} is not a live {kind.__name__}")
    return obj


def _invalid(kind: type):
    return R.HIPRTC_ERROR_INVALID_PROGRAM if kind is Program else R.HIPRTC_ERROR_INVALID_INPUT


def resolve(arg, kind: type, what: str):
    """The live ``kind`` object an API argument names: the object itself or its handle (an address)."""
    if isinstance(arg, kind):
        return lookup(arg.handle, kind)
    if arg is None:
        raise RtcError(_invalid(kind), f"{what} is NULL")
    return lookup(address_of(arg), kind)


def current_arch() -> str:
    """The target ID of the current device (AMD's hiprtc asks hipGetDeviceProperties for gcnArchName)."""
    from ..runtime.context import runtime

    return str(runtime().device().isa)


def _option_arch(options: list[str]) -> tuple[list[str], str | None, bool]:
    """AMD's transformOptions: ``--gpu-architecture=`` becomes ``--offload-arch=``, ``-hip-pch`` and
    ``--save-temps`` are dropped; returns (options without the arch, arch or None, rdc)."""
    out, arch, rdc = [], None, False
    for o in options:
        if o == "-hip-pch" or o == "--save-temps":
            continue
        if o.startswith("--gpu-architecture="):
            o = "--offload-arch=" + o.split("=", 1)[1]
        if o.startswith("--offload-arch="):
            arch = o.split("=", 1)[1]
            continue
        if o == "-fgpu-rdc":
            rdc = True
            continue
        out.append(o)
    return out, arch, rdc


def strip_name_expression(name: str) -> str:
    """``&ns::k<float>`` / ``(k<int>)`` -> ``ns::k<float>`` / ``k<int>`` (no spaces)."""
    s = name.strip()
    while s.startswith("(") and s.endswith(")"):
        s = s[1:-1].strip()
    if s.startswith("&"):
        s = s[1:]
    return "".join(s.split())


def demangled_key(symbol: str) -> str:
    """AMD's handleMangledName: the demangled name without return type and parameter list, no spaces."""
    try:
        d = cxxfilt.demangle(symbol)
    except cxxfilt.InvalidName:
        d = symbol
    if ".kd" in d:
        return ""
    if d.startswith("void "):
        d = d[5:]
    i = next((k for k, c in enumerate(d) if c in "(<"), None)
    if i is not None:
        if d[i] == "<":
            depth = 0
            for j in range(i, len(d)):
                depth += {"<": 1, ">": -1}.get(d[j], 0)
                if depth == 0:
                    d = d[:j + 1]
                    break
        else:
            d = d[:i]
    return "".join(d.split())


def elf_symbols(image: bytes) -> list[str]:
    elf = ELFFile(io.BytesIO(image))
    names = []
    for sec in elf.iter_sections():
        if sec.header.sh_type in ("SHT_SYMTAB", "SHT_DYNSYM"):
            names += [s.name for s in sec.iter_symbols() if s.name]
    return names


class Program(Handle):
    """``hiprtcProgram``."""

    _anon = itertools.count()

    def __init__(self, source: str, name: str, headers: list[tuple[str, bytes]]):
        super().__init__()
        if not source:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "empty source")
        self.source = source
        self.name = name or f"CompileSource{next(self._anon):06d}"
        self.headers = headers
        self.expressions: dict[str, str] = {}         # expression -> stripped
        self.lowered: dict[str, str] = {}             # stripped -> mangled
        self.code = b""
        self.bitcode = b""
        self.log = ""
        self.compiled = False
        self.rdc = False
        self.lock = threading.Lock()

    def add_name_expression(self, expr: str) -> None:
        if not expr:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "empty name expression")
        with self.lock:
            if self.compiled:
                raise RtcError(R.HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION,
                               "name expressions must be added before compilation")
            self.expressions.setdefault(expr, strip_name_expression(expr))

    def full_source(self) -> str:
        extra = "".join(f'\nextern "C" constexpr auto __hiprtc_{i + 1} = {e};\n'
                        for i, e in enumerate(self.expressions))
        return self.source + extra

    def compile(self, options: list[str]) -> None:
        with self.lock:
            opts, arch, rdc = _option_arch(options)
            try:
                tc = toolchain()
            except ToolchainError as exc:
                self.log = str(exc) + "\n"
                raise RtcError(R.HIPRTC_ERROR_COMPILATION, str(exc)) from None
            arch = arch or current_arch()
            src = self.full_source()
            fname = "".join(c if c.isalnum() or c in "._-" else "_" for c in Path(self.name).name) or "program"
            if not fname.endswith((".hip", ".cpp", ".cu", ".cc")):
                fname += ".hip"

            def produce() -> dict:
                with tempfile.TemporaryDirectory(prefix="pyhip-hiprtc-") as tmp:
                    Path(tmp, "hiprtc_runtime.h").write_bytes(tc.header)
                    for hname, hdata in self.headers:
                        p = Path(tmp, "include", hname)
                        p.parent.mkdir(parents=True, exist_ok=True)
                        p.write_bytes(hdata)
                    Path(tmp, fname).write_text(src)
                    out = "out.bc" if rdc else "out.co"
                    args = tc.compile_args(["-I", tmp, "-I", str(Path(tmp, "include"))] + opts, arch, rdc)
                    ok, log = tc.run(args + [fname, "-o", out], tmp)
                    data = Path(tmp, out).read_bytes() if ok and Path(tmp, out).exists() else b""
                    return {"ok": b"1" if ok and data else b"0", "out": data, "log": log.replace(tmp, ".").encode()}

            res = cached([tc.fingerprint.encode(), src.encode(), repr(self.headers).encode(), repr(opts).encode(),
                          arch.encode(), b"rdc" if rdc else b"exe"], produce)
            self.log = res["log"].decode(errors="replace")
            if res["ok"] != b"1":
                raise RtcError(R.HIPRTC_ERROR_COMPILATION, self.log)
            self.rdc = rdc
            self.compiled = True
            if rdc:
                self.bitcode, self.code = res["out"], b""
                return
            self.code = res["out"]
            wanted = set(self.expressions.values())
            for sym in elf_symbols(self.code):
                key = demangled_key(sym)
                if key in wanted:
                    self.lowered[key] = sym

    def lowered_name(self, expr: str) -> str:
        with self.lock:
            if not self.compiled:
                raise RtcError(R.HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, "compile the program first")
            name = self.lowered.get(strip_name_expression(expr))
            if name is None:
                raise RtcError(R.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID, f"{expr!r} was not added, or names nothing")
            return name

    def get_bitcode(self) -> bytes:
        if not self.rdc or not self.bitcode:
            raise RtcError(R.HIPRTC_ERROR_INVALID_PROGRAM, "bitcode exists only after compiling with -fgpu-rdc")
        return self.bitcode


# -- linking ---------------------------------------------------------------------------------------------------
def _unbundle(data: bytes, arch: str) -> bytes:
    """The entry of a (bitcode) offload bundle that suits ``arch``; plain data passes through."""
    from ..errors import LoaderError
    from ..loader.bundle import BUNDLE_MAGIC, parse_bundle
    from ..loader.targetid import DeviceISA, TargetID, select

    if not data.startswith(BUNDLE_MAGIC):
        return data
    try:
        entries = [e for e in parse_bundle(data)[0] if e.kind in ("hip", "hipv4")]
        best = select(entries, DeviceISA.parse(arch), key=lambda e: TargetID.parse(e.entry_id))
    except LoaderError as exc:
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"bundled bitcode: {exc}") from None
    return data[best.offset:best.offset + best.size]


def _archive_members(data: bytes) -> list[bytes]:
    """Members of an ``ar`` archive (System V / GNU)."""
    if not data.startswith(b"!<arch>\n"):
        raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "not an ar archive")
    pos, out = 8, []
    while pos + 60 <= len(data):
        head = data[pos:pos + 60]
        name = head[:16].decode(errors="replace").strip()
        size = int(head[48:58].decode().strip() or 0)
        body = data[pos + 60:pos + 60 + size]
        if name not in ("/", "//", "/SYM64/", "__.SYMDEF"):
            if name.startswith("#1/"):                 # BSD long names: the name precedes the data
                n = int(name[3:])
                body = body[n:]
            out.append(body)
        pos += 60 + size + (size & 1)
    return out


class LinkState(Handle):
    """``hiprtcLinkState``: inputs (name, LLVM bitcode or IR) linked into a code object."""

    def __init__(self, options: dict | None = None):
        super().__init__()
        self.options = options or {}
        self.inputs: list[tuple[str, bytes]] = []
        self.log = ""
        self.code = b""
        self.lock = threading.Lock()
        self._keep = None

    def add(self, kind: int, data: bytes, name: str) -> None:
        try:
            kind = IT(int(kind))
        except ValueError:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"unknown input type {kind}") from None
        if kind not in (IT.HIPRTC_JIT_INPUT_LLVM_BITCODE, IT.HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE,
                        IT.HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE):
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, f"{kind.name}: only LLVM bitcode inputs can be linked")
        if not data:
            raise RtcError(R.HIPRTC_ERROR_INVALID_INPUT, "empty input")
        with self.lock:
            if kind == IT.HIPRTC_JIT_INPUT_LLVM_BITCODE:
                self.inputs.append((name, data))
            elif kind == IT.HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE:
                self.inputs.append((name, _unbundle(data, current_arch())))
            else:
                for i, member in enumerate(_archive_members(data)):
                    self.inputs.append((f"{name}.{i}", _unbundle(member, current_arch())))

    def complete(self) -> bytes:
        with self.lock:
            if not self.inputs:
                raise RtcError(R.HIPRTC_ERROR_LINKING, "nothing to link")
            try:
                chains = link_toolchains()
            except ToolchainError as exc:
                self.log = str(exc) + "\n"
                raise RtcError(R.HIPRTC_ERROR_LINKING, str(exc)) from None
            arch = current_arch()
            inputs = list(self.inputs)

            def link_with(tc, tmp: str) -> tuple[bool, str]:
                files = []
                for i, (_, data) in enumerate(inputs):
                    f = Path(tmp, f"in{i}" + (".bc" if data.startswith(BC_MAGIC) else ".ll"))
                    f.write_bytes(data)
                    files.append(f.name)
                log = ""
                cov = tc.code_object_version(arch)
                steps = [[tc.llvm_link, *files, "-o", "user.bc"],
                         [tc.llvm_link, "user.bc", "--only-needed", *tc.link_libs(arch), "-o", "full.bc"],
                         [tc.clang, "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}", "-O3", "-nogpulib", "-x", "ir",
                          *([f"-mcode-object-version={cov}"] if cov else []), "full.bc", "-o", "out.co"]]
                for args in steps:
                    ok, out = tc.run(args, tmp)
                    log += out
                    if not ok:
                        return False, log
                return True, log

            def produce() -> dict:
                logs = ""
                for tc in chains:            # a newer LLVM reads what an older one cannot
                    with tempfile.TemporaryDirectory(prefix="pyhip-hiprtc-link-") as tmp:
                        ok, log = link_with(tc, tmp)
                        logs += log.replace(tmp, ".")
                        if ok:
                            return {"ok": b"1", "out": Path(tmp, "out.co").read_bytes(), "log": log.replace(tmp, ".").encode()}
                return {"ok": b"0", "out": b"", "log": logs.encode()}

            res = cached([c.fingerprint.encode() for c in chains] + [b"link", arch.encode()]
                         + [f"cov{c.code_object_version(arch)}".encode() for c in chains] + [d for _, d in inputs],
                         produce)
            self.log = res["log"].decode(errors="replace")
            if res["ok"] != b"1":
                raise RtcError(R.HIPRTC_ERROR_LINKING, self.log)
            self.code = res["out"]
            return self.code
