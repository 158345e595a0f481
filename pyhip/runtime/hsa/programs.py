"""Code objects on the HSA backend: loaded through ROCr's loader (hsa_code_object_reader, hsa_executable) once
pyhip's loader chose them; kernel objects and variables found by symbol."""
from __future__ import annotations

from ...errors import HipError, hipError_t
from . import api
from .api import ffi


class HsaProgram:
    """A code object loaded through ROCr's loader; pyhip's loader already chose it and knows its kernels."""

    def __init__(self, backend, co):
        self.backend, self.co = backend, co
        hsa, lib = backend.hsa, backend.hsa.lib
        self._image = ffi.from_buffer(co.data)
        self.reader = ffi.new("hsa_code_object_reader_t*")
        hsa.check(lib.hsa_code_object_reader_create_from_memory(self._image, len(self._image), self.reader),
                  "hsa_code_object_reader_create_from_memory")
        self.exe = ffi.new("hsa_executable_t*")
        hsa.check(lib.hsa_executable_create_alt(api.PROFILE_FULL, api.ROUNDING_DEFAULT, ffi.NULL, self.exe),
                  "hsa_executable_create_alt")
        agent = ffi.new("hsa_agent_t*", {"handle": backend.agent.handle})
        self._agent = agent
        hsa.check(lib.hsa_executable_load_agent_code_object(self.exe[0], agent[0], self.reader[0], ffi.NULL, ffi.NULL),
                  "hsa_executable_load_agent_code_object")
        hsa.check(lib.hsa_executable_freeze(self.exe[0], ffi.NULL), "hsa_executable_freeze")
        self._objects: dict[str, int] = {}
        self._globals: set[int] = set()

    def _symbol(self, name: str):
        sym = ffi.new("hsa_executable_symbol_t*")
        st = self.backend.hsa.lib.hsa_executable_get_symbol_by_name(self.exe[0], name.encode(), self._agent, sym)
        if st != 0:
            raise HipError(hipError_t.hipErrorNotFound, f"symbol {name!r}: {self.backend.hsa.status_string(st)}")
        return sym[0]

    def kernel_object(self, name) -> int:
        k = self.co.find_kernel(name)
        obj = self._objects.get(k.symbol)
        if obj is None:
            v = ffi.new("uint64_t*")
            self.backend.hsa.check(self.backend.hsa.lib.hsa_executable_symbol_get_info(
                self._symbol(k.symbol), api.SYMBOL_INFO_KERNEL_OBJECT, v), "kernel object")
            obj = self._objects[k.symbol] = v[0]
            self.backend.kernel_names[obj] = k.name
        return obj

    def global_address(self, name: str) -> int:
        v = ffi.new("uint64_t*")
        self.backend.hsa.check(self.backend.hsa.lib.hsa_executable_symbol_get_info(
            self._symbol(name), api.SYMBOL_INFO_VARIABLE_ADDRESS, v), "variable address")
        size = next((g.size for g in self.co.globals if g.name == name), 0)
        if size and v[0] not in self._globals:
            self._globals.add(v[0])
            self.backend.track(v[0], size, "global")   # device memory ROCr's loader placed: copies see it
        return v[0]

    def unload(self) -> None:
        for a in self._globals:
            self.backend.untrack(a)
        lib = self.backend.hsa.lib
        lib.hsa_executable_destroy(self.exe[0])
        lib.hsa_code_object_reader_destroy(self.reader[0])
