"""``pyhip`` command line: ``info``, ``inspect``, ``disasm``, ``exec``, ``run``, ``demo``."""
from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import HipError


def _inspect_data(path: str) -> dict:
    from .loader import load

    binary = load(path)
    out = {"file": path, "kind": binary.kind, "bundles": [], "code_objects": []}
    for entries in binary.bundles:
        out["bundles"].append([{"id": e.entry_id, "offset": e.offset, "size": e.size} for e in entries])
    for ref in binary.code_objects:
        co = ref.code_object.validate()
        d = co.summary()
        if ref.entry_id:
            d["bundle_entry"] = ref.entry_id
        out["code_objects"].append(d)
    return out


def _print_inspect(info: dict) -> None:
    print(f"{info['file']}: {info['kind']}")
    for i, entries in enumerate(info["bundles"]):
        print(f"  bundle {i}: {len(entries)} entries")
        for e in entries:
            print(f"    {e['id']:<48} offset 0x{e['offset']:x} size {e['size']}")
    for co in info["code_objects"]:
        print(f"\ncode object {co['target']} (V{co['version']}, e_flags {co['e_flags']})"
              + (f" from {co['bundle_entry']}" if "bundle_entry" in co else ""))
        for k in co["kernels"]:
            print(f"  kernel {k['demangled']}")
            if k["demangled"] != k["name"]:
                print(f"    name {k['name']}")
            agpr = f" AGPR {k['agpr_count']}" if k.get("agpr_count") is not None else ""
            print(f"    symbol {k['symbol']}  kernarg {k['kernarg_size']} B  LDS {k['group_segment_size']} B  "
                  f"scratch {k['private_segment_size']} B  wave{k['wavefront_size']}  "
                  f"VGPR {k['vgpr_count']} SGPR {k['sgpr_count']}{agpr}  max WG {k['max_flat_workgroup_size']}")
            for a in k["args"]:
                name = f" {a['name']}" if "name" in a else ""
                print(f"      +{a['offset']:<4} {a['size']:>3} B  {a['value_kind']}{name}")
        for g in co["globals"]:
            print(f"  global {g['name']}  offset 0x{g['offset']:x}  size {g['size']}")
        if co["relocations"]:
            print(f"  {len(co['relocations'])} dynamic relocations")


def cmd_inspect(args) -> int:
    info = _inspect_data(args.file)
    if args.json:
        json.dump(info, sys.stdout, indent=1)
        print()
    else:
        _print_inspect(info)
    return 0


def cmd_info(args) -> int:
    from . import __version__
    from .runtime.context import runtime

    print(f"pyhip {__version__}")
    rt = runtime()
    print(f"backend: {rt.backend_kind} (PYHIP_BACKEND=emu|hsa|auto)")
    for d in rt.devices:
        p = d.props
        print(f"device {d.index}: {p.name}  {p.gcnArchName}  {p.multiProcessorCount} CUs  "
              f"{p.totalGlobalMem >> 30} GiB  — {d.backend.describe()}")
    gpus = [d.backend.emulated_gpu for d in rt.devices if d.backend.emulated_gpu is not None]
    if gpus:
        from .emu.native import describe
        print(f"engine: {gpus[0].engine} (PYHIP_ENGINE=native|numpy|diff); native engine: {describe()}")
        print("  RDNA (gfx10/gfx11) dispatches and kernels using an instruction the native engine lacks run whole "
              "on the numpy engine; pyhip.engine_stats() counts them, `pyhip disasm --coverage` lists both engines")
        from .emu.native import cache
        where = cache.directory()
        held = len(list(where.glob("*" + cache.SUFFIX))) if where is not None and where.is_dir() else 0
        print(f"  lowered programs cached across processes in {where} ({held} entries; PYHIP_CACHE_DIR= turns it off)"
              if where is not None else "  lowered programs are not cached across processes (PYHIP_CACHE_DIR is empty)")
    return 0


def cmd_disasm(args) -> int:
    from .emu.isa.cli_disasm import main as disasm_main

    argv = ([args.file] if args.file else []) + (["--kernel", args.kernel] if args.kernel else []) + \
        (["--mcpu", args.mcpu] if args.mcpu else [])
    if args.coverage:
        argv.append("--coverage")
    if args.verbose:
        argv.append("--verbose")
    return disasm_main(argv)


def cmd_demo(args) -> int:
    from .demo import main as demo_main

    return demo_main(args)


def cmd_exec(args) -> int:
    if args.runtime == "amd":
        from .thunk.build import run_amd as run
    else:
        from .capi.shim import run
        from .runtime.hsa import precheck
        err = precheck()
        if err is not None:                 # the program's first HIP call could only fail: say why instead
            print(f"pyhip exec: {err}", file=sys.stderr)
            return 1
    if args.check:                          # (under AMD's runtime: at the thunk's granularity, docs/check.md)
        from .sanitizer.run import checked
        return checked(run, args.program, args.args, args.check, args.check_log)
    try:
        rc = run(args.program, args.args)
    except FileNotFoundError as exc:
        print(f"pyhip exec: {exc}", file=sys.stderr)
        return 127
    return 128 - rc if rc < 0 else rc          # killed by a signal: the shell's 128 + signal number


def cmd_run(args) -> int:
    from .hip_package import run

    if not os.path.isfile(args.script):
        print(f"pyhip run: {args.script}: no such file", file=sys.stderr)
        return 2
    try:
        run(args.script, args.args)
    except SystemExit as exc:               # the script's sys.exit(): its status, as python would report it
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    return 0


def cmd_thunk_path(args) -> int:
    from .thunk import thunk_path

    print(thunk_path())
    return 0


def cmd_shim_path(args) -> int:
    from .capi.shim import shim_path

    print(shim_path())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pyhip", description="HIP runtime in Python with an emulated AMD GPU")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("info", help="version and devices")
    s.set_defaults(fn=cmd_info)
    s = sub.add_parser("inspect", help="bundle entries, code objects, kernels and globals of a file")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(fn=cmd_inspect)
    s = sub.add_parser("disasm", help="disassemble the kernels of a code object")
    s.add_argument("file", nargs="?", help="code object, bundle or binary (optional with --coverage)")
    s.add_argument("--kernel")
    s.add_argument("--mcpu")
    s.add_argument("--coverage", action="store_true",
                   help="per ISA category: mnemonics LLVM 19 decodes vs those the emulator executes")
    s.add_argument("-v", "--verbose", action="store_true", help="with --coverage: list what is not executable")
    s.set_defaults(fn=cmd_disasm)
    s = sub.add_parser("exec", help="run an unmodified hipcc-built program on pyhip's libamdhip64.so.5 "
                                    "(--runtime amd: on AMD's HIP and ROCr over pyhip's libhsakmt)")
    s.add_argument("--runtime", choices=("pyhip", "amd"), default="pyhip",
                   help="pyhip: pyhip's drop-in HIP (default); amd: AMD's libamdhip64 + ROCr on the emulated GPU")
    s.add_argument("--check", metavar="CHECKS",
                   help="run under pyhip's sanitizer: a comma list of memcheck, leaks, synccheck, initcheck (or all); a summary at exit and "
                        "exit status 1 when anything was found (docs/check.md)")
    s.add_argument("--check-log", metavar="FILE", help="with --check: also write every report to FILE (JSON lines)")
    s.add_argument("program")
    s.add_argument("args", nargs=argparse.REMAINDER)
    s.set_defaults(fn=cmd_exec)
    s = sub.add_parser("run", help="run an unmodified hip-python script: `import hip` (`from hip import hip, "
                                   "hiprtc`) resolves to pyhip in that process")
    s.add_argument("script")
    s.add_argument("args", nargs=argparse.REMAINDER)
    s.set_defaults(fn=cmd_run)
    s = sub.add_parser("shim-path", help="print the directory of pyhip's libamdhip64.so.5 (builds it)")
    s.set_defaults(fn=cmd_shim_path)
    s = sub.add_parser("thunk-path", help="print the directory of pyhip's libhsakmt.so.1 (builds it)")
    s.set_defaults(fn=cmd_thunk_path)
    s = sub.add_parser("demo", help="run the demo on the emulated GPU")
    s.set_defaults(fn=cmd_demo)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except HipError as exc:
        print(f"pyhip {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
