"""Register indexing by M0: relative SGPR moves (s_movrels/s_movreld: SGPR[n + M0]) and VGPR index mode
(s_set_gpr_idx_*: the VALU instructions between _on and _off address VGPRs relative to M0[7:0]; the engines
wrap them with ``indexed``, the regions are found by ``gpr_index_modes``)."""
from __future__ import annotations

import copy

import numpy as np

from ..operands import sreader, sreader64
from ..state import M0
from .registry import op, register
from .salu import _simm

U32, U64 = np.uint32, np.uint64


def _movrel(width, source_relative):
    """s_movrels: D = SGPR[S0 + M0]; s_movreld: SGPR[D + M0] = S0 (per wave M0)."""
    def factory(inst, K):
        f = inst.fields
        s, d = f["ssrc0"], f["sdst"]
        rd = (sreader64 if width == 64 else sreader)(s, inst.literal)

        def run(st, w):
            m0 = st.sgpr[w, M0].astype(np.int64)
            rows = np.arange(st.sgpr[w].shape[0])
            for k in range(width // 32):
                if source_relative:
                    idx = np.clip(s + m0 + k, 0, 127)
                    st.sgpr[w, d + k] = st.sgpr[w][rows, idx]
                else:
                    v = rd(st, w)
                    part = ((v >> U64(32 * k)) & U64(0xFFFFFFFF)).astype(U32) if width == 64 else v
                    idx = np.clip(d + m0 + k, 0, 127)
                    block = st.sgpr[w]
                    block[rows, idx] = part
                    st.sgpr[w] = block
        return run
    return factory


register("s_movrels_b32", _movrel(32, True))
register("s_movrels_b64", _movrel(64, True))
register("s_movreld_b32", _movrel(32, False))
register("s_movreld_b64", _movrel(64, False))


# ---- VGPR index mode ---------------------------------------------------------------------------------------------------
GPR_IDX_SRC0, GPR_IDX_SRC1, GPR_IDX_SRC2, GPR_IDX_DST = 1, 2, 4, 8


@op("s_set_gpr_idx_on")
def _gpr_idx_on(inst, K):
    rd = sreader(inst.fields["ssrc0"], inst.literal)
    mode = inst.fields["ssrc1"] & 0xF

    def run(st, w):
        m0 = st.sgpr[w, M0]
        st.sgpr[w, M0] = (m0 & ~U32(0xF0FF)) | (rd(st, w) & U32(0xFF)) | U32(mode << 12)
    return run


@op("s_set_gpr_idx_idx")
def _gpr_idx_idx(inst, K):
    rd = sreader(inst.fields["ssrc0"], inst.literal)

    def run(st, w):
        st.sgpr[w, M0] = (st.sgpr[w, M0] & ~U32(0xFF)) | (rd(st, w) & U32(0xFF))
    return run


@op("s_set_gpr_idx_mode")
def _gpr_idx_mode(inst, K):
    mode = _simm(inst, signed=False) & 0xF

    def run(st, w):
        st.sgpr[w, M0] = (st.sgpr[w, M0] & ~U32(0xF000)) | U32(mode << 12)
    return run


def gpr_index_modes(instructions: dict) -> dict:
    """pc → operand mode bits for the VALU instructions inside s_set_gpr_idx_on ... _off regions (compilers
    emit them as straight-line sequences; a branch ends a region)."""
    out, mode = {}, 0
    for pc, inst in instructions.items():
        n = inst.name
        if n == "s_set_gpr_idx_on":
            mode = inst.fields["ssrc1"] & 0xF
        elif n == "s_set_gpr_idx_mode":
            mode = inst.fields.get("simm16", 0) & 0xF
        elif n == "s_set_gpr_idx_off" or n.startswith(("s_branch", "s_cbranch", "s_setpc", "s_endpgm")):
            mode = 0
        elif mode and inst.encoding[0] == "V":
            out[pc] = mode
    return out


def indexed(inst, K, mode, compile_fn):
    """Wrap a VALU instruction so its VGPR operands named by ``mode`` are offset by M0[7:0] of each wave."""
    cache = {}

    def variant(idx):
        fn = cache.get(idx)
        if fn is None:
            v = copy.copy(inst)
            f = dict(inst.fields)
            for bit, key in ((GPR_IDX_SRC0, "src0"), (GPR_IDX_SRC1, "src1"), (GPR_IDX_SRC2, "src2")):
                if mode & bit and key in f and f[key] >= 256:
                    f[key] += idx
            if mode & GPR_IDX_SRC1 and "vsrc1" in f:
                f["vsrc1"] += idx
            if mode & GPR_IDX_DST and "vdst" in f:
                f["vdst"] += idx
            v.fields = f
            fn = cache[idx] = compile_fn(v, K)
        return fn

    def run(st, w):
        idx = (st.sgpr[w, M0] & U32(0xFF)).astype(np.int64)
        first = int(idx[0])
        if (idx == first).all():
            return variant(first)(st, w)
        ws = np.arange(st.n)[w] if isinstance(w, slice) else np.asarray(w)
        for v in np.unique(idx):
            variant(int(v))(st, ws[idx == v])
    return run
