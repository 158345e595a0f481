#!/usr/bin/env python3
"""Generate native/hip/exports.txt, native/hip/prototypes.txt and native/hip/libamdhip64.map from the 5.2
export list (shared/docs/hip-symbol-versions.txt, section A) and the installed HIP 5.2 headers, read with
clang-19's AST dump (every declaration, C++ ones by their mangled names).

exports.txt lines: ``<version node> <name> <return kind>``; return kind is the ABI class of the return value
(hipError_t, hiprtcResult, void, pointer, int, size_t, bool, float, unsigned short, or struct:<C type>:<size>
for a struct returned by value).  prototypes.txt lines: ``<name>\\t<return type>\\t<parameters>\\t<cffi
declaration>``: the first three as the headers spell them, the last as the shim declares what pyhip
implements (handles void*, enums int, structs from native/hip/types.h) (the registration entry points, which no header declares, come from the ABI
document: ../shared/docs/hip-runtime-abi.md).  The output is committed; never edit it by hand.

    python3 tools/gen_hip_exports.py [hip-symbol-versions.txt] [clang]
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADERS = ("hip/hip_runtime_api.h", "hip/hip_ext.h", "hip/hiprtc.h", "hip/amd_detail/hip_runtime_prof.h",
           "hip/amd_detail/amd_hip_runtime.h")
# exports no installed header declares (the compiler-generated registration calls; ../shared/docs/hip-runtime-abi.md §2)
UNDECLARED = {
    "__hipRegisterFatBinary": ("void **", "const void * data"),
    "__hipRegisterFunction": ("void", "void ** modules, const void * hostFunction, char * deviceFunction, "
                              "const char * deviceName, unsigned int threadLimit, void * tid, void * bid, "
                              "dim3 * blockDim, dim3 * gridDim, int * wSize"),
    "__hipRegisterVar": ("void", "void ** modules, void * var, char * hostVar, char * deviceVar, int ext, "
                         "size_t size, int constant, int global"),
    "__hipRegisterManagedVar": ("void", "void * hipModule, void ** pointer, void * init_value, const char * name, "
                                "size_t size, unsigned int align"),
    "__hipRegisterSurface": ("void", "void ** modules, void * var, char * hostVar, char * deviceVar, int type, "
                             "int ext"),
    "__hipRegisterTexture": ("void", "void ** modules, void * var, char * hostVar, char * deviceVar, int type, "
                             "int norm, int ext"),
    "__hipUnregisterFatBinary": ("void", "void ** modules"),
    "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv":
        ("void", "uintptr_t function_address, const dim3 & numBlocks, const dim3 & dimBlocks, "
                 "uint32_t sharedMemBytes, hipStream_t stream, void ** kernarg"),
    "__gnu_h2f_ieee": ("float", "unsigned short h"),
    "__gnu_f2h_ieee": ("unsigned short", "float f"),
}


def export_list(path: Path) -> list[tuple[str, str]]:
    out, node, in_a = [], None, False
    for line in path.read_text().splitlines():
        if line.startswith("## A."):
            in_a = True
            continue
        if line.startswith("## ") and in_a:
            break
        m = re.match(r"\[(hip_[\d.]+)\]", line)
        if m:
            node = m.group(1)
            continue
        if in_a and node and line.strip() and not line.startswith("#"):
            out.append((node, line.split()[0]))
    return out


def declarations(clang: str, names: set[str]) -> tuple[dict, dict, set]:
    """{export: FunctionDecl}, {typedef name: desugared type} and the enum names, from the headers' AST."""
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("".join(f"#include <{h}>\n" for h in HEADERS))
    r = subprocess.run([clang, "-x", "c++", "-std=c++17", "-D__HIP_PLATFORM_AMD__", "-fsyntax-only",
                        "-Xclang", "-ast-dump=json", f.name], capture_output=True, text=True, check=True)
    ast = json.loads(r.stdout)
    found, typedefs, enums = {}, {}, set()

    def walk(n):
        k = n.get("kind")
        if k == "EnumDecl" and n.get("name"):
            enums.add(n["name"])
        if k == "FunctionDecl":
            for key in (n.get("name"), n.get("mangledName")):
                if key in names and key not in found:
                    found[key] = n
        elif k in ("TypedefDecl", "TypeAliasDecl") and n.get("name"):
            t = n["type"]
            typedefs.setdefault(n["name"], t.get("desugaredQualType", t["qualType"]))
        if k in ("TranslationUnitDecl", "LinkageSpecDecl", "NamespaceDecl"):
            for c in n.get("inner", []) or []:
                walk(c)
    walk(ast)
    for name, t in typedefs.items():
        if t.startswith("enum ") or t in enums:
            enums.add(name)
    return found, typedefs, enums


BUILTIN = {"int", "unsigned int", "size_t", "float", "double", "char", "unsigned char", "unsigned short",
           "unsigned long", "unsigned long long", "long", "long long", "uint32_t", "uint64_t", "int64_t",
           "uintptr_t", "bool", "void"}


def cffi_type(t: str, typedefs: dict, enums: set, structs: set) -> str:
    """The type as the shim's cffi declarations spell it: handles void*, enums int, HIP structs by the
    names native/hip/types.h gives them (same layout), references pointers."""
    t = re.sub(r"\b(const|volatile|struct|enum)\b", "", t).replace("&", "*").strip()
    t = re.sub(r"\s+", " ", t).replace(" *", "*")
    stars = len(t) - len(t.rstrip("*"))
    base = t.rstrip("*").strip()
    if base in enums:
        base = "int"
    elif base in typedefs and base not in structs and base not in BUILTIN:
        d = re.sub(r"\b(const|volatile|struct)\b", "", typedefs[base]).strip()
        if "(" in d or d.endswith("*"):
            base, stars = "void", stars + 1             # handles and function pointers
        elif d.startswith("enum ") or d in enums:
            base = "int"
        elif d in BUILTIN:
            base = d
        elif d in structs:
            base = d
        else:
            base = "void" if stars else base
    if base == "bool":
        base = "_Bool"
    if stars and base not in BUILTIN | structs | {"_Bool"}:
        base = "void"                                   # pointers to structs the shim does not read
    if stars >= 2:
        return "void**" if base == "void" or stars > 2 else f"{base}**"
    if not stars and base not in BUILTIN | structs | {"_Bool"}:
        raise SystemExit(f"a {t!r} passed by value needs its struct in native/hip/types.h")
    return base + "*" * stars


def cffi_decl(name: str, ret: str, params: list[str], typedefs, enums, structs) -> str:
    r = {"hipError_t": "hipError_t", "hiprtcResult": "int"}.get(ret) or cffi_type(ret, typedefs, enums, structs)
    args = ", ".join(cffi_type(p, typedefs, enums, structs) for p in params) or "void"
    return f"{r} {name}({args});"


def struct_size(clang: str, ctype: str) -> int:
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("".join(f"#include <{h}>\n" for h in HEADERS) + f"char probe[sizeof({ctype})];\n")
    r = subprocess.run([clang, "-x", "c++", "-std=c++17", "-D__HIP_PLATFORM_AMD__", "-S", "-emit-llvm", "-o", "-",
                        f.name], capture_output=True, text=True, check=True)
    return int(re.search(r"@probe = \S+ \S+ \[(\d+) x i8\]", r.stdout).group(1))


def return_kind(ret: str, typedefs: dict, clang: str) -> str:
    t = re.sub(r"\b(const|volatile)\b", "", ret).strip()
    if t in ("hipError_t", "hiprtcResult"):
        return t
    if "*" in t or "&" in t:
        return "pointer"
    if t in ("void", "int", "float", "bool", "size_t", "unsigned short"):
        return t
    d = typedefs.get(t, t)
    if d.startswith("enum "):
        return "int"
    if d.startswith("struct ") or t in typedefs:
        return f"struct:{t}:{struct_size(clang, t)}"
    raise SystemExit(f"unknown return type {ret!r}")


def main() -> None:
    docs = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared/docs/hip-symbol-versions.txt"
    clang = sys.argv[2] if len(sys.argv) > 2 else "clang-19"
    names = export_list(docs)
    found, typedefs, enums = declarations(clang, {n for _, n in names})
    structs = set(re.findall(r"}\s*(\w+);", (ROOT / "native/hip/types.h").read_text())) | {"dim3"}
    protos = []
    kinds = {}
    for _, name in names:
        if name in found:
            n = found[name]
            ret = n["type"]["qualType"].split("(")[0].strip()
            plist = [p for p in n.get("inner", []) or [] if p.get("kind") == "ParmVarDecl"]
            params = ", ".join(f"{p['type']['qualType']} {p.get('name', '')}".strip() for p in plist)
            ptypes = [p["type"]["qualType"] for p in plist]
        elif name in UNDECLARED:
            ret, params = UNDECLARED[name]
            ptypes = [re.sub(r"\s*\w+$", "", p.strip()) for p in params.split(",")]
        else:
            raise SystemExit(f"no declaration of {name}")
        kinds[name] = return_kind(ret, typedefs, clang)
        decl = cffi_decl(name, ret, ptypes, typedefs, enums, structs)
        protos.append(f"{name}\t{ret}\t{params or 'void'}\t{decl}")
    head = "# generated by tools/gen_hip_exports.py from hip-symbol-versions.txt (section A) and the HIP 5.2 headers"
    (ROOT / "native/hip/exports.txt").write_text(
        "\n".join([head] + [f"{node} {name} {kinds[name].replace(' ', '_')}" for node, name in names]) + "\n")
    (ROOT / "native/hip/prototypes.txt").write_text("\n".join([head] + protos) + "\n")
    nodes = []
    for node, _ in names:
        if node not in nodes:
            nodes.append(node)
    out = ["/* generated by tools/gen_hip_exports.py: the libamdhip64.so.5 version nodes of HIP 5.2 */"]
    for i, node in enumerate(nodes):
        syms = [n for nd, n in names if nd == node]
        body = "\n".join(f"    {s};" for s in syms)
        local = "  local: *;\n" if i == 0 else ""
        parent = f" {nodes[i - 1]}" if i else ""
        out.append(f"{node} {{\n  global:\n{body}\n{local}}}{parent};")
    (ROOT / "native/hip/libamdhip64.map").write_text("\n".join(out) + "\n")
    print(f"{len(names)} exports in {len(nodes)} version nodes")


if __name__ == "__main__":
    main()
