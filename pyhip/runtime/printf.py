"""Device-side ``printf``: formatting a message the way ROCclr does (``devhcprintf.cpp``) and writing it
where the program's own output goes.

A message is a list of u64 words: a control word (bit 0: stderr), the format string (NUL-terminated,
padded to 8 bytes), then the arguments: one word per integer, double or pointer, strings inline padded to
8 bytes.  Each conversion is formatted by the C library's ``snprintf`` with the argument passed as the
64-bit word (integers), a double or a C string, so length modifiers (``%hhd``, ``%lu``, ``%lld``), flags,
``*`` widths and ``%a`` come out exactly as C prints them.

Where the text goes: :data:`sink` — by default Python's ``sys.stdout``/``sys.stderr`` (``pyhip.hip``
programs); the C ABI switches it to the C library's ``stdout``/``stderr`` streams so device output and the
host program's own ``printf`` stay in order.
"""
from __future__ import annotations

import ctypes
import re
import struct
import sys

_libc = ctypes.CDLL(None)
_snprintf = _libc.snprintf
_snprintf.restype = ctypes.c_int
CONVERSIONS = "diouxXfFeEgGaAcspn"
SPEC = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+)?)?(hh|h|ll|l|j|z|t|L)?([" + CONVERSIONS + "])")


def _c(fmt: bytes, *args) -> bytes:
    n = _snprintf(None, 0, fmt, *args)
    if n < 0:
        return b""
    buf = ctypes.create_string_buffer(n + 1)
    _snprintf(buf, n + 1, fmt, *args)
    return buf.raw[:n]


def _cstring(words: list[int], i: int) -> tuple[bytes, int]:
    """A NUL-terminated string starting at word i; returns (bytes, index of the word after its padding)."""
    raw = b"".join(struct.pack("<Q", w & 0xFFFFFFFFFFFFFFFF) for w in words[i:])
    end = raw.find(b"\0")
    s = raw if end < 0 else raw[:end]
    return s, i + (len(s) + 8) // 8


def format_words(words: list[int]) -> bytes:
    """The printed text of a format string followed by its arguments (ROCclr's ``format``)."""
    fmt, i = _cstring(words, 0)
    out = []
    pos = 0
    while True:
        j = fmt.find(b"%", pos)
        if j < 0:
            out.append(fmt[pos:])
            break
        out.append(fmt[pos:j])
        if fmt[j + 1:j + 2] == b"%":
            out.append(b"%")
            pos = j + 2
            continue
        if i >= len(words):
            break
        m = SPEC.match(fmt.decode("latin-1"), j)
        if m is None:                              # no conversion specifier: undefined, stop like ROCclr
            break
        spec = fmt[j:m.end()]
        pos = m.end()
        stars = spec.count(b"*")
        if len(words) - i < stars + 1:
            break
        extra = [ctypes.c_int(ctypes.c_int32(words[i + k] & 0xFFFFFFFF).value) for k in range(stars)]
        i += stars
        conv = chr(spec[-1])
        w = words[i]
        if conv in "diouxXc":
            out.append(_c(spec, *extra, ctypes.c_uint64(w)))
            i += 1
        elif conv in "fFeEgGaA":
            out.append(_c(spec, *extra, ctypes.c_double(struct.unpack("<d", struct.pack("<Q", w))[0])))
            i += 1
        elif conv == "s":
            s, i = _cstring(words, i)
            out.append(_c(spec, *extra, ctypes.c_char_p(s)))
        elif conv == "p":
            out.append(_c(spec, *extra, ctypes.c_void_p(w or None)))
            i += 1
        else:                                      # %n: the argument is skipped
            i += 1
    return b"".join(out)


def format_message(words: list[int]) -> tuple[int, bytes | None]:
    """(stream 1 = stdout / 2 = stderr, text) of a printf message; text None for an unknown control word."""
    if not words:
        return 1, None
    control = words[0]
    if control & ~1:
        return 1, None
    return (2 if control & 1 else 1), format_words(words[1:])


def _python_sink(stream: int, text: bytes) -> None:
    f = sys.stderr if stream == 2 else sys.stdout
    f.flush()
    f.buffer.write(text) if hasattr(f, "buffer") else f.write(text.decode(errors="replace"))
    f.flush()


sink = _python_sink


def c_stdio_sink(stream: int, text: bytes) -> None:
    """Write through the C library's stdout/stderr FILE streams (the C ABI: same buffer as the program's
    own printf, so the order is the program's)."""
    fp = ctypes.c_void_p.in_dll(_libc, "stderr" if stream == 2 else "stdout")
    _libc.fwrite(ctypes.c_char_p(text), ctypes.c_size_t(1), ctypes.c_size_t(len(text)), fp)


def emit(stream: int, text: bytes | None) -> None:
    if text:
        sink(stream, text)
