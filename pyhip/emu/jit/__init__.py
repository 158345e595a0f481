"""The compiled engine: a kernel's code translated once into host machine code through LLVM (llvmlite), a
whole wave per operation as SIMD vectors, run by the native runtime's scheduler (native/engine) without the
GIL.  Instruction semantics come from the one description in pyhip/emu/spec (see docs/engine.md)."""
from __future__ import annotations

import os
import threading

from .kernel import KernelIR, Unsupported

_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("PYHIP_JIT", "1") != "0"


def available() -> bool:
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        return False
    return True


class KernelCache:
    """Compiled kernels of one device: (program, accum_offset, lanes, entry, mode) → Compiled."""

    def __init__(self, ffi, lib):
        self.ffi, self.lib = ffi, lib
        self._done: dict = {}
        self._failed: dict = {}
        self.layout = None
        self.stats = {"compiled": 0, "seconds": 0.0}

    def _layout(self):
        if self.layout is None:
            from .compiler import triple
            ffi = self.ffi
            self.layout = {"s": ffi.offsetof("Wave", "s"), "v": ffi.offsetof("Wave", "v"),
                           "scc": ffi.offsetof("Wave", "scc"), "mode": ffi.offsetof("Wave", "mode"),
                           "ip": ffi.offsetof("Wave", "ip"), "count": ffi.offsetof("Wave", "count"),
                           "jit_limit": ffi.offsetof("Ctx", "jit_limit"), "triple": triple()}
        return self.layout

    def function(self, nprog, program, K, entry_ip: int, mode: int, rows: int, lockstep: bool = False):
        """The compiled function's address, or raise Unsupported (the reason).  ``rows``: the VGPR rows a wave
        has (code touching more is refused); ``lockstep``: the one-instruction-per-call form (diff mode)."""
        key = (id(nprog), entry_ip, mode, rows, lockstep)
        hit = self._done.get(key)
        if hit is not None and hit[0] is nprog:
            return hit[1].address
        bad = self._failed.get(key)
        if bad is not None and bad[0] is nprog:
            raise Unsupported(bad[1])
        with _lock:
            hit = self._done.get(key)
            if hit is not None and hit[0] is nprog:
                return hit[1].address
            from . import objcache
            from .compiler import bind_runtime, compile_ir, load_object
            bind_runtime(self.ffi, self.lib)
            entry_pc = nprog.base + int(nprog.code[entry_ip]["pc"])
            ck = objcache.key(program, K, entry_pc - program.base, mode, rows, lockstep)
            data = objcache.load(ck) if ck is not None else None
            if data is not None:
                try:
                    comp = load_object(data, "kernel")
                    self.stats["cached"] = self.stats.get("cached", 0) + 1
                    self._done[key] = (nprog, comp)
                    return comp.address
                except Exception:  # noqa: BLE001 - a damaged entry: compile and rewrite it
                    objcache.stats["bad"] += 1
            try:
                kir = KernelIR(nprog, program, K, entry_ip, mode, self._layout(), lockstep=lockstep)
                ir = kir.build()
                if kir.max_row >= rows:
                    raise Unsupported(f"uses VGPR rows up to {kir.max_row + 1}, more than the {rows} allocated")
            except Unsupported as exc:
                self._failed[key] = (nprog, str(exc))
                raise
            comp = compile_ir(ir, kir.name, keep_object=ck is not None)
            if ck is not None and comp.object is not None:
                objcache.store(ck, comp.object)
                comp.object = None
            self.stats["compiled"] += 1
            self.stats["seconds"] += comp.seconds
            comp.kir_stats = None
            self._done[key] = (nprog, comp)
            return comp.address
