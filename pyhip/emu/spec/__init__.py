"""The ISA's semantics, written once (see ``lang`` for the language, ``operands`` for the encodings' operand
rules): each description builds an instruction's dataflow graph, from which the numpy reference engine
(``numpy_backend``) and the compiled engine (pyhip/emu/jit) generate their code."""
from __future__ import annotations

_LOADED = False


def load_all() -> dict:
    """Import every description module; returns mnemonic -> description."""
    global _LOADED
    from .operands import DESCRIPTIONS
    if not _LOADED:
        from . import rdna, salu, valu, vcarry, vcmp, vdiv, vhalf, vlanes, vpacked  # noqa: F401
        _LOADED = True
    return DESCRIPTIONS
