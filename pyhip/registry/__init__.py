"""Handles ↔ kernels: hip-clang's fat binary / function / variable registration and lookup."""
from .fatbin import CallConfigStack, FatBinary, Registry, VarInfo

__all__ = ["CallConfigStack", "FatBinary", "Registry", "VarInfo"]
