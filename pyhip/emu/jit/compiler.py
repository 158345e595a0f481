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
    (the native runtime's pyhip_llvm_enter / leave, once bound; re-entrant within a thread).  The native lock
    is taken first: a thread that comes in once the process's exit has begun sleeps there until the end,
    holding nothing the exiting thread could need; the exiting thread itself is refused (RuntimeError)."""
    lib = _state.get("bound")
    d = getattr(_depth, "n", 0)
    native = lib is not None and d == 0
    if native and not lib.pyhip_llvm_enter():
        raise RuntimeError("pyhip: LLVM is not available while the process exits")
    try:
        with _lock:
            _depth.n = d + 1
            try:
                yield
            finally:
                _depth.n = d
    finally:
        if native:
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
                _add_symbols(binding)
    return binding


def _add_symbols(binding) -> None:
    """(under _lock) The native runtime's entry points made known to MCJIT's linker (once LLVM is set up)."""
    for name, addr in _state.get("symbols", {}).items():
        binding.add_symbol(name, addr)


def host_cpu() -> tuple[str, str]:
    """(name, features) of this CPU as LLVM sees it (asked once: the features query costs ~0.3 ms)."""
    cpu = _state.get("cpu")
    if cpu is None:
        import llvmlite.binding as b          # (no target set up needed: a cached kernel's key asks this)
        cpu = _state["cpu"] = (b.get_host_cpu_name(), b.get_host_cpu_features().flatten())
    return cpu


def _codegen_level(codegen: int | None = None) -> int:
    return int(os.environ.get("PYHIP_JIT_CODEGEN_OPT", "1")) if codegen is None else codegen


# The small code model, position-independent: constants and jump tables are reached RIP-relative (one load, where
# the JIT's default large model materialised every constant's 64-bit address with a movabs first: ~9% of the
# samples in Triton softmax's optimised code), calls to the runtime and the C library are PLT32 (a stub where the
# callee is out of a rel32's reach).  Both loaders keep an object's sections within ±2 GiB of each other:
# elfload maps them as one block; MCJIT (only for what elfload refuses, which kernels never contain) places each
# section near the previous one (LLVM's SectionMemoryManager; llvmlite's own memory manager, which reserves one
# block, asserts on objects with a jump table and a call on x86-64).
CODE_MODEL, RELOC_MODEL = "small", "pic"


def _new_target_machine(codegen: int | None = None):
    name, features = host_cpu()
    target = llvm().Target.from_default_triple()
    return target.create_target_machine(cpu=name, features=features, opt=_codegen_level(codegen), jit=True,
                                        reloc=RELOC_MODEL, codemodel=CODE_MODEL)


def target_machine(codegen: int | None = None):
    """The target machine modules are optimised and compiled with, at LLVM's code generation level ``codegen``
    (default: PYHIP_JIT_CODEGEN_OPT, 1); shared, and never handed to an execution engine, which takes
    ownership of the one it is given and destroys it with itself."""
    key = f"tm{_codegen_level(codegen)}"
    tm = _state.get(key)
    if tm is None:
        with _lock:
            tm = _state.get(key)
            if tm is None:
                tm = _state[key] = _new_target_machine(codegen)
    return tm


def triple() -> str:
    import llvmlite.binding as b              # (no target set up needed)
    return b.get_process_triple()


def bind_runtime(ffi, lib) -> None:
    """Make the native runtime's entry points (native/engine/engine.c) known to the JIT's linker."""
    if _state.get("bound") is lib:
        return
    symbols = {name: int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))
               for name in ("pyhip_jit_step", "pyhip_jit_fault", "pyhip_jit_xlate")}
    with _lock:
        _state["symbols"] = symbols
        if "init" in _state:          # else llvm() adds them when it sets LLVM up (a cached kernel needs no LLVM)
            _add_symbols(llvm())
        _state["bound"] = lib


class Compiled:
    """One compiled module: keeps the execution engine or elfload's mapping (and with it the code) alive."""

    __slots__ = ("engine", "address", "seconds", "ir_chars", "kir_stats", "object", "functions")

    def __init__(self, engine, address, seconds, ir_chars):
        self.engine, self.address, self.seconds, self.ir_chars = engine, address, seconds, ir_chars
        self.kir_stats = None
        self.object = None
        self.functions = None            # elfload's: name -> address of every function in the object

    def function_address(self, name: str) -> int:
        """The address of another function of the same object (0 when it has none of that name)."""
        if self.functions is not None:
            return self.functions.get(name, 0)
        with llvm_section():
            return self.engine.get_function_address(name)

    def __del__(self):
        ee, self.engine = self.engine, None
        if ee is not None:
            try:
                with llvm_section():          # disposing it is LLVM work too
                    ee.close()
            except Exception:  # noqa: BLE001 - interpreter shutdown: the process is going anyway
                pass


# A module that takes LLVM through what kernels use (vector integer and float arithmetic of several widths,
# masks, shuffles, conversions, the intrinsics, loops, switches, an MCJIT load).  LLVM registers the
# destructors of its function-local statics when it first uses them, during a compile; a process that exits
# while a compile runs calls the ones registered since the last section first, under the compiling thread
# (an assertion in SelectionDAG in a C ABI program exiting with work queued).  Running this once, in a section
# of its own before the first real compile, registers them before the exit handler is registered again.
_WARMUP = """
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
declare <64 x float> @llvm.minnum.v64f32(<64 x float>, <64 x float>)
declare <8 x double> @llvm.rint.v8f64(<8 x double>)
declare i1 @llvm.vector.reduce.or.v8i1(<8 x i1>)
declare i64 @llvm.cttz.i64(i64, i1)
declare <8 x i32> @llvm.ctpop.v8i32(<8 x i32>)
define i32 @warm(ptr noalias %p, i32 %n, i64 %m) {
entry:
  switch i32 %n, label %loop [ i32 1, label %wide  i32 2, label %done ]
loop:
  %k = phi i32 [0, %entry], [%k2, %loop]
  %off = zext i32 %k to i64
  %q = getelementptr inbounds i32, ptr %p, i64 %off
  %v = load <8 x i32>, ptr %q, align 4
  %f = bitcast <8 x i32> %v to <8 x float>
  %g = call <8 x float> @llvm.fma.v8f32(<8 x float> %f, <8 x float> %f, <8 x float> splat (float 1.0))
  %d = fpext <8 x float> %g to <8 x double>
  %r = call <8 x double> @llvm.rint.v8f64(<8 x double> %d)
  %t = fptrunc <8 x double> %r to <8 x float>
  %u = fcmp uno <8 x float> %t, %t
  %any = call i1 @llvm.vector.reduce.or.v8i1(<8 x i1> %u)
  %bits = trunc i64 %m to i32
  %ins = insertelement <8 x i32> poison, i32 %bits, i64 0
  %spl = shufflevector <8 x i32> %ins, <8 x i32> poison, <8 x i32> zeroinitializer
  %and = and <8 x i32> %spl, <i32 1, i32 2, i32 4, i32 8, i32 16, i32 32, i32 64, i32 128>
  %lanes = icmp ne <8 x i32> %and, zeroinitializer
  %tb = bitcast <8 x float> %t to <8 x i32>
  %w64 = zext <8 x i32> %tb to <8 x i64>
  %sh = shl <8 x i64> %w64, splat (i64 3)
  %lo = trunc <8 x i64> %sh to <8 x i32>
  %pc = call <8 x i32> @llvm.ctpop.v8i32(<8 x i32> %lo)
  %sel = select <8 x i1> %lanes, <8 x i32> %pc, <8 x i32> %v
  %sel2 = select i1 %any, <8 x i32> %v, <8 x i32> %sel
  store <8 x i32> %sel2, ptr %q, align 4
  %mk = bitcast <8 x i1> %u to i8
  %mz = zext i8 %mk to i32
  %k2 = add i32 %k, %mz
  %more = icmp ult i32 %k2, 8
  br i1 %more, label %loop, label %done
wide:
  %a = load <64 x float>, ptr %p, align 4
  %b = call <64 x float> @llvm.minnum.v64f32(<64 x float> %a, <64 x float> %a)
  %rev = shufflevector <64 x float> %b, <64 x float> zeroinitializer, <64 x i32> <i32 63, i32 62, i32 61, i32 60, i32 59, i32 58, i32 57, i32 56, i32 55, i32 54, i32 53, i32 52, i32 51, i32 50, i32 49, i32 48, i32 47, i32 46, i32 45, i32 44, i32 43, i32 42, i32 41, i32 40, i32 39, i32 38, i32 37, i32 36, i32 35, i32 34, i32 33, i32 32, i32 31, i32 30, i32 29, i32 28, i32 27, i32 26, i32 25, i32 24, i32 23, i32 22, i32 21, i32 20, i32 19, i32 18, i32 17, i32 16, i32 15, i32 14, i32 13, i32 12, i32 11, i32 10, i32 9, i32 8, i32 7, i32 6, i32 5, i32 4, i32 3, i32 2, i32 1, i32 0>
  store <64 x float> %rev, ptr %p, align 4
  %tz = call i64 @llvm.cttz.i64(i64 %m, i1 false)
  %tz32 = trunc i64 %tz to i32
  ret i32 %tz32
done:
  ret i32 0
}
"""


def _opt_level():
    # the IR pipeline: O1 gave as fast code as O2 (callgrind, host instructions per launch: Triton softmax
    # gfx90a 459 M vs 510 M, gfx1100 351 M vs 355 M, add equal) in less than half the time; "fast": the
    # function passes in FAST_PASSES only
    v = os.environ.get("PYHIP_JIT_OPT", "1")
    return v if v == "fast" else int(v)


FAST_PASSES = ("sroa", "instruction_combine", "simplify_cfg", "new_gvn", "dead_code_elimination")


def _object(ir: str, opt: int, codegen: int | None = None) -> bytes:
    """IR text → object file (inside an llvm_section; the module lives in its own context, freed here):
    ``opt`` the IR passes (an O level, "fast": FAST_PASSES, 0: none), ``codegen`` LLVM's code generation level."""
    b = llvm()
    tm = target_machine(codegen)
    ctx = b.create_context()
    try:
        mod = b.parse_assembly(ir, context=ctx)
        try:
            mod.verify()
            if opt == "fast":
                pto = b.create_pipeline_tuning_options(speed_level=1)
                pb = b.create_pass_builder(tm, pto)
                fpm = b.create_new_function_pass_manager()
                for name in FAST_PASSES:
                    adder = getattr(fpm, f"add_{name}_pass", None)
                    if adder is not None:
                        adder()
                for f in mod.functions:
                    if not f.is_declaration:
                        fpm.run(f, pb)
                for x in (fpm, pb, pto):
                    x.close()
            elif opt:
                pto = b.create_pipeline_tuning_options(speed_level=opt)
                pb = b.create_pass_builder(tm, pto)
                mpm = pb.getModulePassManager()
                mpm.run(mod, pb)
                for x in (mpm, pb, pto):
                    x.close()
            return tm.emit_object(mod)
        finally:
            mod.close()
    finally:
        ctx.close()


def _warm_up(quick: bool) -> None:
    """Compile and load _WARMUP once per process and way of compiling (``quick``: no IR passes, the fast code
    generation — the quick tier's; else the optimising pipeline), in its own llvm_section (see above)."""
    key = "warm-quick" if quick else "warm"
    if _state.get(key):
        return
    with llvm_section():
        if _state.get(key):
            return
        _state[key] = True
        comp = _mcjit(_object(_WARMUP, 0, codegen=0) if quick else _object(_WARMUP, 1), "warm")
        ee, comp.engine = comp.engine, None
        ee.close()


def warm_up_once(quick: bool) -> bool:
    """Claim the warm-up of a way of compiling for the caller to run (warm_up_now), once per process: False
    when it has run or was claimed (a compile is coming: a background thread warming LLVM up meanwhile
    overlaps the ~10 ms with the Python that makes the kernel's IR)."""
    key = "warm-quick-claimed" if quick else "warm-claimed"
    with _lock:
        if _state.get(key) or _state.get("warm-quick" if quick else "warm"):
            return False
        _state[key] = True
        return True


def warm_up_now(quick: bool) -> None:
    """_warm_up in an LLVM section (the process's exit waits for it); what fails is left to the compile that
    follows, which warms up itself and reports it."""
    try:
        with llvm_section():
            llvm()
            _warm_up(quick)
    except Exception:  # noqa: BLE001
        pass


def prepare(quick: bool) -> None:
    """Everything a compile of this way sets up in LLVM once per process (the warm-up, the shared execution
    engine), now, on the calling thread (jit.KernelCache.compile_soon: before a compile goes to the background)."""
    if _state.get("warm-quick" if quick else "warm") and _state.get("shared") is not None:
        return
    with llvm_section():
        llvm()
        _warm_up(quick)
        _shared_engine()


def _shared_engine():
    """The process's one execution engine for cached and shared code (inside an llvm_section)."""
    ee = _state.get("shared")
    if ee is None:
        b = llvm()
        tm = _new_target_machine()
        mod = b.parse_assembly("")
        mod.triple, mod.data_layout = triple(), str(tm.target_data)    # (MCJIT asserts they are its own)
        ee = b.create_mcjit_compiler(mod, tm)
        ee.finalize_object()        # MCJIT's first finalisation (~2.5 ms) here, not in a kernel's load
        _state["shared"] = ee
    return ee


def compile_ir(ir: str, name: str, opt: int | None = None, keep_object: bool = False,
               shared: bool = False, codegen: int | None = None) -> Compiled:
    """Compile ``ir``; with ``keep_object`` the object file is kept in ``.object`` (for the disk cache); with
    ``shared`` the code goes into the process's shared engine (see load_object: ``name`` must then be unique
    to this code).

    Every LLVM object made here is created and destroyed inside one llvm_section (llvmlite frees its objects
    when Python collects them, which can be on any thread at any time: a module freed while another thread
    compiles corrupts LLVM's state)."""
    llvm()
    _warm_up(quick=opt == 0 and codegen == 0)
    t0 = time.perf_counter()
    dump = os.environ.get("PYHIP_JIT_DUMP")
    if dump:                          # a directory: every module compiled, as LLVM IR text and object (debugging)
        from pathlib import Path
        stem = Path(dump) / hashlib.blake2b(ir.encode(), digest_size=8).hexdigest()
        stem.parent.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".ll").write_text(ir)
    with llvm_section():
        obj = _object(ir, _opt_level() if opt is None else opt, codegen)
        comp = _shared_object(obj, name) if shared else _own_object(obj, name)
    if dump:
        stem.with_suffix(".o").write_bytes(obj)
    comp.seconds = time.perf_counter() - t0
    comp.ir_chars = len(ir)
    comp.object = obj if keep_object else None
    return comp


def _mcjit(data: bytes, name: str, ee=None) -> Compiled:
    """An execution engine holding the object file ``data`` (inside an llvm_section); with ``ee``, the object
    is added to that engine instead (the Compiled then owns no engine)."""
    b = llvm()
    own = ee is None
    if own:
        empty = b.parse_assembly("")
        ee = b.create_mcjit_compiler(empty, _new_target_machine())
    of = b.ObjectFileRef.from_data(data)
    text = sum(s.size() for s in of.sections() if s.is_text())
    ee.add_object_file(of)
    of.close()
    ee.finalize_object()
    addr = ee.get_function_address(name)
    if not addr:
        if own:
            ee.close()
        raise ValueError(f"no {name} in the compiled object")
    _perf_map(addr, text, name, data)
    return Compiled(ee if own else None, addr, 0.0, 0)


def _own_object(data: bytes, name: str) -> Compiled:
    """``data`` loaded as code of its own, freed with the Compiled: by elfload when it can (its mapping), else
    in an execution engine of its own (inside an llvm_section)."""
    from . import elfload
    owner: list = []
    functions: dict = {}
    got = None
    if os.environ.get("PYHIP_JIT_ELFLOAD", "1") != "0":
        got = elfload.load(data, name, _state.get("symbols", {}), owner, functions)
    if got is None:
        return _mcjit(data, name)
    _perf_map(got[0], got[1], name, data)
    comp = Compiled(owner[0], got[0], 0.0, 0)
    comp.functions = functions
    return comp


def _perf_map(addr: int, size: int, name: str, data: bytes) -> None:
    """Profiling (PYHIP_JIT_PERFMAP=1): `perf report` names the compiled code."""
    if os.environ.get("PYHIP_JIT_PERFMAP"):
        with open(f"/tmp/perf-{os.getpid()}.map", "a") as f:
            f.write(f"{addr:x} {size:x} pyhip_jit_{name}_{hashlib.blake2b(data, digest_size=4).hexdigest()}\n")


def _shared_object(data: bytes, name: str) -> Compiled:
    """``data`` with the process's shared code: loaded by elfload when it can (no LLVM), else into the one shared
    execution engine (inside an llvm_section).  Setting up an engine
    of its own costs a kernel ~2.5 ms (a target machine, MCJIT, its first finalisation); adding an object to
    a warm engine ~0.2 ms.  Code in the shared engine lives as long as the process: a kernel loaded again
    (the same ``name``, which names its code: the disk cache key) finds its code there instead of adding a
    copy, so what stays is bounded by the distinct kernels the process ran."""
    addr = _loaded_without_llvm(data, name)
    if addr is None:
        loaded = _state.setdefault("shared_names", {})
        addr = loaded[name] = _mcjit(data, name, _shared_engine()).address
    return Compiled(None, addr, 0.0, 0)


def _loaded_without_llvm(data: bytes, name: str) -> int | None:
    """``name``'s address once ``data`` is loaded, by elfload (no LLVM), or None when that loader cannot take it
    (the caller then adds it to the shared engine).  Code already loaded under ``name`` is found again."""
    from . import elfload
    with _lock:
        loaded = _state.setdefault("shared_names", {})
        addr = loaded.get(name)
        if addr is not None:
            return addr
        if b"\0" + name.encode() + b"\0" not in data:
            raise ValueError(f"no {name} in the compiled object")   # before the engine could see a stray symbol
        if os.environ.get("PYHIP_JIT_ELFLOAD", "1") == "0" or "symbols" not in _state:
            return None
        got = elfload.load(data, name, _state["symbols"])
        if got is None:
            return None
        addr = loaded[name] = got[0]
        _perf_map(addr, got[1], name, data)
        return addr


def load_object(data: bytes, name: str, shared: bool = False) -> Compiled:
    """A compiled kernel from its object file (the disk cache); ``shared``: with the process's shared code
    (loaded without LLVM when elfload can, else into the shared engine)."""
    t0 = time.perf_counter()
    addr = _loaded_without_llvm(data, name) if shared else None
    if addr is not None:
        comp = Compiled(None, addr, 0.0, 0)
    else:
        with llvm_section():
            comp = _shared_object(data, name) if shared else _own_object(data, name)
    comp.seconds = time.perf_counter() - t0
    return comp
