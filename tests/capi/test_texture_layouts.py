"""Every size and field offset of the array/texture/surface structs pyhip.hip and the C ABI share
(pyhip.hip.structs: HIP 5.2's generated layouts, the types hip-python uses) against the installed HIP 5.2
headers, compiled with the host C++ compiler."""
import ctypes
import subprocess

import pytest

import pyhip.hip as hip
from conftest import require_tool
from pyhip.hip import structs
from pyhip.hip._struct_layouts import RECORDS

TEXTURE_STRUCTS = ("hipChannelFormatDesc", "hipArray", "hipMipmappedArray", "hipResourceDesc", "hipTextureDesc",
                   "hipResourceViewDesc", "textureReference", "hipExtent", "hipPos", "hipPitchedPtr",
                   "hipMemcpy3DParms", "HIP_ARRAY_DESCRIPTOR", "HIP_ARRAY3D_DESCRIPTOR", "HIP_RESOURCE_DESC_st",
                   "HIP_TEXTURE_DESC_st", "HIP_RESOURCE_VIEW_DESC_st")


def _fields(cls, prefix="", base=0):
    """(C expression, offset) of every leaf field, unions and nested structs included."""
    out = []
    for name, typ in cls._fields_:
        off = base + getattr(cls, name).offset
        if isinstance(typ, type) and issubclass(typ, (ctypes.Structure, ctypes.Union)):
            out += _fields(typ, f"{prefix}{name}.", off)
        else:
            out.append((prefix + name, off))
    return out


def test_struct_layouts_match_hip_headers(tmp_path):
    lines, expect = [], {}
    for name in TEXTURE_STRUCTS:
        cls = structs.ctypes_type(name)
        lines.append(f'printf("{name} size %zu\\n", sizeof({name}));')
        expect[f"{name} size"] = ctypes.sizeof(cls)
        for expr, off in _fields(cls):
            lines.append(f'printf("{name}.{expr} %zu\\n", offsetof({name}, {expr}));')
            expect[f"{name}.{expr}"] = off
    src = tmp_path / "layout.cpp"
    src.write_text("#include <hip/hip_runtime_api.h>\n#include <cstdio>\n#include <cstddef>\nint main() {\n"
                   + "\n".join(lines) + "\n}\n")
    exe = tmp_path / "layout"
    subprocess.run([require_tool("g++"), "-D__HIP_PLATFORM_AMD__", "-Wno-invalid-offsetof", str(src), "-o", str(exe)],
                   check=True, capture_output=True)
    got = dict(line.rsplit(" ", 1) for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                               check=True).stdout.splitlines())
    assert {k: int(v) for k, v in got.items()} == expect
    assert len(expect) > 90


@pytest.mark.parametrize("name", TEXTURE_STRUCTS)
def test_structs_take_keywords_and_give_their_address(name):
    cls = structs.classes[name]
    assert getattr(hip, name) is cls
    s = cls()
    assert int(s) == ctypes.addressof(s._obj) and s.c_sizeof() == ctypes.sizeof(structs.ctypes_type(name))
    first, ctype = RECORDS[name][2][0][:2]
    if ctype in ("int", "unsigned int", "unsigned long"):
        assert getattr(cls(**{first: 7}), first) == 7
    assert cls.fromObj(int(s))._obj is not s._obj and int(cls.fromObj(int(s))) == int(s)    # a view, not a copy


def test_hip_python_aliases():
    assert hip.HIP_RESOURCE_DESC is hip.HIP_RESOURCE_DESC_st and hip.HIP_TEXTURE_DESC is hip.HIP_TEXTURE_DESC_st
    assert hip.HIP_RESOURCE_VIEW_DESC is hip.HIP_RESOURCE_VIEW_DESC_st
    assert hip.hipArray_t is hip.hipArray_const_t is hip.hipArray
    assert hip.hipMipmappedArray_t is hip.hipMipmappedArray
    assert hip.hipTextureObject_t.__name__ == "__hip_texture" and hip.hipSurfaceObject_t.__name__ == "__hip_surface"
    assert issubclass(hip.hipTextureObject_t, hip.Pointer) and issubclass(hip.hipSurfaceObject_t, hip.Pointer)
