"""What the native engine executes, per mnemonic: every opcode-table entry's sample encoding (the one
llvm-mc-19 produced for tools/gen_gfx9_tables.py) decoded and lowered; a mnemonic counts as native when one of
its encodings lowers.  RDNA targets run on the numpy engine only (pyhip/emu/native/run.py)."""
from __future__ import annotations

from types import SimpleNamespace


def native_mnemonics(target: str) -> set[str]:
    """Mnemonics of ``target`` the native engine lowers (empty for RDNA targets)."""
    from ..engine import KernelContext, isa_family
    from ..isa._tables_gfx9 import OPCODES
    from ..isa.decoder import _TARGET_TABLE, decode
    from .layout import op_ids
    from .lower import lower_instruction

    if isa_family(target) != 9 or target not in _TARGET_TABLE:
        return set()
    ops = op_ids()
    K = KernelContext(SimpleNamespace(memory=None), target, 0)
    ok: set[str] = set()
    for table in OPCODES[_TARGET_TABLE[target]].values():
        for name, _, _, sample in table.values():
            if name in ok:
                continue
            try:
                inst = decode(bytes.fromhex(sample) + bytes(8), target, base=0x1000)[0]   # room for a literal
                if lower_instruction(inst, K, []).op in ops:
                    ok.add(name)
            except Exception:  # noqa: BLE001 - Unsupported, or a sample this form cannot take
                continue
    return ok
