"""LLVM (through llvmlite, in-process: no C compiler at run time) from kernel IR to host machine code for this
CPU, and the functions of the native runtime the code calls."""
from __future__ import annotations

import threading
import time

_lock = threading.RLock()
_state = {}


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


def target_machine():
    tm = _state.get("tm")
    if tm is None:
        b = llvm()
        with _lock:
            tm = _state.get("tm")
            if tm is None:
                target = b.Target.from_default_triple()
                tm = target.create_target_machine(cpu=b.get_host_cpu_name(),
                                                  features=b.get_host_cpu_features().flatten(), opt=2, jit=True)
                _state["tm"] = tm
    return tm


def triple() -> str:
    return llvm().get_process_triple()


def bind_runtime(ffi, lib) -> None:
    """Make the native runtime's entry points (native/engine/engine.c) known to the JIT's linker."""
    if _state.get("bound") is lib:
        return
    b = llvm()
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


def compile_ir(ir: str, name: str, opt: int = 2, keep_object: bool = False) -> Compiled:
    """Compile ``ir``; with ``keep_object`` the object file is kept in ``.object`` (for the disk cache)."""
    b = llvm()
    t0 = time.perf_counter()
    tm = target_machine()
    mod = b.parse_assembly(ir)
    mod.verify()
    if opt:
        pto = b.create_pipeline_tuning_options(speed_level=opt)
        pb = b.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
    obj = tm.emit_object(mod) if keep_object else None
    with _lock:
        if obj is not None:
            ee = b.create_mcjit_compiler(b.parse_assembly(""), tm)
            ee.add_object_file(b.ObjectFileRef.from_data(obj))
        else:
            ee = b.create_mcjit_compiler(mod, tm)
        ee.finalize_object()
    addr = ee.get_function_address(name)
    c = Compiled(ee, addr, time.perf_counter() - t0, len(ir))
    c.object = obj
    return c


def load_object(data: bytes, name: str) -> Compiled:
    """A compiled kernel from its object file (the disk cache)."""
    b = llvm()
    t0 = time.perf_counter()
    with _lock:
        ee = b.create_mcjit_compiler(b.parse_assembly(""), target_machine())
        ee.add_object_file(b.ObjectFileRef.from_data(data))
        ee.finalize_object()
    addr = ee.get_function_address(name)
    if not addr:
        raise ValueError(f"no {name} in the cached object")
    return Compiled(ee, addr, time.perf_counter() - t0, 0)
