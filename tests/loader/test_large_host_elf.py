"""A host library whose ``.hip_fatbin`` holds many bundles followed by a lot of other device code (the shape
of librocsparse.so.0: 111 wrappers into a 1.29 GB section).  Each bundle's extent runs to the section's
end, so loading must not copy it once per wrapper: ``pyhip inspect`` on librocsparse was killed for
memory before (111 copies of up to 1.3 GB).  Built with gcc from assembly, no HIP toolchain needed."""
import subprocess
import sys
import tracemalloc


from conftest import fixture_files, fixture_path, require_tool

from pyhip.loader import load
from pyhip.loader.bundle import build_bundle

N_BUNDLES = 12
TAIL = 32 << 20           # bytes of .hip_fatbin after the last bundle (every bundle's extent spans it)


def _host_lib(tmp_path):
    gcc = require_tool("gcc")
    hsaco = next(e for e in fixture_files("hsaco") if e["code_object_version"] in (4, 5))
    co = fixture_path(hsaco).read_bytes()
    target = hsaco["targets"][0]
    bundles = []
    for i in range(N_BUNDLES):
        b = tmp_path / f"b{i}.bin"
        b.write_bytes(build_bundle([("host-x86_64-unknown-linux--", b""), (f"hipv4-amdgcn-amd-amdhsa--{target}", co)]))
        bundles.append(b)
    asm = ['.section .hip_fatbin,"a",@progbits']
    for i, b in enumerate(bundles):
        asm += [".p2align 12", f"fb{i}:", f'.incbin "{b}"']
    asm += [".p2align 12", f".zero {TAIL}", '.section .hipFatBinSegment,"aw",@progbits', ".p2align 3"]
    for i in range(N_BUNDLES):      # __hip_fatbin_wrapper {magic 'HIPF', version 1, pointer, unused}
        asm += [".long 0x48495046", ".long 1", f".quad fb{i}", ".quad 0"]
    src = tmp_path / "lib.s"
    src.write_text("\n".join(asm) + "\n")
    lib = tmp_path / "libmany.so"
    subprocess.run([gcc, "-shared", "-nostdlib", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib, target, co


def test_many_bundles_in_a_large_fatbin_load_without_copies(tmp_path):
    lib, target, co = _host_lib(tmp_path)
    size = lib.stat().st_size
    assert size > TAIL
    tracemalloc.start()
    try:
        binary = load(str(lib))
        refs = binary.code_objects
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert binary.kind == "host_elf" and len(binary.bundles) == N_BUNDLES
    assert len(refs) == N_BUNDLES and all(r.entry_id.endswith(target) for r in refs)
    assert all(bytes(r._data) == co for r in refs)
    # the file once (+ slack); one copy per wrapper would be N_BUNDLES * TAIL
    assert peak < 2 * size, f"loading peaked at {peak >> 20} MiB for a {size >> 20} MiB file"


def test_inspect_lists_every_bundle(tmp_path):
    lib, target, _ = _host_lib(tmp_path)
    r = subprocess.run([sys.executable, "-m", "pyhip", "inspect", str(lib)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("bundle ") == N_BUNDLES and "no .hip_fatbin" not in r.stderr
