"""Handles ↔ kernels: hip-clang's fat binary / function / variable registration and lookup."""
from .fatbin import FatBinary, Registry, VarInfo

__all__ = ["FatBinary", "Registry", "VarInfo"]
