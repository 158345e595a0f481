"""cffi embedding build of the drop-in ``libhiprtc.so.5`` (AMD ships hiprtc as its own library next to
libamdhip64 since ROCm 5.2; SONAME libhiprtc.so.5, exports without version nodes, hipamd's hiprtc.map.in).
It exports ROCm 5.4.3's 18 functions (HIP 5.2's 11 plus the link API and bitcode getters hip-python 5.4.3
wraps); pyhip.capi.rtc implements them in Python.  The first 11 are also exported by libamdhip64.so.5
(build_shim.py), as in HIP 5.2."""
from __future__ import annotations

import re
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent

# hiprtc.h (ROCm 5.4.3; 5.2 has COMPILE_API only).  Handles are pointers; enums are int.
COMPILE_API = """
const char* hiprtcGetErrorString(int result);
int hiprtcVersion(int* major, int* minor);
int hiprtcAddNameExpression(void* prog, const char* name_expression);
int hiprtcCompileProgram(void* prog, int numOptions, const char** options);
int hiprtcCreateProgram(void** prog, const char* src, const char* name, int numHeaders, const char** headers,
                        const char** includeNames);
int hiprtcDestroyProgram(void** prog);
int hiprtcGetLoweredName(void* prog, const char* name_expression, const char** lowered_name);
int hiprtcGetProgramLog(void* prog, char* log);
int hiprtcGetProgramLogSize(void* prog, size_t* logSizeRet);
int hiprtcGetCode(void* prog, char* code);
int hiprtcGetCodeSize(void* prog, size_t* codeSizeRet);
"""
LINK_API = """
int hiprtcGetBitcode(void* prog, char* bitcode);
int hiprtcGetBitcodeSize(void* prog, size_t* bitcode_size);
int hiprtcLinkCreate(unsigned int num_options, int* option_ptr, void** option_vals_pptr, void** hip_link_state_ptr);
int hiprtcLinkAddFile(void* hip_link_state, int input_type, const char* file_path, unsigned int num_options,
                      int* options_ptr, void** option_values);
int hiprtcLinkAddData(void* hip_link_state, int input_type, void* image, size_t image_size, const char* name,
                      unsigned int num_options, int* options_ptr, void** option_values);
int hiprtcLinkComplete(void* hip_link_state, void** bin_out, size_t* size_out);
int hiprtcLinkDestroy(void* hip_link_state);
"""


def names(api: str) -> list[str]:
    return re.findall(r"\b(hiprtc\w+)\s*\(", api)


def make_builder(map_file: Path) -> cffi.FFI:
    map_file.write_text("{\nglobal:\n" + "".join(f"    {n};\n" for n in names(COMPILE_API + LINK_API))
                        + "local:\n    *;\n};\n")
    ffibuilder = cffi.FFI()
    ffibuilder.embedding_api(COMPILE_API + LINK_API)
    ffibuilder.set_source("_pyhip_hiprtc_shim", "#include <stddef.h>\n", extra_compile_args=["-O2"],
                          extra_link_args=[f"-Wl,--version-script={map_file}", "-Wl,-soname,libhiprtc.so.5"])
    ffibuilder.embedding_init_code("from pyhip.capi.rtc import install_library\ninstall_library()\n")
    return ffibuilder


def build(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "libhiprtc.so.5"
    make_builder(out_dir / "libhiprtc.map").compile(tmpdir=str(out_dir / "build"), target=str(target))
    return target
