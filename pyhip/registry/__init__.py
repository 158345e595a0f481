"""Handles ↔ kernels: hip-clang's fat binary / function / variable / texture registration, lazy per-device
loading, managed variables and lookup by handle or shadow address — the API both the C ABI (capi/registration.py,
capi/textures.py, capi/memory.py) and the runtime (runtime/context.py, graphs) use.

- ``fatbin.py``: wrappers, bundles and the record of one registered fat binary (its handle);
- ``variables.py``: registered variables, managed memory and its binding, the symbol API's bounds rule;
- ``handles.py``: :class:`Registry`, the tables and the API.

Kernels by *name* (mangled, extern "C", readable) are the loader's (``CodeObject.find_kernel``,
``loader/names.py``): the registry resolves a handle to a device name and asks the module for it."""
from .fatbin import FatBinary, bundle_at
from .handles import Registry
from .variables import VarInfo

__all__ = ["FatBinary", "Registry", "VarInfo", "bundle_at"]
