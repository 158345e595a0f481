"""Every size and field offset of pyhip's array/texture/surface structs (pyhip.hip.texture_types, used by
pyhip.hip and the C ABI alike) against the installed HIP 5.2 headers, compiled with the host C++ compiler."""
import ctypes
import subprocess

import pytest

from conftest import require_tool
from pyhip.hip import texture_types as TT


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
    for cls in TT.STRUCTS:
        lines.append(f'printf("{cls.__name__} size %zu\\n", sizeof({cls.__name__}));')
        expect[f"{cls.__name__} size"] = ctypes.sizeof(cls)
        for expr, off in _fields(cls):
            lines.append(f'printf("{cls.__name__}.{expr} %zu\\n", offsetof({cls.__name__}, {expr}));')
            expect[f"{cls.__name__}.{expr}"] = off
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


@pytest.mark.parametrize("cls", TT.STRUCTS, ids=lambda c: c.__name__)
def test_structs_take_keywords_and_give_their_address(cls):
    s = cls()
    assert int(s) == ctypes.addressof(s) and s.c_sizeof() == ctypes.sizeof(cls)
    name, typ = cls._fields_[0]
    if typ in (ctypes.c_int, ctypes.c_uint, ctypes.c_size_t):
        assert getattr(cls(**{name: 7}), name) == 7
