"""Build glue: the cffi extension modules under native/ (see native/README.md), and copies of the C ABI
sources (native/hip) and of the KFD thunk sources (native/hsakmt) inside the package, so ``pyhip exec`` can
build the drop-in libraries from an installed wheel."""
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HIP_FILES = ("build_shim.py", "build_hiprtc.py", "exports.txt", "prototypes.txt", "libamdhip64.map", "fastlaunch.c",
             "fastcopy.c", "fastevents.c", "fastasync.c", "halfconv.c", "fork.c", "textures.c", "types.h", "api/*", "abi6.c")
THUNK_FILES = ("build_thunk.py", "exports.txt", "libhsakmt.map", "hsakmt_abi.h", "events.c")


class BuildPy(build_py):
    def run(self):
        super().run()
        dest = Path(self.build_lib) / "pyhip" / "capi" / "native"
        dest.mkdir(parents=True, exist_ok=True)
        src = Path(__file__).parent / "native" / "hip"
        for pattern in HIP_FILES:
            for f in src.glob(pattern):
                (dest / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dest / f.relative_to(src))
        dest = Path(self.build_lib) / "pyhip" / "thunk" / "native"
        dest.mkdir(parents=True, exist_ok=True)
        for name in THUNK_FILES:
            shutil.copy2(Path(__file__).parent / "native" / "hsakmt" / name, dest / name)


class BuildExt(build_ext):
    """The native execution engine is optional: if it cannot be compiled (no AVX2-capable compiler for the
    x86-64-v3 build, an unusual platform), the install goes on and pyhip runs kernels on the numpy engine,
    saying so once (pyhip/emu/device.py); ``pyhip info`` names the engine in use."""

    def build_extension(self, ext):
        if not ext.name.startswith("pyhip._native_engine"):
            return super().build_extension(ext)
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - any compiler failure
            print(f"warning: {ext.name} was not built ({exc}); pyhip falls back to its numpy engine",
                  file=sys.stderr)
            return
        if self.inplace:
            # an editable install: record the sources this build came from (pyhip/emu/native checks the
            # digest at import and would otherwise rebuild once, importing cffi where it may not work)
            sys.path.insert(0, str(Path(__file__).parent / "native"))
            try:
                from engine_source import source_hash
            finally:
                sys.path.pop(0)
            (Path(__file__).parent / "pyhip" / "_native_engine.digest").write_text(source_hash())


setup(cffi_modules=["native/build_aql.py:ffibuilder", "native/build_engine.py:ffibuilder",
                    "native/build_engine.py:ffibuilder_v3"],
      cmdclass={"build_py": BuildPy, "build_ext": BuildExt})
