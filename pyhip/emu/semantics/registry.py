"""The mnemonic → semantics-factory table the modules of this package fill (``op``, ``register``) and the
engine reads (``SEMANTICS``, complete after ``pyhip.emu.semantics.load_all()``)."""
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
