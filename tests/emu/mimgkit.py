"""Image instructions on the emulated gfx90a, one wave at a time (asmkit's vector template): the T# and S#
go in through lanes 0-5 of operand ``a`` (v[2:3] -> s[12:23] with v_readlane), each lane's address/data
dwords through operands ``b`` and ``c`` (v4..v7), results come back from v8..v11.

Images live in the emulated device's memory, laid out linearly as the T# describes them; descriptors are
built field by field here (bit positions from the GFX9 register spec, not from pyhip's packer)."""
from __future__ import annotations

import numpy as np

import asmkit

# GFX9 T# / S# fields used by the tests: (dword, shift, bits)
T = {"base_lo": (0, 0, 32), "base_hi": (1, 0, 8), "dfmt": (1, 20, 6), "nfmt": (1, 26, 4), "width": (2, 0, 14),
     "height": (2, 14, 14), "sel_x": (3, 0, 3), "sel_y": (3, 3, 3), "sel_z": (3, 6, 3), "sel_w": (3, 9, 3),
     "base_level": (3, 12, 4), "last_level": (3, 16, 4), "sw_mode": (3, 20, 5), "type": (3, 28, 4),
     "depth": (4, 0, 13), "pitch": (4, 13, 16), "base_array": (5, 0, 13)}
S = {"clamp_x": (0, 0, 3), "clamp_y": (0, 3, 3), "clamp_z": (0, 6, 3), "unnorm": (0, 15, 1), "trunc": (0, 27, 1),
     "filter_mode": (0, 29, 2), "max_lod": (1, 12, 12), "mag": (2, 20, 2), "min": (2, 22, 2), "zf": (2, 24, 2),
     "border": (3, 30, 2)}
# GFX10.3 / GFX11 T# fields (ROCr's resource_nv.h / resource_gfx11.h): one unified FORMAT, WIDTH - 1 split in two,
# word 4 PITCH - 1 for 1-D / 2-D images; the S# fields above keep their GFX9 positions
T_RDNA = {"base_lo": (0, 0, 32), "base_hi": (1, 0, 8), "width_lo": (1, 30, 2), "width_hi": (2, 0, 12),
          "height": (2, 14, 14), "sel_x": (3, 0, 3), "sel_y": (3, 3, 3), "sel_z": (3, 6, 3), "sel_w": (3, 9, 3),
          "type": (3, 28, 4), "pitch": (4, 0, 14)}
T_FORMAT = {"gfx1030": (1, 20, 9), "gfx1100": (1, 20, 8)}
FLOAT4 = {"gfx1030": 77, "gfx1100": 63}          # unified FORMAT of 32_32_32_32_FLOAT (ROCr's CFMT_*)
TYPES = {"1d": 8, "2d": 9, "3d": 10, "1da": 12, "2da": 13}
USED: set = set()                                # the targets run since the last clear (tests check engines)
# (data format, bits per component) for (numpy dtype kind/size, components)
DFMT = {(8, 1): 1, (16, 1): 2, (8, 2): 3, (32, 1): 4, (16, 2): 5, (8, 4): 10, (32, 2): 11, (16, 4): 12, (32, 4): 14}


def words(table, **fields):
    out = [0] * (4 if table is S else 8)
    for k, v in fields.items():
        dw, sh, bits = table[k]
        assert 0 <= v < 1 << bits, (k, v)
        out[dw] |= v << sh
    return out


class Image:
    """texels: (layers_or_depth, H, W, C) array of raw element values (any uint/int/float dtype)."""

    def __init__(self, texels, kind="2d", nfmt=7, pitch=None, sel=(4, 5, 6, 7), dfmt=None, raw_bytes=None,
                 target="gfx90a"):
        g = asmkit.gpu(target)
        self.mem = g.memory
        self.texels = np.asarray(texels)
        d, h, w, c = self.texels.shape
        bpc = self.texels.dtype.itemsize * 8
        self.dfmt = dfmt or DFMT[(bpc, c)]
        self.bpe = raw_bytes or self.texels.dtype.itemsize * c
        self.pitch = pitch or w
        rows = 1 if kind in ("1d", "1da") else h
        self.nbytes = d * rows * self.pitch * self.bpe
        self.addr = self.mem.alloc(max(self.nbytes, 256))
        self.kind, self.dims = kind, (w, h, d)
        self.write(self.texels)
        depth_field = d - 1 if kind in ("3d", "1da", "2da") else 0
        if target != "gfx90a":                   # RDNA: 1-D / 2-D float4 images only
            assert kind in ("1d", "2d") and self.bpe == 16 and nfmt == 7
            table = dict(T_RDNA, format=T_FORMAT[target])
            f = dict(base_lo=(self.addr >> 8) & 0xFFFFFFFF, base_hi=self.addr >> 40, format=FLOAT4[target],
                     width_lo=(w - 1) & 3, width_hi=(w - 1) >> 2, height=h - 1 if kind == "2d" else 0,
                     sel_x=sel[0], sel_y=sel[1], sel_z=sel[2], sel_w=sel[3], type=TYPES[kind], pitch=self.pitch - 1)
            self.t = words(table, **f)
            return
        self.t = words(T, base_lo=(self.addr >> 8) & 0xFFFFFFFF, base_hi=self.addr >> 40, dfmt=self.dfmt, nfmt=nfmt,
                       width=w - 1, height=(h - 1 if kind not in ("1d", "1da") else 0), sel_x=sel[0], sel_y=sel[1],
                       sel_z=sel[2], sel_w=sel[3], type=TYPES[kind], depth=depth_field, pitch=self.pitch - 1)

    def write(self, texels):
        d, h, w, c = self.texels.shape
        rows = 1 if self.kind in ("1d", "1da") else h
        buf = np.zeros((d, rows, self.pitch, self.bpe), np.uint8)
        buf[:, :, :w] = np.ascontiguousarray(texels).view(np.uint8).reshape(d, rows, w, self.bpe)
        self.mem.write(self.addr, buf.tobytes())

    def read(self):
        d, h, w, c = self.texels.shape
        rows = 1 if self.kind in ("1d", "1da") else h
        buf = np.frombuffer(self.mem.read(self.addr, self.nbytes), np.uint8).reshape(d, rows, self.pitch, self.bpe)
        return np.ascontiguousarray(buf[:, :, :w]).view(self.texels.dtype).reshape(d, rows, w, c)

    def free(self):
        self.mem.free(self.addr)


def _descriptor_operand(t, s):
    dw = list(t) + list(s or [0, 0, 0, 0])
    a = np.zeros(64, np.uint64)
    for i in range(6):
        a[i] = a[32 + i] = dw[2 * i] | dw[2 * i + 1] << 32      # (lanes 32-37: the second wave32 wave)
    return a


def _pack(dwords):
    """(64, k<=4) uint32 -> operands b, c."""
    d = np.zeros((64, 4), np.uint32)
    d[:, :dwords.shape[1]] = dwords
    b = d[:, 0].astype(np.uint64) | d[:, 1].astype(np.uint64) << np.uint64(32)
    c = d[:, 2].astype(np.uint64) | d[:, 3].astype(np.uint64) << np.uint64(32)
    return b, c


READ_DESCRIPTORS = "\n".join(f"  v_readlane_b32 s{12 + 2 * i}, v2, {i}\n  v_readlane_b32 s{13 + 2 * i}, v3, {i}"
                             for i in range(6)) + "\n"


def run(inst: str, t, s=None, addr=None, lanes=64, post="", target="gfx90a", wave=64):
    """Run ``inst`` (text using v8 for data, v4 for the address, s[12:19] T#, s[20:23] S#) with per-lane
    dwords ``addr`` (64, k) in v4...; returns v8..v11 as (64, 4) uint32 (``post``: instructions after it)."""
    b, c = _pack(np.asarray(addr, np.uint32).reshape(64, -1) if addr is not None else np.zeros((64, 1), np.uint32))
    body = READ_DESCRIPTORS + f"  {inst}\n  s_waitcnt vmcnt(0)\n{post}"
    USED.add(target)
    r0, r1 = asmkit.run(body, _descriptor_operand(t, s), b, c, lanes=lanes, target=target, wave=wave)
    return np.stack([asmkit.lo(r0), asmkit.hi(r0), asmkit.lo(r1), asmkit.hi(r1)], axis=1)
