"""Build glue: the cffi extension modules under native/ (see native/README.md), and copies of the C ABI
sources (native/hip) and of the KFD thunk sources (native/hsakmt) inside the package, so ``pyhip exec`` can
build the drop-in libraries from an installed wheel."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HIP_FILES = ("build_shim.py", "build_hiprtc.py", "exports.txt", "prototypes.txt", "libamdhip64.map", "fastlaunch.c",
             "halfconv.c", "fork.c", "textures.c", "types.h", "api/*")
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


setup(cffi_modules=["native/build_aql.py:ffibuilder"], cmdclass={"build_py": BuildPy})
