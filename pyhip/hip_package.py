"""hip-python's ``hip`` package as pyhip offers it: the package-level version names (``ROCM_VERSION``,
``ROCM_VERSION_TUPLE``, ``HIP_VERSION_NAME``, ... and their lowercase aliases, with hip-python's encodings
and HIP 5.2's values), the ``hip`` and ``hiprtc`` modules (pyhip.hip, pyhip.hiprtc).

``pyhip run script.py`` runs an unmodified hip-python script with ``import hip`` resolving here, for that
process only (:func:`install` puts this module in ``sys.modules`` as ``hip``).  hip-python's library modules
(hipblas, rccl, hiprand, hipfft, ...) are not offered: importing them fails as on a hip-python built without
them."""
from __future__ import annotations

import os
import runpy
import sys

from . import hip, hiprtc  # noqa: F401  (hip-python's submodules of the same names)

from . import _HIP_PACKAGE_NAMES as VERSION_NAMES  # noqa: E402

globals().update({n: getattr(hip, n) for n in VERSION_NAMES})

ALIASES = {"hip": sys.modules[__name__], "hip.hip": hip, "hip.hiprtc": hiprtc}


def install() -> None:
    """``import hip``, ``from hip import hip, hiprtc``, ``import hip.hiprtc`` resolve to pyhip in this process."""
    for name, module in ALIASES.items():
        found = sys.modules.get(name)
        if found is not None and found is not module:
            raise ImportError(f"{name} is already imported from {getattr(found, '__file__', found)!r}")
        sys.modules[name] = module


def run(script: str, args: list[str]) -> None:
    """Run ``script`` as ``__main__`` with ``sys.argv = [script, *args]`` and its directory first on sys.path, as
    ``python script.py args`` would, with hip-python's imports resolving to pyhip."""
    install()
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
