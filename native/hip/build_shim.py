"""cffi embedding build of the drop-in ``libamdhip64.so.5``: the functions pyhip implements are declared
with ``embedding_api`` (native/hip/api/*.h) and implemented in Python (pyhip.capi); a few are C
(fastlaunch.c); every other 5.2 export is a C stub with the real return type that returns what
STUB_RETURN says (hipErrorNotSupported for hipError_t functions).  The linker version script gives the
exports the hip_4.2 … hip_5.2 version nodes.  The shim is cached per fingerprint: the build inputs and the
interpreter it embeds."""
from __future__ import annotations

import hashlib
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent

TYPES = (HERE / "types.h").read_text()          # HIP 5.2's structs (C layout = the compiler's)

API_DIR = HERE / "api"


def prototypes() -> dict[str, str]:
    """export -> its cffi declaration (native/hip/prototypes.txt, generated from the HIP 5.2 headers)."""
    out = {}
    for line in (HERE / "prototypes.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, _, decl = line.split("\t")
            out[name] = decl
    return out


def python_exports() -> list[str]:
    """The exports pyhip implements in Python: native/hip/api/<area>.txt, one file per pyhip/capi module."""
    names = []
    for p in sorted(API_DIR.glob("*.txt")):
        names += [l.strip() for l in p.read_text().splitlines() if l.strip() and not l.startswith("#")]
    return names


def implemented_decls() -> str:
    """The declarations of what Python implements: each export's prototype plus the shim's internal calls
    (native/hip/api/internal.h)."""
    protos = prototypes()
    missing = [n for n in python_exports() if n not in protos]
    if missing:
        raise ValueError(f"not HIP 5.2 exports: {missing}")
    return "\n".join([protos[n] for n in python_exports()] + [(API_DIR / "internal.h").read_text()])


# implemented in C (fastlaunch.c): the native launch path and the thread's last error
C_IMPLEMENTED = {"__gnu_h2f_ieee", "__gnu_f2h_ieee", "hipLaunchKernel", "hipGetLastError", "hipPeekAtLastError", "__hipPushCallConfiguration",
                 "__hipPopCallConfiguration", "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv"}
# what Python calls in the shim (fastlaunch.c)
C_API = """
typedef struct {
    const void* handle;
    void* stream;
    uint32_t grid[3], block[3];
    uint64_t shared;
    uint32_t nargs;
    uint32_t kernarg_size;
    uint16_t arg_offset[64];
    uint16_t arg_size[64];
    uint8_t kernarg[2048];
    uint8_t packet[64];
    void* queue;
    uint8_t* ring;
    uint64_t slot_size;
    uint64_t queue_mask;
    void* counter;
    uint64_t* launches;
    int device;
} pyhip_fast_entry;
void pyhip_set_last_error(int code);
void pyhip_set_current_device(int device);
void pyhip_fast_set_fns(void* reserve, void* publish, void* sigadd);
int pyhip_fast_register(const pyhip_fast_entry* e);
void pyhip_fast_invalidate(void* stream);
uint64_t pyhip_fast_hit_count(void);
int pyhip_call_config_depth(void);
"""
SLOW_DECL = ("int pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, "
             "void** args, size_t sharedMemBytes, void* stream);\n")

# What an export pyhip does not implement returns, by the ABI class of its return type (exports.txt, from
# the HIP 5.2 headers): (C return type, value, as docs/capi.md states it).  Structs returned by value come
# back zero-filled (all are larger than 16 bytes: returned through the caller's hidden pointer).
STUB_RETURN = {
    "hipError_t": ("int", "801", "hipErrorNotSupported (801)"),
    "hiprtcResult": ("int", "11", "HIPRTC_ERROR_INTERNAL_ERROR (11)"),
    "pointer": ("void*", "0", "NULL"),
    "int": ("int", "0", "0"),
    "size_t": ("size_t", "0", "0"),
    "bool": ("_Bool", "0", "false"),
    "unsigned_short": ("unsigned short", "0", "0"),
    "float": ("float", "0.0f", "0.0"),
    "void": ("void", None, "nothing"),
}


def exports() -> list[tuple[str, str, str]]:
    """(version node, name, return kind) of the 409 exports."""
    rows = []
    for line in (HERE / "exports.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        rows.append(tuple(line.split()))
    return rows


def stub_return(kind: str) -> tuple[str, str | None, str]:
    if kind.startswith("struct:"):
        _, ctype, size = kind.split(":")
        if int(size) <= 16:
            raise ValueError(f"a {size}-byte struct return would need its ABI class: {ctype}")
        return f"struct pyhip_ret{size}", "zero", f"a zero-filled {ctype}"
    return STUB_RETURN[kind]


def implemented_names() -> set[str]:
    return set(python_exports()) | C_IMPLEMENTED


def stubs_source() -> str:
    done = implemented_names()
    out = ["/* stubs for the 5.2 exports pyhip does not implement (generated at build; see STUB_RETURN) */"]
    sizes = set()
    for _, name, kind in exports():
        if name in done:
            continue
        ctype, value, _ = stub_return(kind)
        if ctype.startswith("struct pyhip_ret") and ctype not in sizes:
            sizes.add(ctype)
            out.insert(1, f"{ctype} {{ unsigned char bytes[{ctype[16:]}]; }};")
        body = "" if value is None else f"return {value};"
        if value == "zero":
            body = f"{ctype} r = {{{{0}}}}; return r;"
        out.append(f"{ctype} {name}() {{ {body} }}")
    return "\n".join(out) + "\n"


# The embedded interpreter starts from the Python the shim was built against, which does not know the venv
# `pyhip exec` ran in: the site directories of that interpreter (venv site-packages, editable installs' .pth
# files) come in PYHIP_SITE_DIRS and are added the way site.py adds its own.
INIT_CODE = """
import os, site, sys
for _d in os.environ.get("PYHIP_SITE_DIRS", "").split(os.pathsep):
    if _d and _d not in sys.path:
        site.addsitedir(_d)
from pyhip.capi.impl import install
install()
"""


def make_builder() -> cffi.FFI:
    ffibuilder = cffi.FFI()
    ffibuilder.cdef(TYPES + C_API)
    ffibuilder.embedding_api(implemented_decls())
    source = ("#include <stdint.h>\n#include <stddef.h>\n" + TYPES + SLOW_DECL + (HERE / "fastlaunch.c").read_text()
              + (HERE / "halfconv.c").read_text() + (HERE / "fork.c").read_text()
              + stubs_source())
    ffibuilder.set_source("_pyhip_hip_shim", source,
                          extra_compile_args=["-O2", "-Wno-builtin-declaration-mismatch"],
                          extra_link_args=[f"-Wl,--version-script={HERE / 'libamdhip64.map'}",
                                           "-Wl,-soname,libamdhip64.so.5", "-lpthread"])
    ffibuilder.embedding_init_code(INIT_CODE)
    return ffibuilder


def fingerprint() -> str:
    h = hashlib.sha256()
    import sys

    # the shim embeds this interpreter: a shim built under one Python (version, venv, prefix) is not reused
    # under another
    h.update(f"{sys.executable}|{sys.prefix}|{sys.version}|{cffi.__version__}".encode())
    for p in (HERE / "exports.txt", HERE / "prototypes.txt", HERE / "libamdhip64.map", HERE / "fastlaunch.c",
              HERE / "halfconv.c", HERE / "fork.c",
              HERE / "types.h", Path(__file__), *sorted(API_DIR.glob("*.*"))):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "libamdhip64.so.5"
    make_builder().compile(tmpdir=str(out_dir / "build"), target=str(target))
    return target
