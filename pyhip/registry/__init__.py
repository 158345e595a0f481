"""Handles ↔ kernels: hip-clang's fat binary / function / variable registration, lazy per-device loading,
managed variables and lookup by handle or shadow address (the API both the C ABI and the runtime use)."""
from .fatbin import FatBinary, Registry, VarInfo, bundle_at

__all__ = ["FatBinary", "Registry", "VarInfo", "bundle_at"]
