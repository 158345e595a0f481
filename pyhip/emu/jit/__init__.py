"""The compiled engine: a kernel's code translated once into host machine code through LLVM (llvmlite), a
whole wave per operation as SIMD vectors, run by the native runtime's scheduler (native/engine) without the
GIL.  Instruction semantics come from the one description in pyhip/emu/spec (see docs/engine.md)."""
from __future__ import annotations

import os
import threading

from .kernel import KernelIR, Unsupported

_lock = threading.Lock()


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
    global _lock
    from . import compiler
    _lock = threading.Lock()
    compiler._lock = threading.RLock()
    compiler._depth = threading.local()
    lib = compiler._state.get("bound")
    if lib is not None:
        lib.pyhip_llvm_after_fork()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)


def enabled() -> bool:
    return os.environ.get("PYHIP_JIT", "1") != "0"


def tiering() -> bool:
    """A kernel's small first dispatch runs on the numpy engine, and the kernel is compiled when it is
    dispatched again (PYHIP_JIT_TIERING=0: always compile first)."""
    return os.environ.get("PYHIP_JIT_TIERING", "1") != "0"


# a first dispatch whose static work estimate (waves x reachable instructions, loop-free code) is below this runs
# on the numpy engine: the numpy engine takes about a microsecond per wave-instruction
# in batches, a compile tens to hundreds of milliseconds
TIER0_WORK = 40_000


def available() -> bool:
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        return False
    return True


def _code_name(ck: str) -> str:
    """The compiled function's name for the disk cache key ``ck``: unique to its code, so that kernels share
    one execution engine (compiler.load_object)."""
    return f"pyhip_k{ck[:32]}"


class KernelCache:
    """Compiled kernels of one device: (program, accum_offset, lanes, entry, mode) → Compiled."""

    def __init__(self, ffi, lib):
        self.ffi, self.lib = ffi, lib
        self._done: dict = {}
        self._failed: dict = {}
        self.layout = None
        self.stats = {"compiled": 0, "seconds": 0.0}
        self._compiling: dict = {}     # key -> Event set when the thread compiling it is done

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
        from . import objcache
        from .compiler import bind_runtime, load_object
        bind_runtime(self.ffi, self.lib)
        hit = self._done.get(key)
        if hit is not None and hit[0] is nprog:
            return hit[1].address
        ck = self._disk_key(nprog, program, K, entry_ip, mode, rows, lockstep)
        data = objcache.load(ck) if ck is not None else None
        if data is None:
            return None
        try:
            comp = load_object(data, _code_name(ck), shared=True)
        except Exception:  # noqa: BLE001 - a damaged entry: compiled and rewritten
            objcache.stats["bad"] += 1
            return None
        self.stats["cached"] = self.stats.get("cached", 0) + 1
        self._done[key] = (nprog, comp)
        return comp.address

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

    def _compile(self, key, nprog, program, K, entry_ip, mode, rows, lockstep):
        from . import objcache
        from .compiler import compile_ir
        with _lock:
            addr = self._from_disk(key, nprog, program, K, entry_ip, mode, rows, lockstep)
            if addr is not None:
                return addr
            ck = self._disk_key(nprog, program, K, entry_ip, mode, rows, lockstep)
            try:
                kir = KernelIR(nprog, program, K, entry_ip, mode, self._layout(), lockstep=lockstep,
                               name="kernel" if ck is None else _code_name(ck))
                ir = kir.build()
                if kir.max_row >= rows:
                    raise Unsupported(f"uses VGPR rows up to {kir.max_row + 1}, more than the {rows} allocated")
            except Unsupported as exc:
                self._failed[key] = (nprog, str(exc))
                raise
        # LLVM runs without this lock (one compile at a time, compiler.llvm_section): other kernels of this
        # device are found ready or loaded from the disk cache meanwhile
        comp = compile_ir(ir, kir.name, keep_object=ck is not None, shared=ck is not None)
        if ck is not None and comp.object is not None:
            objcache.store(ck, comp.object)
            comp.object = None
        with _lock:
            self.stats["compiled"] += 1
            self.stats["seconds"] += comp.seconds
            self._done[key] = (nprog, comp)
        return comp.address
