/* The native instruction handlers: instructions without a semantics description (memory, LDS, matrix,
 * control and system instructions; every ALU instruction is generated from its description by the compiled
 * engine, pyhip/emu/jit, and has the record "described").  The Python lowering (pyhip/emu/native/lower.py)
 * addresses them by name through pyhip_engine_op_name(); an instruction with no handler makes its kernel run
 * on the numpy engine.  Keep the list sorted. */
#ifndef PYHIP_OPS_H
#define PYHIP_OPS_H

#define OP_LIST(X) \
    X(badpc) \
    X(described) \
    X(ds_addtid) \
    X(ds_append) \
    X(ds_atomic) \
    X(ds_bpermute_b32) \
    X(ds_condxchg32_rtn_b64) \
    X(ds_nop) \
    X(ds_permute_b32) \
    X(ds_read) \
    X(ds_swizzle_b32) \
    X(ds_write) \
    X(ds_wrxchg2) \
    X(image_atomic) \
    X(image_load) \
    X(image_resinfo) \
    X(image_sample) \
    X(image_store) \
    X(s_atomic) \
    X(s_barrier) \
    X(s_branch) \
    X(s_call_b64) \
    X(s_cbranch) \
    X(s_endpgm) \
    X(s_getpc_b64) \
    X(s_getreg_b32) \
    X(s_load) \
    X(s_memtime) \
    X(s_movreld) \
    X(s_movrels) \
    X(s_movrelsd_2) \
    X(s_nop) \
    X(s_sendmsg_rtn) \
    X(s_set_gpr_idx_idx) \
    X(s_set_gpr_idx_mode) \
    X(s_set_gpr_idx_on) \
    X(s_setpc_b64) \
    X(s_setreg_b32) \
    X(s_store) \
    X(s_swappc_b64) \
    X(s_trap) \
    X(v_accvgpr_mov) \
    X(v_mfma) \
    X(v_movrel) \
    X(v_wmma) \
    X(vm_atomic) \
    X(vm_load) \
    X(vm_load_format) \
    X(vm_load_lds) \
    X(vm_store) \
    X(vm_store_format) \

enum Op {
#define OP_ENUM(n) OP_##n,
    OP_LIST(OP_ENUM)
#undef OP_ENUM
    OP_COUNT
};

static const char* const OP_NAMES[] = {
#define OP_STR(n) #n,
    OP_LIST(OP_STR)
#undef OP_STR
};

#endif
