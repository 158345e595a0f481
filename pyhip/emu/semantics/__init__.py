"""Instruction semantics by class.  Each module registers factories ``f(inst, K) -> op`` by mnemonic;
``op(st, w)`` executes the instruction for the waves ``w`` (an index array) of a :class:`WaveState`.
The engine advances ``pc`` before calling ``op``, so branches simply overwrite it."""
from __future__ import annotations

SEMANTICS: dict = {}


class Unsupported(Exception):
    pass


def op(*names):
    def deco(factory):
        for n in names:
            SEMANTICS[n] = factory
        return factory
    return deco


def register(name, factory):
    SEMANTICS[name] = factory


def load_all():
    from . import buffer_format, ds, gws, mfma, mimg, packed, salu, salu_extra, smem, valu, valu16, valu_div, vcmp, vmem  # noqa: F401,E501
    from . import rdna, rdna_lanes, wmma  # noqa: F401  (after the GFX9 modules: registers their RDNA names)
    import os
    if os.environ.get("PYHIP_SPEC", "1") == "1" and not _INSTALLED:
        from . import described
        from ..spec import load_all as spec_all
        spec_all()
        described.install(SEMANTICS)
        _INSTALLED.append(True)
    return SEMANTICS


_INSTALLED: list = []
