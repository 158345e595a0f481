import pytest

from pathlib import Path

BIN = Path(__file__).resolve().parents[1] / "fixtures" / "bin"

# (file, device index): gfx90a objects run on device 0, gfx942 on device 1 (the runtime's default pair)
CORPUS = {
    "hipcc52-gfx90a": ("hipcc52/{}-gfx90a.hsaco", 0),
    "clang19-gfx90a": ("clang19/{}-gfx90a-v5.hsaco", 0),
    "clang19-gfx942": ("clang19/{}-gfx942-v5.hsaco", 1),
}


@pytest.fixture(params=sorted(CORPUS))
def build(request):
    """A loader for a source's kernels built by one toolchain for one target: build('basic') → Module."""
    import pyhip

    pattern, dev = CORPUS[request.param]

    def load(source: str):
        pyhip.set_device(dev)
        return pyhip.load(BIN / pattern.format(source))
    yield load
    pyhip.set_device(0)
