"""Triton tests (each module skips itself when Triton is not importable): Triton's kernel cache is a fresh
directory per test session, so every run compiles what it launches."""
import os
import shutil
import tempfile

if "TRITON_CACHE_DIR" not in os.environ:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyhip-test-triton-")
    import atexit
    atexit.register(shutil.rmtree, os.environ["TRITON_CACHE_DIR"], True)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
