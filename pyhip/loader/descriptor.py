"""The 64-byte kernel descriptor (``<kernel>.kd``) of code object V3+, every bit field decoded.

Layout and the fields pyhip uses: docs/code-object.md §5 (LLVM ``AMDHSAKernelDescriptor.h``).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, fields

from ..errors import LoaderError

KD_SIZE = 64
_KD = struct.Struct("<IIII q 20x IIIHH 4x")

# (name, lsb, width) per register.  Names follow LLVM's COMPUTE_PGM_RSRC*/KERNEL_CODE_PROPERTY names.
RSRC1_FIELDS = (
    ("granulated_workitem_vgpr_count", 0, 6), ("granulated_wavefront_sgpr_count", 6, 4),
    ("priority", 10, 2), ("float_round_mode_32", 12, 2), ("float_round_mode_16_64", 14, 2),
    ("float_denorm_mode_32", 16, 2), ("float_denorm_mode_16_64", 18, 2), ("priv", 20, 1),
    ("enable_dx10_clamp", 21, 1), ("debug_mode", 22, 1), ("enable_ieee_mode", 23, 1), ("bulky", 24, 1),
    ("cdbg_user", 25, 1), ("fp16_ovfl", 26, 1), ("wgp_mode", 29, 1), ("mem_ordered", 30, 1),
    ("fwd_progress", 31, 1),
)
RSRC2_FIELDS = (
    ("enable_private_segment", 0, 1), ("user_sgpr_count", 1, 5), ("enable_trap_handler", 6, 1),
    ("enable_sgpr_workgroup_id_x", 7, 1), ("enable_sgpr_workgroup_id_y", 8, 1),
    ("enable_sgpr_workgroup_id_z", 9, 1), ("enable_sgpr_workgroup_info", 10, 1),
    ("enable_vgpr_workitem_id", 11, 2), ("enable_exception_address_watch", 13, 1),
    ("enable_exception_memory", 14, 1), ("granulated_lds_size", 15, 9),
    ("enable_exception_ieee_754_fp_invalid_operation", 24, 1),
    ("enable_exception_fp_denormal_source", 25, 1), ("enable_exception_ieee_754_fp_division_by_zero", 26, 1),
    ("enable_exception_ieee_754_fp_overflow", 27, 1), ("enable_exception_ieee_754_fp_underflow", 28, 1),
    ("enable_exception_ieee_754_fp_inexact", 29, 1), ("enable_exception_int_divide_by_zero", 30, 1),
)
RSRC3_GFX90A_FIELDS = (("accum_offset", 0, 6), ("tg_split", 16, 1))
RSRC3_GFX10_FIELDS = (("shared_vgpr_count", 0, 4), ("inst_pref_size", 4, 6), ("trap_on_start", 10, 1),
                      ("trap_on_end", 11, 1), ("image_op", 31, 1))
KCP_FIELDS = (
    ("enable_sgpr_private_segment_buffer", 0, 1), ("enable_sgpr_dispatch_ptr", 1, 1),
    ("enable_sgpr_queue_ptr", 2, 1), ("enable_sgpr_kernarg_segment_ptr", 3, 1),
    ("enable_sgpr_dispatch_id", 4, 1), ("enable_sgpr_flat_scratch_init", 5, 1),
    ("enable_sgpr_private_segment_size", 6, 1), ("enable_wavefront_size32", 10, 1),
    ("uses_dynamic_stack", 11, 1),
)
PRELOAD_FIELDS = (("kernarg_preload_spec_length", 0, 7), ("kernarg_preload_spec_offset", 7, 9))

# User SGPRs in hardware order: (kernel_code_properties field, number of SGPRs).
USER_SGPR_ORDER = (
    ("enable_sgpr_private_segment_buffer", 4), ("enable_sgpr_dispatch_ptr", 2),
    ("enable_sgpr_queue_ptr", 2), ("enable_sgpr_kernarg_segment_ptr", 2),
    ("enable_sgpr_dispatch_id", 2), ("enable_sgpr_flat_scratch_init", 2),
    ("enable_sgpr_private_segment_size", 1),
)


def _bits(value: int, spec) -> dict:
    return {name: (value >> lsb) & ((1 << width) - 1) for name, lsb, width in spec}


@dataclass(frozen=True)
class KernelDescriptor:
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int       # signed, relative to the descriptor's own address
    compute_pgm_rsrc3: int
    compute_pgm_rsrc1: int
    compute_pgm_rsrc2: int
    kernel_code_properties: int
    kernarg_preload: int
    rsrc1: dict
    rsrc2: dict
    rsrc3: dict
    properties: dict
    preload: dict
    reserved_nonzero: bool                   # a reserved byte was set (a sign of a corrupt descriptor)

    @classmethod
    def from_bytes(cls, data: bytes, processor: str = "") -> "KernelDescriptor":
        if len(data) < KD_SIZE:
            raise LoaderError(f"kernel descriptor truncated: {len(data)} of {KD_SIZE} bytes")
        data = bytes(data[:KD_SIZE])
        (lds, priv, kernarg, res0, entry, rsrc3, rsrc1, rsrc2, kcp, preload) = _KD.unpack(data)
        reserved = res0 != 0 or any(data[24:44]) or any(data[60:64])
        if processor.startswith("gfx90a") or processor.startswith("gfx94") or processor.startswith("gfx95") \
                or processor == "gfx9-4-generic":
            rsrc3_fields = _bits(rsrc3, RSRC3_GFX90A_FIELDS)
        elif processor.startswith("gfx1"):
            rsrc3_fields = _bits(rsrc3, RSRC3_GFX10_FIELDS)
        else:
            rsrc3_fields = {}
        return cls(lds, priv, kernarg, entry, rsrc3, rsrc1, rsrc2, kcp, preload,
                   _bits(rsrc1, RSRC1_FIELDS), _bits(rsrc2, RSRC2_FIELDS), rsrc3_fields,
                   _bits(kcp, KCP_FIELDS), _bits(preload, PRELOAD_FIELDS), reserved)

    # -- derived facts -------------------------------------------------------------------------
    @property
    def wavefront_size(self) -> int:
        return 32 if self.properties["enable_wavefront_size32"] else 64

    @property
    def user_sgpr_count(self) -> int:
        return self.rsrc2["user_sgpr_count"]

    def user_sgpr_layout(self) -> list[tuple[str, int, int]]:
        """``[(name, first_sgpr, count)]`` of the enabled user SGPRs in hardware order, then preloads."""
        out, n = [], 0
        for name, count in USER_SGPR_ORDER:
            if self.properties[name]:
                out.append((name[len("enable_sgpr_"):], n, count))
                n += count
        plen = self.preload["kernarg_preload_spec_length"]
        if plen:
            out.append(("kernarg_preload", n, plen))
        return out

    def vgpr_count(self, processor: str) -> int:
        """Allocated VGPRs decoded from the granulated field (docs/code-object.md §5.3)."""
        g = self.rsrc1["granulated_workitem_vgpr_count"] + 1
        if processor.startswith(("gfx90a", "gfx94", "gfx95")):
            return g * 8
        if processor.startswith("gfx1") and self.wavefront_size == 32:
            return g * 8
        return g * 4

    def sgpr_count(self, processor: str) -> int:
        """Allocated SGPRs (GFX6-9: granulated field rounded to 16; GFX10+: the full file of 106)."""
        if processor.startswith("gfx1"):
            return 106
        return 16 * ((self.rsrc1["granulated_wavefront_sgpr_count"] * 8 + 8 + 15) // 16)

    def accum_offset(self) -> int | None:
        """First AGPR index in the unified register file on gfx90a/gfx94x (rsrc3 ACCUM_OFFSET)."""
        if "accum_offset" not in self.rsrc3:
            return None
        return (self.rsrc3["accum_offset"] + 1) * 4

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}
