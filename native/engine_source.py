"""The native engine's source digest, without cffi: a source checkout's pyhip (pyhip/emu/native) compares its
build with it at import — possibly in an embedded interpreter whose cffi package is not the one its
_cffi_backend came from, where importing cffi fails — and build_engine.py records it with a build."""
import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def source_hash() -> str:
    """A digest of the engine's C sources and its build scripts: a source checkout rebuilds when it changes.
    BLAKE2 is CPython's own code: the first check runs on a queue thread that may still be starting while a C
    program under ``pyhip exec`` exits, after OpenSSL's exit handler freed what its digests need (a SIGSEGV in
    about a third of the short hip-tests launch cases)."""
    h = hashlib.blake2b(digest_size=16)
    for p in sorted((HERE / "engine").iterdir()) + [HERE / "build_engine.py", Path(__file__)]:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
