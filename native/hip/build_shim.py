"""cffi embedding build of the drop-in ``libamdhip64.so.5``: the functions pyhip implements are declared
with ``embedding_api`` (native/hip/api/*.h) and implemented in Python (pyhip.capi); a few are C
(FAST_SOURCES: fastlaunch.c and its neighbours); every other 5.2 export is a C stub with the real return type that returns what
STUB_RETURN says (hipErrorNotSupported for hipError_t functions).  The linker version script gives the
exports the hip_4.2 … hip_5.2 version nodes.  The shim is cached per fingerprint: the build inputs and the
interpreter it embeds."""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from build_hiprtc import COMPILE_API as HIPRTC_API  # noqa: E402  (HIP 5.2 exports hiprtc from libamdhip64)

sys.path.pop(0)

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
    return "\n".join([protos[n] for n in python_exports()] + [(API_DIR / "internal.h").read_text(), hand_declared()])


# arrays, array copies, texture/surface objects, texture references (pyhip.capi.textures)
TEXTURE_API = """
hipError_t pyhip_hipMalloc3DArray(void** array, const void* desc, const void* extent, unsigned int flags);
hipError_t hipMallocArray(void** array, const void* desc, size_t width, size_t height, unsigned int flags);
hipError_t hipArrayCreate(void** pHandle, const void* pAllocateArray);
hipError_t hipArray3DCreate(void** array, const void* pAllocateArray);
hipError_t hipArrayDestroy(void* array);
hipError_t hipFreeArray(void* array);
hipError_t hipGetChannelDesc(void* desc, const void* array);
hipError_t pyhip_hipMallocMipmappedArray(void** mipmappedArray, const void* desc, const void* extent,
                                         unsigned int numLevels, unsigned int flags);
hipError_t hipFreeMipmappedArray(void* mipmappedArray);
hipError_t hipGetMipmappedArrayLevel(void** levelArray, const void* mipmappedArray, unsigned int level);
hipError_t hipMipmappedArrayCreate(void** pHandle, void* pMipmappedArrayDesc, unsigned int numMipmapLevels);
hipError_t hipMipmappedArrayDestroy(void* hMipmappedArray);
hipError_t hipMipmappedArrayGetLevel(void** pLevelArray, void* hMipMappedArray, unsigned int level);
hipError_t hipMemcpy2DToArray(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                              size_t width, size_t height, int kind);
hipError_t hipMemcpy2DToArray_spt(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                  size_t width, size_t height, int kind);
hipError_t hipMemcpy2DToArrayAsync(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                   size_t width, size_t height, int kind, void* stream);
hipError_t hipMemcpy2DFromArray(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
                                size_t width, size_t height, int kind);
hipError_t hipMemcpy2DFromArray_spt(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
                                    size_t width, size_t height, int kind);
hipError_t hipMemcpy2DFromArrayAsync(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
                                     size_t width, size_t height, int kind, void* stream);
hipError_t hipMemcpyToArray(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t count, int kind);
hipError_t hipMemcpyFromArray(void* dst, const void* srcArray, size_t wOffset, size_t hOffset, size_t count,
                              int kind);
hipError_t hipMemcpyAtoH(void* dst, void* srcArray, size_t srcOffset, size_t count);
hipError_t hipMemcpyHtoA(void* dstArray, size_t dstOffset, const void* srcHost, size_t count);
hipError_t hipMemcpy3D(const void* p);
hipError_t hipMemcpy3D_spt(const void* p);
hipError_t hipMemcpy3DAsync(const void* p, void* stream);
hipError_t hipCreateTextureObject(void** pTexObject, const void* pResDesc, const void* pTexDesc,
                                  const void* pResViewDesc);
hipError_t hipDestroyTextureObject(void* textureObject);
hipError_t hipGetTextureObjectResourceDesc(void* pResDesc, void* textureObject);
hipError_t hipGetTextureObjectResourceViewDesc(void* pResViewDesc, void* textureObject);
hipError_t hipGetTextureObjectTextureDesc(void* pTexDesc, void* textureObject);
hipError_t hipTexObjectCreate(void** pTexObject, const void* pResDesc, const void* pTexDesc, const void* pResViewDesc);
hipError_t hipTexObjectDestroy(void* texObject);
hipError_t hipTexObjectGetResourceDesc(void* pResDesc, void* texObject);
hipError_t hipTexObjectGetResourceViewDesc(void* pResViewDesc, void* texObject);
hipError_t hipTexObjectGetTextureDesc(void* pTexDesc, void* texObject);
hipError_t _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(void** pSurfObject, const void* pResDesc);
hipError_t _Z23hipDestroySurfaceObjectP13__hip_surface(void* surfaceObject);
void __hipRegisterTexture(void** modules, void* var, char* hostVar, char* deviceVar, int type, int norm, int ext);
void __hipRegisterSurface(void** modules, void* var, char* hostVar, char* deviceVar, int type, int ext);
hipError_t hipBindTexture(size_t* offset, const void* tex, const void* devPtr, const void* desc, size_t size);
hipError_t hipBindTexture2D(size_t* offset, const void* tex, const void* devPtr, const void* desc, size_t width,
                            size_t height, size_t pitch);
hipError_t hipBindTextureToArray(const void* tex, const void* array, const void* desc);
hipError_t hipBindTextureToMipmappedArray(const void* tex, const void* mipmappedArray, const void* desc);
hipError_t hipUnbindTexture(const void* tex);
hipError_t hipGetTextureReference(const void** texref, const void* symbol);
hipError_t hipGetTextureAlignmentOffset(size_t* offset, const void* texref);
hipError_t hipModuleGetTexRef(void** texRef, void* hmod, const char* name);
hipError_t hipTexRefSetArray(void* tex, const void* array, unsigned int flags);
hipError_t hipTexRefSetAddress(size_t* ByteOffset, void* texRef, void* dptr, size_t bytes);
hipError_t hipTexRefSetAddress2D(void* texRef, const void* desc, void* dptr, size_t Pitch);
hipError_t hipTexRefSetAddressMode(void* texRef, int dim, int am);
hipError_t hipTexRefSetFilterMode(void* texRef, int fm);
hipError_t hipTexRefSetFlags(void* texRef, unsigned int Flags);
hipError_t hipTexRefSetFormat(void* texRef, int fmt, int NumPackedComponents);
hipError_t hipTexRefGetAddress(void** dev_ptr, const void* texRef);
hipError_t hipTexRefGetAddressMode(int* pam, const void* texRef, int dim);
hipError_t hipTexRefGetFilterMode(int* pfm, const void* texRef);
hipError_t hipTexRefGetFlags(unsigned int* pFlags, const void* texRef);
hipError_t hipTexRefGetFormat(int* pFormat, int* pNumChannels, const void* texRef);
"""
# in C (textures.c): the entry points that take or return structs by value
TEXTURE_C = {"hipCreateChannelDesc", "hipMalloc3DArray", "hipMallocMipmappedArray"}

# implemented in C (FAST_SOURCES): the native launch path and the thread's last error
C_IMPLEMENTED = {"__gnu_h2f_ieee", "__gnu_f2h_ieee", "hipLaunchKernel", "hipGetLastError", "hipPeekAtLastError", "__hipPushCallConfiguration",
                 "hipDeviceSynchronize", "hipStreamSynchronize", "hipMemcpy", "hipMemset",
                 "hipEventRecord", "hipEventQuery", "hipEventSynchronize", "hipEventElapsedTime", "hipMemcpyAsync", "hipMemsetAsync",
                 "hipMemsetD8", "hipMemsetD16", "hipMemsetD32", "hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async",
                 "__hipPopCallConfiguration", "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv"}
# what Python calls in the shim (FAST_SOURCES)
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
int pyhip_call_config_push(const uint32_t* grid, const uint32_t* block, size_t shared, void* stream);
int pyhip_call_config_pop(uint32_t* grid, uint32_t* block, size_t* shared, void** stream);
void pyhip_sync_set_fns(void* sigwait, void* epoch);
void pyhip_sync_arm(int device, void* stream, void* counter, uint64_t epoch, void* queue, uint64_t* launches);
int pyhip_event_register(void* handle, int device, uint32_t flags, void* signal, uint64_t* state);
uint64_t pyhip_event_hit_count(void);
uint64_t pyhip_sync_hit_count(void);
int pyhip_mem_set(int device, uint64_t lo, uint64_t hi, const uint64_t* spans, size_t n);
int pyhip_mem_insert(int device, uint64_t start, uint64_t end, uint64_t host);
int pyhip_mem_remove(int device, uint64_t start);
uint64_t pyhip_copy_hit_count(void);
"""
SLOW_DECL = ("int pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, "
             "void** args, size_t sharedMemBytes, void* stream);\n"
             "int pyhip_launch_config(uintptr_t function_address, const dim3* numBlocks, const dim3* dimBlocks, "
             "uint32_t sharedMemBytes, void* stream, void** config);\n"
             "int pyhip_slow_hipDeviceSynchronize(void);\nint pyhip_slow_hipStreamSynchronize(void* stream);\n"
             "int pyhip_slow_hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind);\n"
             "int pyhip_slow_hipMemset(void* dst, int value, size_t sizeBytes);\n"
             "int pyhip_slow_hipEventRecord(void* event, void* stream);\nint pyhip_slow_hipEventQuery(void* event);\n"
             "int pyhip_slow_hipEventSynchronize(void* event);\n"
             "int pyhip_slow_hipEventElapsedTime(float* ms, void* start, void* stop);\n"
             "int pyhip_slow_hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream);\n"
             "int pyhip_slow_hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream);\n"
             "int pyhip_slow_hipMemsetD8(void* dst, unsigned char value, size_t count);\n"
             "int pyhip_slow_hipMemsetD16(void* dst, unsigned short value, size_t count);\n"
             "int pyhip_slow_hipMemsetD32(void* dst, int value, size_t count);\n"
             "int pyhip_slow_hipMemsetD8Async(void* dst, unsigned char value, size_t count, void* stream);\n"
             "int pyhip_slow_hipMemsetD16Async(void* dst, unsigned short value, size_t count, void* stream);\n"
             "int pyhip_slow_hipMemsetD32Async(void* dst, int value, size_t count, void* stream);\n")

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


def hand_declared() -> str:
    """Declarations other modules keep by hand: hiprtc (build_hiprtc.py) and textures (TEXTURE_API)."""
    return HIPRTC_API + TEXTURE_API


def implemented_names() -> set[str]:
    import re
    hand = set(re.findall(r"\b(\w+)\s*\(", hand_declared())) - {"void", "dim3"}
    return set(python_exports()) | hand | C_IMPLEMENTED | TEXTURE_C


# A program that calls what pyhip lacks gets the stub's value; with PYHIP_LOG_UNSUPPORTED set (not "0") the
# first call of each such export also says so on stderr, naming it.
UNSUPPORTED_LOG = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void pyhip_unsupported(const char* name, const char* returns, int* once) {
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED)) return;
    const char* e = getenv("PYHIP_LOG_UNSUPPORTED");
    if (e && *e && strcmp(e, "0") != 0)
        fprintf(stderr, "pyhip: %s is not implemented by pyhip's libamdhip64.so.5; it returns %s\n", name, returns);
}"""


def stubs_source() -> str:
    done = implemented_names()
    out = ["/* stubs for the 5.2 exports pyhip does not implement (generated at build; see STUB_RETURN) */",
           UNSUPPORTED_LOG]
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
        log = f'static int once; pyhip_unsupported("{name}", "{stub_return(kind)[2]}", &once);'
        out.append(f"{ctype} {name}() {{ {log} {body} }}")
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


# the native paths, one translation unit in this order (later files use the earlier ones' state)
FAST_SOURCES = ("fastlaunch.c", "fastcopy.c", "fastevents.c", "fastasync.c")


def make_builder() -> cffi.FFI:
    ffibuilder = cffi.FFI()
    ffibuilder.cdef(TYPES + C_API)
    ffibuilder.embedding_api(implemented_decls())
    source = ("#include <stdint.h>\n#include <stddef.h>\n" + TYPES + SLOW_DECL + "".join((HERE / f).read_text() for f in FAST_SOURCES)
              + (HERE / "halfconv.c").read_text() + (HERE / "fork.c").read_text() + (HERE / "textures.c").read_text()
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
    for p in (HERE / "exports.txt", HERE / "prototypes.txt", HERE / "libamdhip64.map", *(HERE / f for f in FAST_SOURCES),
              HERE / "halfconv.c", HERE / "fork.c", HERE / "textures.c", HERE / "build_hiprtc.py",
              HERE / "types.h", Path(__file__), *sorted(API_DIR.glob("*.*"))):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "libamdhip64.so.5"
    make_builder().compile(tmpdir=str(out_dir / "build"), target=str(target))
    return target
