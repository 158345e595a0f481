"""Kernel launches of a function the face has found (a module's hipFunction_t, a registered host function): the
stream resolved, the launch geometry checked, the arguments given either as values (``args``, packed by the
kernel's signature) or as the explicit-argument bytes (``raw``, runtime/kernargs.py reads them from C's
kernelParams / extra). A stream as the runtime takes it (None, hipStreamPerThread or a Stream)."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime.context import runtime

MAX_ITEMS = 0xFFFFFFFF                               # work-items per dimension (grid × block)


def launch(func, stream, grid, block, shared, *, args=None, raw=None, cooperative=False, multi=None,
           cache_key=None):
    """hipLaunchCooperativeKernel, hipModuleLaunchKernel, hipExtLaunchKernel… (``multi``: a multi-device
    cooperative launch's grid numbering). What the kernel's own limits allow is Function.launch's check."""
    st = runtime().resolve_stream(stream)
    grid, block = tuple(int(g) for g in grid), tuple(int(b) for b in block)
    if any(g * b > MAX_ITEMS for g, b in zip(grid, block)) or block[0] * block[1] * block[2] > \
            st.device.props.maxThreadsPerBlock:
        raise HipError(hipError_t.hipErrorInvalidConfiguration, f"grid {grid} block {block}")
    return func.launch(st, grid, block, int(shared), args=args, raw=raw, cooperative=cooperative, multi=multi,
                       cache_key=cache_key)
