"""LLVM (through llvmlite, in-process: no C compiler at run time) from kernel IR to host machine code for this
CPU, and the functions of the native runtime the code calls."""
from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time

_lock = threading.RLock()
_state = {}
_depth = threading.local()


@contextlib.contextmanager
def llvm_section():
    """LLVM in use by this thread: one thread at a time, and never while the process runs its exit handlers
    (the native runtime's pyhip_llvm_enter / leave, once bound; re-entrant within a thread)."""
    with _lock:
        lib = _state.get("bound")
        d = getattr(_depth, "n", 0)
        if lib is not None and d == 0:
            lib.pyhip_llvm_enter()
        _depth.n = d + 1
        try:
            yield
        finally:
            _depth.n = d
            if lib is not None and d == 0:
                lib.pyhip_llvm_leave()


def llvm():
    """llvmlite.binding, initialised once, or raise ImportError."""
    import llvmlite.binding as binding
    if "init" not in _state:
        with _lock:
            if "init" not in _state:
                binding.initialize_native_target()
                binding.initialize_native_asmprinter()
                binding.initialize_native_asmparser()
                _state["init"] = True
    return binding


def _new_target_machine():
    b = llvm()
    target = b.Target.from_default_triple()
    return target.create_target_machine(cpu=b.get_host_cpu_name(), features=b.get_host_cpu_features().flatten(),
                                        opt=int(os.environ.get("PYHIP_JIT_CODEGEN_OPT", "1")), jit=True)


def target_machine():
    """The target machine modules are optimised and compiled with (shared; never handed to an execution
    engine, which takes ownership of the one it is given and destroys it with itself)."""
    tm = _state.get("tm")
    if tm is None:
        with _lock:
            tm = _state.get("tm")
            if tm is None:
                tm = _state["tm"] = _new_target_machine()
    return tm


def triple() -> str:
    return llvm().get_process_triple()


def bind_runtime(ffi, lib) -> None:
    """Make the native runtime's entry points (native/engine/engine.c) known to the JIT's linker."""
    if _state.get("bound") is lib:
        return
    b = llvm()
    with _lock:
        for name in ("pyhip_jit_step", "pyhip_jit_fault"):
            b.add_symbol(name, int(ffi.cast("uintptr_t", ffi.addressof(lib, name))))
        _state["bound"] = lib


class Compiled:
    """One compiled module: keeps the execution engine (and with it the code) alive."""

    __slots__ = ("engine", "address", "seconds", "ir_chars", "kir_stats", "object")

    def __init__(self, engine, address, seconds, ir_chars):
        self.engine, self.address, self.seconds, self.ir_chars = engine, address, seconds, ir_chars
        self.kir_stats = None
        self.object = None

    def __del__(self):
        ee, self.engine = self.engine, None
        if ee is not None:
            try:
                with llvm_section():          # disposing it is LLVM work too
                    ee.close()
            except Exception:  # noqa: BLE001 - interpreter shutdown: the process is going anyway
                pass


def compile_ir(ir: str, name: str, opt: int | None = None, keep_object: bool = False) -> Compiled:
    """Compile ``ir``; with ``keep_object`` the object file is kept in ``.object`` (for the disk cache).

    Every LLVM object made here is created and destroyed inside one llvm_section (llvmlite frees its objects
    when Python collects them, which can be on any thread at any time: a module freed while another thread
    compiles corrupts LLVM's state).  The module lives in its own context, freed here."""
    b = llvm()
    t0 = time.perf_counter()
    if opt is None:
        # the IR pipeline's level: O1 gave as fast code as O2 (callgrind, host instructions per launch: Triton
        # softmax gfx90a 459 M vs 510 M, gfx1100 351 M vs 355 M, add equal) in less than half the time
        opt = int(os.environ.get("PYHIP_JIT_OPT", "1"))
    dump = os.environ.get("PYHIP_JIT_DUMP")
    if dump:                          # a directory: every module compiled, as LLVM IR text (debugging)
        from pathlib import Path
        Path(dump).mkdir(parents=True, exist_ok=True)
        (Path(dump) / f"{hashlib.sha1(ir.encode()).hexdigest()[:16]}.ll").write_text(ir)
    with llvm_section():
        tm = target_machine()
        ctx = b.create_context()
        try:
            mod = b.parse_assembly(ir, context=ctx)
            try:
                mod.verify()
                if opt:
                    pto = b.create_pipeline_tuning_options(speed_level=opt)
                    pb = b.create_pass_builder(tm, pto)
                    mpm = pb.getModulePassManager()
                    mpm.run(mod, pb)
                    for x in (mpm, pb, pto):
                        x.close()
                obj = tm.emit_object(mod)
            finally:
                mod.close()
        finally:
            ctx.close()
        comp = _from_object(obj, name)
    if dump:
        (Path(dump) / f"{hashlib.sha1(ir.encode()).hexdigest()[:16]}.o").write_bytes(obj)
    comp.seconds = time.perf_counter() - t0
    comp.ir_chars = len(ir)
    comp.object = obj if keep_object else None
    return comp


def _from_object(data: bytes, name: str) -> Compiled:
    """An execution engine holding the object file ``data`` (inside an llvm_section)."""
    b = llvm()
    empty = b.parse_assembly("")
    ee = b.create_mcjit_compiler(empty, _new_target_machine())
    of = b.ObjectFileRef.from_data(data)
    text = sum(s.size() for s in of.sections() if s.is_text())
    ee.add_object_file(of)
    of.close()
    ee.finalize_object()
    addr = ee.get_function_address(name)
    if not addr:
        ee.close()
        raise ValueError(f"no {name} in the compiled object")
    if os.environ.get("PYHIP_JIT_PERFMAP"):   # profiling: `perf report` names the compiled code
        with open(f"/tmp/perf-{os.getpid()}.map", "a") as f:
            f.write(f"{addr:x} {text:x} pyhip_jit_{name}_{hashlib.sha1(data).hexdigest()[:8]}\n")
    return Compiled(ee, addr, 0.0, 0)


def load_object(data: bytes, name: str) -> Compiled:
    """A compiled kernel from its object file (the disk cache)."""
    t0 = time.perf_counter()
    with llvm_section():
        comp = _from_object(data, name)
    comp.seconds = time.perf_counter() - t0
    return comp
