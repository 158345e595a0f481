"""The compiled engine: a kernel's code translated once into host machine code through LLVM (llvmlite), a
whole wave per operation as SIMD vectors, run by the native runtime's scheduler (native/engine) without the
GIL.  Instruction semantics come from the one description in pyhip/emu/spec (see docs/engine.md)."""
from __future__ import annotations

import atexit
import os
import threading
import warnings

from .kernel import KernelIR, Unsupported

# re-entrant: the before-fork hook may find it held by its own thread (the C ABI shim's pthread_atfork handler ran
# the hooks a second time for a fork from Python until native/hip/fork.c learnt to leave those to os.fork)
_lock = threading.RLock()


def _before_fork() -> None:
    """os.fork (and a C program's fork(), through the shim's atfork handler): wait for a compile in progress
    and hold the locks, so the child starts with none of them held by a thread it does not have."""
    from . import compiler
    _lock.acquire()
    compiler._lock.acquire()


def _after_fork_parent() -> None:
    from . import compiler
    compiler._lock.release()
    _lock.release()


def _after_fork_child() -> None:
    global _lock, _optimiser, _background, _generation
    from . import compiler
    _lock = threading.RLock()
    _optimiser = None               # its thread is not in the child (kernels it had queued stay tier 1)
    _background = None              # nor the quick compiler's: what it had queued is queued again (_generation)
    _generation += 1
    compiler._lock = threading.RLock()
    compiler._depth = threading.local()
    lib = compiler._state.get("bound")
    if lib is not None:
        lib.pyhip_llvm_after_fork()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)


def enabled() -> bool:
    return os.environ.get("PYHIP_JIT", "1") != "0"


def tiering() -> bool:
    """Tiers (PYHIP_JIT_TIERING=0: none, every kernel compiled optimised before its first dispatch):
    0. a kernel's small loop-free first dispatch runs on the numpy engine;
    1. the kernel is compiled quickly (QUICK_OPT: a few function passes) when it is dispatched again, or first
       when its first dispatch is not small;
    2. once its dispatches have run on tier-1 code for HOT_SECONDS (or as long as its quick compile took, if
       that is longer; PYHIP_JIT_HOT=seconds sets the threshold), the kernel is compiled optimised (O1) by a background thread, and its next dispatch
       takes that code.  The disk cache keeps both tiers; a later process starts from the best one there."""
    return os.environ.get("PYHIP_JIT_TIERING", "1") != "0"


def quick_only() -> bool:
    """PYHIP_JIT_TIERING=quick: every kernel is compiled quickly (tier 1) before its first dispatch and never
    optimised (no tier 0, no tier 2): the least time in LLVM, for short runs of many kernels."""
    return os.environ.get("PYHIP_JIT_TIERING") == "quick"


# a first dispatch whose static work estimate (waves x reachable instructions, loop-free code) is below this runs
# on the numpy engine: the numpy engine takes about a microsecond per wave-instruction
# in batches, a compile tens to hundreds of milliseconds
TIER0_WORK = 40_000
QUICK_OPT = 0          # compiler._object with no IR passes for tier 1 (LLVM's codegen at its own level; the "fast"
                        # pass list cost a third of the compile and changed the code's speed by a few per cent)
QUICK_CODEGEN = 0       # and LLVM's fast code generation (FastISel, the fast register allocator)
HOT_SECONDS = 0.05      # tier-1 run time after which a kernel is compiled optimised
SMALL_RUNS = 4          # dispatches after which a kernel that is not hot runs tier-1 code from the native agent,
SMALL_SECONDS = 0.002   # or at once if its dispatch took less than this (its time is the dispatch's overhead)


class _Warm:
    """A kernel running tier-1 code: its dispatches' time, and what the optimised compile needs (``ir``: a
    function making the kernel's IR)."""

    __slots__ = ("ir", "name", "ck", "runs", "seconds", "threshold", "queued")

    def __init__(self, ir, name, ck, compile_seconds):
        self.ir, self.name, self.ck = ir, name, ck
        self.runs, self.seconds, self.queued = 0, 0.0, False
        hot = os.environ.get("PYHIP_JIT_HOT")      # seconds; set, it replaces the rule
        self.threshold = float(hot) if hot else max(HOT_SECONDS, compile_seconds)


class _Optimiser:
    """A background thread compiling kernels (one at a time, oldest first): hot kernels optimised (tier 2), or
    small kernels' quick code while the numpy engine runs their dispatches (tier 1, ``name``)."""

    def __init__(self, name: str = "pyhip-jit-optimiser"):
        self.name = name
        self.cond = threading.Condition()
        self.jobs: list = []
        self.pending = 0                 # submitted and not yet finished
        self.thread = None
        self.closing = False

    def submit(self, job) -> None:
        with self.cond:
            if self.closing:
                return
            self.jobs.append(job)
            self.pending += 1
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self.thread.start()
            self.cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self.cond:
                while not self.jobs and not self.closing:
                    self.cond.wait()
                if self.closing:
                    self.pending -= len(self.jobs)
                    self.jobs.clear()
                    self.cond.notify_all()
                    return
                job = self.jobs.pop(0)
            try:
                job()
            finally:
                with self.cond:
                    self.pending -= 1
                    self.cond.notify_all()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every submitted job has run; False if ``timeout`` passed first."""
        with self.cond:
            return self.cond.wait_for(lambda: self.pending == 0, timeout)

    def close(self) -> None:
        """At exit: no new job starts; the running one ends first (LLVM must not be mid-compile at exit)."""
        with self.cond:
            self.closing = True
            self.cond.notify_all()
            thread = self.thread
        if thread is not None:
            thread.join(30)


_optimiser = None
_background = None
_generation = 0                 # forks: a kernel queued for the background compiler before is not queued in a child


def _the_optimiser() -> _Optimiser:
    global _optimiser
    if _optimiser is None:
        with _lock:
            if _optimiser is None:
                _optimiser = _Optimiser()
    return _optimiser


def _the_background() -> _Optimiser:
    """The thread compiling small kernels' quick code while their dispatches run on the numpy engine."""
    global _background
    if _background is None:
        with _lock:
            if _background is None:
                _background = _Optimiser("pyhip-jit-compiler")
    return _background


def settle(timeout: float | None = None) -> bool:
    """Wait until the kernels queued for compiling in the background (quick code of small kernels, optimised
    code of hot ones) are compiled (benchmarks measure steady state)."""
    import time
    end = None if timeout is None else time.monotonic() + timeout
    for q in (_background, _optimiser):
        if q is not None and not q.drain(None if end is None else max(0.0, end - time.monotonic())):
            return False
    return True


def _at_exit() -> None:
    for q in (_background, _optimiser):
        if q is not None:
            q.close()


atexit.register(_at_exit)


def available() -> bool:
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        return False
    return True


def _code_name(ck: str, quick: bool = False) -> str:
    """The compiled function's name for the disk cache key ``ck``: unique to its code (and tier), so that
    kernels share one execution engine (compiler.load_object)."""
    return f"pyhip_{'q' if quick else 'k'}{ck[:32]}"


def _quick_key(ck: str | None) -> str | None:
    return None if ck is None else ck + "-q"


class KernelCache:
    """Compiled kernels of one device: (program, accum_offset, lanes, entry, mode) → (program, Compiled, warm),
    ``warm`` a _Warm while the code is tier 1, None once it is final."""

    def __init__(self, ffi, lib):
        self.ffi, self.lib = ffi, lib
        self._done: dict = {}
        self._failed: dict = {}
        self._retired: list = []       # tier-1 code replaced by optimised code: dispatches may still run it
        self.layout = None
        self.stats = {"compiled": 0, "seconds": 0.0, "quick": 0, "optimised": 0}
        self._compiling: dict = {}     # key -> Event set when the thread compiling it is done
        self._queued: dict = {}        # key -> (nprog, _generation): queued for the background compiler

    def _layout(self):
        if self.layout is None:
            from .compiler import triple
            ffi = self.ffi
            self.layout = {"s": ffi.offsetof("Wave", "s"), "v": ffi.offsetof("Wave", "v"),
                           "scc": ffi.offsetof("Wave", "scc"), "mode": ffi.offsetof("Wave", "mode"),
                           "ip": ffi.offsetof("Wave", "ip"), "count": ffi.offsetof("Wave", "count"),
                           "mm_pending": ffi.offsetof("Wave", "mm_pending"),
                           "g": ffi.offsetof("Wave", "g"), "g_lds": ffi.offsetof("Group", "lds"),
                           "d": ffi.offsetof("Ctx", "d"), "lds_size": ffi.offsetof("Dispatch", "lds_size"),
                           "jit_limit": ffi.offsetof("Ctx", "jit_limit"), "triple": triple()}
        return self.layout

    def _known(self, key, nprog):
        """The address compiled for ``key`` (None if not yet); raise Unsupported if compiling it failed."""
        hit = self._done.get(key)
        if hit is not None and hit[0] is nprog:
            return hit[1].address
        bad = self._failed.get(key)
        if bad is not None and bad[0] is nprog:
            raise Unsupported(bad[1])
        return None

    def ready(self, nprog, program, K, entry_ip: int, mode: int, rows: int, lockstep: bool = False):
        """The compiled function's address if it is in memory or in the disk cache, else None (raise
        Unsupported if compiling it failed before)."""
        key = (id(nprog), entry_ip, mode, rows, lockstep)
        addr = self._known(key, nprog)
        if addr is not None:
            return addr
        with _lock:
            return self._from_disk(key, nprog, program, K, entry_ip, mode, rows, lockstep)

    def _from_disk(self, key, nprog, program, K, entry_ip, mode, rows, lockstep):
        """(lock held) The optimised code from the disk cache, else the tier-1 code (tiering on), else None."""
        from . import objcache
        from .compiler import bind_runtime, load_object
        bind_runtime(self.ffi, self.lib)
        hit = self._done.get(key)
        if hit is not None and hit[0] is nprog:
            return hit[1].address
        ck = self._disk_key(nprog, program, K, entry_ip, mode, rows, lockstep)
        if ck is None:
            return None
        tiers = [(ck, False)]
        if tiering() and not lockstep:
            tiers.append((_quick_key(ck), True))
        for k, quick in tiers:
            data = objcache.load(k)
            if data is None:
                continue
            try:
                comp = load_object(data, _code_name(ck, quick), shared=True)
            except Exception:  # noqa: BLE001 - a damaged entry: compiled and rewritten
                objcache.stats["bad"] += 1
                continue
            self.stats["cached"] = self.stats.get("cached", 0) + 1
            warm = (self._warm(nprog, program, K, entry_ip, mode, _code_name(ck), ck, 0.0)
                    if quick and not quick_only() else None)
            self._done[key] = (nprog, comp, warm)
            return comp.address
        return None

    def _disk_key(self, nprog, program, K, entry_ip, mode, rows, lockstep):
        from . import objcache
        entry_pc = nprog.base + int(nprog.code[entry_ip]["pc"])
        return objcache.key(program, K, entry_pc - program.base, mode, rows, lockstep)

    def function(self, nprog, program, K, entry_ip: int, mode: int, rows: int, lockstep: bool = False):
        """The compiled function's address (compiled now if needed), or raise Unsupported (the reason).  ``rows``:
        the VGPR rows a wave has (code touching more is refused); ``lockstep``: the one-instruction-per-call form
        (diff mode)."""
        key = (id(nprog), entry_ip, mode, rows, lockstep)
        addr = self._known(key, nprog)
        if addr is not None:
            return addr
        while True:
            with _lock:
                addr = self._known(key, nprog)
                if addr is not None:
                    return addr
                busy = self._compiling.get(key)
                if busy is None:
                    self._compiling[key] = threading.Event()
                    break
            busy.wait()       # another thread compiles this kernel: take its result
        try:
            return self._compile(key, nprog, program, K, entry_ip, mode, rows, lockstep)
        finally:
            with _lock:
                self._compiling.pop(key).set()

    def compile_soon(self, nprog, program, K, entry_ip: int, mode: int, rows: int) -> bool:
        """(tier 0, a small loop-free kernel dispatched again) True: its quick compile runs in the background
        (queued now, if it was not) and this dispatch runs on the numpy engine; False: its code is in (or
        compiling it failed: function() says why) and the dispatch takes the compiled path."""
        key = (id(nprog), entry_ip, mode, rows, False)
        if self._known(key, nprog) is not None:
            return False
        with _lock:
            if self._done.get(key, (None,))[0] is nprog or self._failed.get(key, (None,))[0] is nprog:
                return False
            queued = self._queued.get(key)
            if queued is not None and queued[0] is nprog and queued[1] == _generation:
                return True
            self._queued[key] = (nprog, _generation)
        # LLVM's first use in the process on this thread, inside the dispatch: what it sets up registers C++
        # destructors that run at exit before the native exit handler that waits for a compile in progress
        # (native/engine/engine.c); set up by a background compile, a C program exiting meanwhile (pyhip exec)
        # destroyed it under that compile (SIGSEGV, std::bad_alloc at exit)
        from .compiler import prepare
        prepare(quick=True)
        _the_background().submit(lambda: self._compile_quietly(key, nprog, program, K, entry_ip, mode, rows))
        return True

    def _compile_quietly(self, key, nprog, program, K, entry_ip, mode, rows) -> None:
        """(the background compiler) function(); what it cannot compile is recorded for the next dispatch."""
        try:
            self.function(nprog, program, K, entry_ip, mode, rows)
        except Unsupported:
            pass                                  # recorded by _compile: the dispatch path says why
        except Exception as exc:  # noqa: BLE001 - an LLVM error: the kernel runs on the numpy engine, saying why
            with _lock:
                self._failed[key] = (nprog, f"compiled engine: background compile failed: {exc}")
        finally:
            with _lock:
                if self._queued.get(key, (None,))[0] is nprog:
                    del self._queued[key]

    def _compile(self, key, nprog, program, K, entry_ip, mode, rows, lockstep):
        from . import objcache
        from .compiler import compile_ir
        with _lock:
            addr = self._from_disk(key, nprog, program, K, entry_ip, mode, rows, lockstep)
            if addr is not None:
                return addr
            ck = self._disk_key(nprog, program, K, entry_ip, mode, rows, lockstep)
            quick = tiering() and not lockstep and "PYHIP_JIT_OPT" not in os.environ
            from .compiler import warm_up_now, warm_up_once
            if warm_up_once(quick or lockstep):        # (the background thread: joined at exit)
                _the_background().submit(lambda: warm_up_now(quick or lockstep))
            try:
                kir = KernelIR(nprog, program, K, entry_ip, mode, self._layout(), lockstep=lockstep,
                               name="kernel" if ck is None else _code_name(ck), compact=quick)
                ir = kir.build()
                if kir.max_row >= rows:
                    raise Unsupported(f"uses VGPR rows up to {kir.max_row + 1}, more than the {rows} allocated")
            except Unsupported as exc:
                self._failed[key] = (nprog, str(exc))
                raise
        # LLVM runs without this lock (one compile at a time, compiler.llvm_section): other kernels of this
        # device are found ready or loaded from the disk cache meanwhile
        if quick:
            name = kir.name if ck is None else _code_name(ck, quick=True)
            comp = compile_ir(ir.replace(f"@{kir.name}(", f"@{name}(", 1), name, opt=QUICK_OPT,
                              codegen=QUICK_CODEGEN,
                              keep_object=ck is not None, shared=ck is not None)
            store = _quick_key(ck)
        else:
            # the one-instruction-per-call form (diff mode) runs an instruction per call, so optimising it
            # buys nothing while its compile at O1 was about half of the LLVM time of a differential corpus run
            fast = {"opt": QUICK_OPT, "codegen": QUICK_CODEGEN} if lockstep else {}
            comp = compile_ir(ir, kir.name, keep_object=ck is not None, shared=ck is not None, **fast)
            store = ck
        if store is not None and comp.object is not None:
            objcache.store(store, comp.object)
            comp.object = None
        with _lock:
            self.stats["compiled"] += 1
            self.stats["quick"] += int(quick)
            self.stats["seconds"] += comp.seconds
            warm = (self._warm(nprog, program, K, entry_ip, mode, kir.name, ck, comp.seconds)
                    if quick and not quick_only() else None)
            self._done[key] = (nprog, comp, warm)
        return comp.address

    def _warm(self, nprog, program, K, entry_ip, mode, name, ck, seconds) -> _Warm:
        """The tier-2 record of a kernel now on tier-1 code: its IR is made again if it gets hot (most kernels
        never do, so the text is not kept)."""
        layout = self._layout()
        return _Warm(lambda: KernelIR(nprog, program, K, entry_ip, mode, layout, name=name).build(), name, ck,
                     seconds)

    # -- tier 2 -----------------------------------------------------------------------------------------------
    def ran(self, nprog, entry_ip: int, mode: int, rows: int, lockstep: bool, seconds: float) -> bool:
        """A dispatch ran ``seconds`` on the code function() gave.  True when the native agent may take the
        kernel's later dispatches: its code is final, or it is small (a dispatch under SMALL_SECONDS, or
        SMALL_RUNS dispatches and not hot: it stays tier 1); a hot kernel is queued for optimised compiling, and its dispatches come back here until
        that code is in."""
        hit = self._done.get((id(nprog), entry_ip, mode, rows, lockstep))
        if hit is None or hit[0] is not nprog or hit[2] is None:
            return True
        warm = hit[2]
        with _lock:
            warm.runs += 1
            warm.seconds += seconds
            hot = not warm.queued and warm.seconds >= warm.threshold
            if hot:
                warm.queued = True
            small = not warm.queued and (warm.runs >= SMALL_RUNS or seconds < SMALL_SECONDS)
        if hot:
            key = (id(nprog), entry_ip, mode, rows, lockstep)
            _the_optimiser().submit(lambda: self._optimise(key, nprog, warm))
        return small

    def _optimise(self, key, nprog, warm) -> None:
        """(the optimiser thread) Compile ``warm``'s kernel at the full level and put it in place."""
        from . import objcache
        from .compiler import compile_ir
        try:
            ir = warm.ir()
            comp = compile_ir(ir, warm.name, keep_object=warm.ck is not None, shared=warm.ck is not None)
        except Exception as exc:  # noqa: BLE001 - the tier-1 code stays; say why once
            warnings.warn(f"pyhip: optimised compile of {warm.name} failed, tier-1 code kept: {exc}", stacklevel=1)
            return
        if warm.ck is not None and comp.object is not None:
            objcache.store(warm.ck, comp.object)
            comp.object = None
        with _lock:
            self.stats["compiled"] += 1
            self.stats["optimised"] += 1
            self.stats["seconds"] += comp.seconds
            hit = self._done.get(key)
            if hit is not None and hit[0] is nprog and hit[2] is warm:
                self._retired.append(hit[1])
                self._done[key] = (nprog, comp, None)
