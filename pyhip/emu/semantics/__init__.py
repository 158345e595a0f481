"""Instruction semantics by class.  Each module registers factories ``f(inst, K) -> op`` by mnemonic;
``op(st, w)`` executes the instruction for the waves ``w`` (an index array) of a :class:`WaveState`.
The engine advances ``pc`` before calling ``op``, so branches simply overwrite it.

Every ALU instruction comes from its description (pyhip/emu/spec, the one source of its semantics):
:mod:`.described` builds its factory from that.  The modules here hold what has no description: memory, LDS,
GWS, images, matrix (MFMA, WMMA), program control and system instructions, and a few lane operations."""
from __future__ import annotations

from .registry import SEMANTICS, Unsupported, op, register  # noqa: F401 (the package's interface)


def load_all():
    if not _INSTALLED:
        from . import buffer_format, ds, gpr_indexing, gws, mfma, mimg, salu, smem, vmem  # noqa: F401
        from . import rdna, rdna_lanes, wmma  # noqa: F401  (after the GFX9 modules: registers their RDNA names)
        from . import described
        from ..spec import load_all as spec_all
        spec_all()
        described.install(SEMANTICS)
        _INSTALLED.append(True)
    return SEMANTICS


_INSTALLED: list = []
