"""The PM4 a GFX9 command processor accepts inside an AMD "PM4 indirect buffer" AQL packet (vendor packet,
AmdFormat 1): ROCr uses it to invalidate caches after loading code (an INDIRECT_BUFFER jump to an IB
holding ACQUIRE_MEM).  Type-3 packets: header = TYPE(3)<<30 | (dwords-2)<<16 | opcode<<8 | shader type<<1."""
from __future__ import annotations

import struct

OP_NOP, OP_INDIRECT_BUFFER, OP_RELEASE_MEM, OP_ACQUIRE_MEM = 0x10, 0x3F, 0x49, 0x58
KNOWN = {OP_NOP: "NOP", OP_INDIRECT_BUFFER: "INDIRECT_BUFFER", OP_RELEASE_MEM: "RELEASE_MEM",
         OP_ACQUIRE_MEM: "ACQUIRE_MEM"}
PM4_IB_FORMAT = 1               # AMD_AQL_FORMAT_PM4_IB
MAX_IB_DWORDS = 1 << 16


class Pm4Error(ValueError):
    """Malformed or unsupported PM4 (the CP reports the packet as invalid)."""


def header(opcode: int, dwords: int, gfx_major: int = 9) -> int:
    return (3 << 30) | ((dwords - 2) & 0x3FFF) << 16 | (opcode & 0xFF) << 8 | (int(gfx_major == 7) << 1)


def split(words) -> list[tuple[int, list[int]]]:
    """A dword stream → [(opcode, body dwords)]; raises Pm4Error for anything but whole type-3 packets."""
    out, i = [], 0
    while i < len(words):
        h = words[i]
        if h >> 30 != 3:
            raise Pm4Error(f"PM4 dword {i}: type {h >> 30} packet (only type 3 is accepted)")
        n = (h >> 16 & 0x3FFF) + 1
        if i + 1 + n > len(words):
            raise Pm4Error(f"PM4 packet at dword {i} runs past the end ({n} body dwords)")
        out.append((h >> 8 & 0xFF, list(words[i + 1:i + 1 + n])))
        i += 1 + n
    return out


def indirect_target(body: list[int]) -> tuple[int, int]:
    """INDIRECT_BUFFER body → (IB address, size in dwords)."""
    if len(body) != 3:
        raise Pm4Error("INDIRECT_BUFFER has 3 body dwords")
    if not body[2] >> 23 & 1:
        raise Pm4Error("INDIRECT_BUFFER without IB_VALID")
    return (body[0] & 0xFFFFFFFC) | (body[1] & 0xFFFF) << 32, body[2] & 0xFFFFF


def execute(words, read_memory, depth: int = 0) -> list[str]:
    """Run a PM4 stream: cache maintenance (ACQUIRE_MEM) and NOPs are done (memory is coherent in the
    emulator), INDIRECT_BUFFER chains to another stream read with ``read_memory(address, bytes)``.  Returns
    the names of the packets executed; raises Pm4Error for anything else."""
    done = []
    for op, body in split(words):
        if op == OP_INDIRECT_BUFFER:
            if depth >= 2:
                raise Pm4Error("INDIRECT_BUFFER nested more than twice")
            addr, n = indirect_target(body)
            if n > MAX_IB_DWORDS:
                raise Pm4Error(f"IB of {n} dwords")
            done.append("INDIRECT_BUFFER")
            done += execute(struct.unpack(f"<{n}I", read_memory(addr, 4 * n)), read_memory, depth + 1)
        elif op in (OP_NOP, OP_ACQUIRE_MEM):
            done.append(KNOWN[op])
        else:
            raise Pm4Error(f"PM4 opcode 0x{op:02x} ({KNOWN.get(op, 'unknown')}) is not supported")
    return done
