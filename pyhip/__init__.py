"""pyhip: a HIP-compatible runtime in Python with an emulated AMD GPU."""
from .errors import HipError, LoaderError, hipError_t

__version__ = "0.1.0"
__all__ = ["HipError", "LoaderError", "hipError_t", "__version__"]
