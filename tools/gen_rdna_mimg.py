"""MIMG facts for tools/gen_rdna_tables.py: sample encodings of every image opcode, and per opcode how
llvm-mc-19 sizes its operands (GFX10/GFX11 encode no data or address count: LLVM derives them from the
opcode, DIM, A16, DMASK, D16 and TFE, and the NSA forms list one VGPR per address).

Per opcode the table's ``INFO['MIMG'][op]['mimg']`` holds:

* ``dmask``: a DMASK whose data width LLVM prints as the channel count (the one the probes use);
* ``addr``: 16 entries, index ``dim * 2 + a16``: the address VGPRs of the contiguous form (None: rejected);
* ``nsa``: ``{dwords: 16 entries}`` for the NSA forms: the number of address operands, or a tuple of their
  widths when one is a register tuple (GFX11 BVH, partial NSA), None when rejected;
  an ``addr``/``nsa`` entry ``[widths, data]`` (a list) means LLVM found no instruction variant for that
  address count and printed its default operand sizes (``data`` data VGPRs whatever DMASK says);
* ``data``: 20 entries, index ``(channels * 2 + d16) * 2 + tfe`` (channels = popcount of DMASK, 0-4):
  ``(data VGPRs, address VGPRs)`` printed for a 2-D contiguous form (address VGPRs other than ``addr``'s
  mean LLVM kept its default operand sizes for that combination);
* ``default``: ``{dwords: [address widths, data VGPRs]}``: what LLVM prints when the data tuple would run
  past v255 (it keeps the operand sizes of the variant it decoded);
* ``samp``: the S# operand is printed; ``dim``: DIM is printed (not for BVH).
"""
from __future__ import annotations

import re
import struct

VADDR, VDATA, SRSRC, SSAMP = 4, 24, 2, 25        # v4, v24, s[8:15], s[100:103]
NSA_BYTES = (5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)


def _pack(*w):
    return struct.pack(f"<{len(w)}I", *w)


def encode(fam: int, op: int, dmask=1, dim=1, a16=0, nsa=0, d16=0, tfe=0, ssamp=SSAMP, vdata=VDATA,
           vaddr=VADDR) -> bytes:
    if fam == 10:
        w0 = 0xF0000000 | (op & 0x7F) << 18 | op >> 7 | dmask << 8 | dim << 3 | nsa << 1 | tfe << 16
        w1 = vaddr | vdata << 8 | SRSRC << 16 | ssamp << 21 | a16 << 30 | d16 << 31
    else:
        w0 = 0xF0000000 | op << 18 | dmask << 8 | dim << 2 | nsa | a16 << 16 | d16 << 17
        w1 = vaddr | vdata << 8 | SRSRC << 16 | tfe << 21 | ssamp << 26
    extra = []
    if nsa:
        b = bytes(NSA_BYTES[:4 * nsa])
        extra = list(struct.unpack(f"<{nsa}I", b))
    return _pack(w0, w1, *extra)


def samples(fam: int):
    """(opcode, bytes) candidates for the table sweep."""
    for op in range(256):
        for dmask, dim, ssamp, a16 in ((1, 1, SSAMP, 0), (1, 1, 0, 0), (3, 1, 0, 0), (0xF, 1, SSAMP, 0),
                                       (0xF, 0, 0, 0), (0xF, 0, 0, 1)):
            yield op, encode(fam, op, dmask, dim, a16, ssamp=ssamp)


_REG = re.compile(r"^v(\d+)$|^v\[(\d+):(\d+)\]$")


def _width(tok: str):
    m = _REG.match(tok.strip())
    if not m:
        return None
    return 1 if m.group(1) else int(m.group(3)) - int(m.group(2)) + 1


def _operands(text: str):
    """(data width, address widths tuple, nsa?) of an image instruction's text."""
    _, _, rest = text.partition(" ")
    m = re.match(r"\s*(v\d+|v\[\d+:\d+\]),\s*(\[(?:[^\[\]]|\[[^\]]*\])*\]|v\d+|v\[\d+:\d+\])", rest)
    if not m:
        return None
    data = _width(m.group(1))
    a = m.group(2)
    if a.startswith("["):
        parts = re.findall(r"v\d+|v\[\d+:\d+\]", a[1:-1])
        return data, tuple(_width(p) for p in parts), True
    return data, (_width(a),), False


def _channels(dmask: int) -> int:
    return bin(dmask).count("1")


def _gather(name: str) -> bool:
    return "gather4" in name or name == "image_msaa_load"


def _expected_data(name: str, dmask: int) -> int:
    if _gather(name):
        return 4
    if "bvh" in name:
        return 4
    return max(_channels(dmask), 1)


def info(fam: int, target: str, table: dict, disassemble) -> dict:
    """op -> the ``mimg`` dict of the module doc, for the MIMG opcodes of ``table``."""
    ops = {op: e[0] for (enc, op), e in table.items() if enc == "MIMG"}
    # 1. a DMASK LLVM sizes plainly (data width = channels) for a 2-D contiguous form
    probes, keys = [], []
    for op, name in ops.items():
        for dm in (1, 3, 0xF):
            for ss in (SSAMP, 0):
                dim = 0 if "bvh" in name else 1
                probes.append(encode(fam, op, dm, dim, ssamp=ss))
                keys.append((op, dm, ss))
    chosen = {}
    for (op, dm, ss), r in zip(keys, disassemble(probes, target)):
        if op in chosen or not (r and len(r) == 1):
            continue
        o = _operands(r[0])
        if o and o[0] == _expected_data(ops[op], dm):
            chosen[op] = (dm, ss, "s[100:103]" in r[0], "dim:" in r[0])
    nsa_max = 3 if fam == 10 else 1
    probes, keys = [], []
    for op, (dm, ss, _, _) in chosen.items():
        for dim in range(8):
            for a16 in (0, 1):
                for k in range(nsa_max + 1):
                    probes.append(encode(fam, op, dm, dim, a16, nsa=k, ssamp=ss))
                    keys.append(("addr", op, dim * 2 + a16, k))
                    if _gather(ops[op]):
                        probes.append(encode(fam, op, dm, dim, a16, nsa=k, ssamp=ss, d16=1))
                    else:
                        probes.append(encode(fam, op, 3 if dm == 1 else 0xF, dim, a16, nsa=k, ssamp=ss))
                    keys.append(("alt", op, dim * 2 + a16, k))
                    probes.append(encode(fam, op, 3 if dm == 1 else dm, dim, a16, nsa=k, ssamp=ss, vdata=255))
                    keys.append(("default", op, dim * 2 + a16, k))
                    for va in ((255, 254, 252, 248) if k == 0 else ()):
                        probes.append(encode(fam, op, dm, dim, a16, ssamp=ss, vaddr=va))
                        keys.append(("default_addr", op, dim * 2 + a16, k))
        bdim = 0 if "bvh" in ops[op] else 1
        for ch, dmv in enumerate((0, 1, 3, 7, 0xF)):
            for d16 in (0, 1):
                for tfe in (0, 1):
                    probes.append(encode(fam, op, dmv, bdim, d16=d16, tfe=tfe, ssamp=ss))
                    keys.append(("data", op, (ch * 2 + d16) * 2 + tfe, 0))
    out = {op: {"dmask": c[0], "samp": c[2], "dim": c[3], "addr": [None] * 16, "default": {},
                "nsa": {k: [None] * 16 for k in range(1, nsa_max + 1)}, "data": [None] * 20}
           for op, c in chosen.items()}
    for (kind, op, idx, k), r in zip(keys, disassemble(probes, target)):
        o = _operands(r[0]) if r and len(r) == 1 and not r[0].startswith("<") else None
        d = out[op]
        if kind == "data":
            d["data"][idx] = (o[0], o[1][0]) if o and not o[2] else None
            continue
        if o is None or o[2] != bool(k):
            continue
        ent = o[1][0] if not k else len(o[1]) if all(w == 1 for w in o[1]) else o[1]
        if kind == "default_addr":
            if d["addr"][idx] is not None and not isinstance(d["addr"][idx], list) and o[1][0] != d["addr"][idx]:
                d["default"].setdefault(0, [o[1][0], o[0]])
            continue
        if kind == "default":
            d["default"].setdefault(k, [o[1] if k else o[1][0], o[0]])
            continue
        if kind == "alt":       # only the variant's default sizes explain the alternative probe: early exit
            want = 2 if _gather(ops[op]) else _expected_data(ops[op], 3 if d["dmask"] == 1 else 0xF)
            cur = d["addr"][idx] if k == 0 else d["nsa"][k][idx]
            same = cur == (o[1][0] if not k else len(o[1]) if all(w == 1 for w in o[1]) else o[1])
            if o[0] != want and cur is not None and not isinstance(cur, list) and same:
                ent = [o[1] if k else o[1][0], o[0]]
            else:
                continue
        elif o[0] != _expected_data(ops[op], d["dmask"]):
            ent = [o[1] if k else o[1][0], o[0]]
        if k == 0:
            d["addr"][idx] = ent
        else:
            d["nsa"][k][idx] = ent
    return out
