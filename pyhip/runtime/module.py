"""Modules (loaded code objects on one device) and functions (kernels ready to launch)."""
from __future__ import annotations

import threading

from ..errors import HipError, LoaderError, hipError_t
from ..loader import Binary, CodeObject, load
from .kernargs import ArgPacker
from .handle import Handle

MAX_LDS = 65536


class Function(Handle):
    """A kernel of a loaded module: descriptor address on the device plus its argument packer."""

    def __init__(self, module: "Module", kernel):
        self.module = module
        self.kernel = kernel
        self.name = kernel.name
        self.kernel_object = module.program.kernel_object(kernel.name)
        self.packer = ArgPacker(kernel)
        self.handle = id(self)
        self.fast = {}                          # repeat-launch entries (runtime/fastlaunch.py)
        self.hidden_kinds = {a.value_kind for a in kernel.hidden_args}

    def hidden_values(self, stream, grid, block, multi: dict | None = None) -> dict:
        """Hidden arguments the packer cannot derive from the geometry alone: the stream's hostcall buffer
        (device printf, device malloc), the multi-grid sync information (cooperative groups; ``multi`` describes
        this grid's place in a multi-device launch), the device's heap state for device malloc (V5 code)."""
        out = {}
        if "hidden_hostcall_buffer" in self.hidden_kinds:
            out["hidden_hostcall_buffer"] = stream.hostcall_buffer().address
        if "hidden_heap_v1" in self.hidden_kinds:
            out["hidden_heap_v1"] = self.device.heap_state()
        if "hidden_multigrid_sync_arg" in self.hidden_kinds:
            from .cooperative import sync_info

            out["hidden_multigrid_sync_arg"] = sync_info(stream.device, grid, block, **(multi or {}))
        return out

    @property
    def device(self):
        return self.module.device

    def __repr__(self) -> str:
        return f"<Function {self.kernel.demangled} on device {self.device.index}>"

    def check_launch(self, grid, block, shared: int) -> None:
        if any(int(v) <= 0 for v in (*grid, *block)):
            raise HipError(hipError_t.hipErrorInvalidValue, f"grid {tuple(grid)} and block {tuple(block)} must be positive")
        bx, by, bz = block
        props = self.device.props
        if bx * by * bz > props.maxThreadsPerBlock or any(b > m for b, m in zip(block, props.maxThreadsDim)):
            raise HipError(hipError_t.hipErrorInvalidConfiguration,
                           f"block {tuple(block)} exceeds the device limit of {props.maxThreadsPerBlock} work-items")
        if bx * by * bz > self.kernel.max_flat_workgroup_size:
            raise HipError(hipError_t.hipErrorLaunchFailure,
                           f"block of {bx * by * bz} work-items exceeds the kernel's launch bound "
                           f"{self.kernel.max_flat_workgroup_size}")
        if any(g * b > 0xFFFFFFFF for g, b in zip(grid, block)):
            raise HipError(hipError_t.hipErrorInvalidConfiguration, "grid × block exceeds 2^32-1 work-items")
        if shared < 0 or shared + self.kernel.group_segment_fixed_size > MAX_LDS:
            raise HipError(hipError_t.hipErrorInvalidValue,
                           f"{shared} B dynamic + {self.kernel.group_segment_fixed_size} B static LDS exceeds {MAX_LDS} B")

    def launch(self, stream, grid, block, shared: int = 0, args=None, raw=None, items=None,
               cooperative: bool = False, multi: dict | None = None, cache_key=None):
        """``grid`` in blocks; or ``items`` (global work-item sizes, hipExtModuleLaunchKernel), which may
        leave a partial last workgroup per dimension (the V5 hidden remainders say how big).  With a
        ``cache_key``, repeats of this launch may then go through ``self.fast[cache_key]``
        (runtime/fastlaunch.py)."""
        block = tuple(int(b) for b in block)
        extra = {}
        if items is not None:
            items = tuple(int(i) for i in items)
            if any(i <= 0 for i in items) or any(b <= 0 for b in block):
                raise HipError(hipError_t.hipErrorInvalidValue, f"global size {items} / block {block}")
            grid = tuple(-(-i // b) for i, b in zip(items, block))
            extra = {f"hidden_remainder_{ax}": i % b for ax, i, b in zip("xyz", items, block)}
        grid = tuple(int(g) for g in grid)
        self.check_launch(grid, block, shared)
        if cooperative:
            from .cooperative import check_cooperative

            check_cooperative(self, grid, block, shared)
        if stream.capture is not None:            # recorded into the capture's graph, not run
            if raw is None:
                packed = self.packer.pack(list(args or ()), grid, block, dynamic_lds=shared, extra_hidden=extra)
                raw = bytes(packed[:self.packer.explicit_end])
            return stream.capture.record(stream, "kernel", {
                "function": self, "grid": None if items is not None else grid, "block": block, "shared": shared,
                "raw": bytes(raw), "items": items})
        extra.update(self.hidden_values(stream, grid, block, multi))
        if raw is not None:
            kernarg = self.packer.pack_raw(raw, grid, block, dynamic_lds=shared, extra_hidden=extra)
        else:
            kernarg = self.packer.pack(list(args or ()), grid, block, dynamic_lds=shared, extra_hidden=extra)
        if items is None:
            items = tuple(g * b for g, b in zip(grid, block))
        if stream.device is not self.device:
            raise HipError(hipError_t.hipErrorInvalidValue,
                           f"stream belongs to device {stream.device.index}, kernel to device {self.device.index}")
        cmd = stream.launch(self.kernel_object, bytes(kernarg), items, block,
                            self.kernel.group_segment_fixed_size + shared,
                            self.device.private_segment_size(self.kernel), what=self.kernel.demangled)
        if cache_key is not None and not extra and not cooperative:
            from .fastlaunch import prepare
            args = list(args or ())
            old = self.fast.get(cache_key)
            if old is not None and old.covers(args, raw, self.device.launch_generation):
                return cmd
            entry = prepare(self, stream, grid, block, shared, args, raw)
            if entry is not None:
                if len(self.fast) > 64:
                    self.fast.clear()
                self.fast[cache_key] = entry
        return cmd


class Module(Handle):
    """A code object loaded on one device (hipModuleLoad* binds it to the current device)."""

    def __init__(self, device, source, code_object: CodeObject | None = None, host_memory=None):
        self.device = device
        self.host_memory = host_memory          # (allocate(size), free(memory)): managed memory (Runtime.load_module)
        if code_object is None:
            binary = source if isinstance(source, Binary) else load(source)
            code_object = binary.select(device.isa)
        self.code_object = code_object.validate()
        self.program = device.backend.load_program(self.code_object)
        self.managed: dict[str, tuple] = {}     # __managed__ variable -> (managed memory, size)
        if source is not None:                  # hipModuleLoad*: no registration binds managed variables
            self._init_managed()
        self._functions: dict[str, Function] = {}
        self._lock = threading.Lock()
        self.unloaded = False
        self.handle = id(self)

    def function(self, name) -> Function:
        if self.unloaded:
            raise HipError(hipError_t.hipErrorNotFound, "module was unloaded")
        kernel = self.code_object.find_kernel(name)
        with self._lock:
            f = self._functions.get(kernel.name)
            if f is None:
                f = self._functions[kernel.name] = Function(self, kernel)
            return f

    def _init_managed(self) -> None:
        """hip-clang compiles ``__managed__ T x`` to a pointer variable ``x`` and its initial value
        ``x.managed``: give each one managed memory holding the initial value, and point ``x`` at it (what
        ROCclr does for dynamically loaded modules)."""
        import struct

        for g in self.code_object.globals:
            if not g.name.endswith(".managed"):
                continue
            name = g.name[:-len(".managed")]
            init_addr, size = self.program.global_address(g.name), g.size
            if self.host_memory is None:
                raise HipError(hipError_t.hipErrorInvalidValue, f"no managed memory for {name} (Runtime.load_module)")
            mem = self.host_memory[0](max(size, 1))
            mem.array[:size] = memoryview(self.device.backend.read(init_addr, size))
            self.device.backend.write(self.program.global_address(name), struct.pack("<Q", int(mem)))
            self.managed[name] = (mem, size)

    def global_var(self, name) -> tuple[int, int]:
        if isinstance(name, bytes):
            name = name.decode()
        if name in self.managed:
            mem, size = self.managed[name]
            return int(mem), size
        for g in self.code_object.globals:
            if g.name == name:
                return self.program.global_address(name), g.size
        raise HipError(hipError_t.hipErrorNotFound, f"no global variable named {name!r} in the module")

    def unload(self) -> None:
        if self.unloaded:
            return
        self.device.synchronize_quietly()
        self.unloaded = True
        self.device.launch_generation += 1      # no repeat launch of its kernels any more
        self.device.backend.unload_program(self.program)
        for mem, _ in self.managed.values():
            self.host_memory[1](mem)
        self.managed.clear()
