"""tools/hip_faces.py: which HIP functions both faces define, and whether their rules are written once."""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import hip_faces  # noqa: E402


def _tree(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return tmp_path


def test_verdicts_on_a_small_tree(tmp_path):
    root = _tree(tmp_path, {
        "pyhip/hip/__init__.py": "",
        "pyhip/hiprtc/__init__.py": "",
        "pyhip/hip/devices.py": """
            from ..hipapi import devices as api
            from ..errors import HipError
            def hipA(d):
                return api.total_mem(d)
            def hipB(d):
                if d < 0:
                    raise invalid("d")
                return d
            def hipC(d):
                return d
            def hipOnlyPython(d):
                return d
            hipD = face("hipD", api.total_mem, 1)
            hipE = face("hipE", api.other, 1)
        """,
        "pyhip/capi/device.py": """
            from .. import hip as H
            from ..hipapi import devices as api
            from .common import c, export, export_raw
            @export
            def hipA(out, d):
                out[0] = api.total_mem(int(d))
            @export
            def hipB(out, d):
                if int(d) < 0:
                    raise invalid("d")
                out[0] = int(d)
            @export
            def hipC(out, d):
                out[0] = c.check(H.hipC(d))
            @export
            def hipD(out, d):
                out[0] = api.total_mem(d)
            @export
            def hipE(out, d):
                if d < 0:
                    raise invalid("d")
                out[0] = d
            @export_raw("hipOnlyC")
            def only_c(x):
                return x
        """,
    })
    verdicts = {name: verdict for name, verdict, _h, _c in hip_faces.overlap(root)}
    assert verdicts == {"hipA": "shared", "hipB": "twice", "hipC": "delegates", "hipD": "shared", "hipE": "twice"}


def test_both_sides_raising_is_twice_even_with_a_shared_callee(tmp_path):
    root = _tree(tmp_path, {
        "pyhip/hip/m.py": """
            from ..runtime import peer
            def hipP(a, f):
                if f:
                    raise invalid("f")
                peer.enable(a)
        """,
        "pyhip/hiprtc/__init__.py": "",
        "pyhip/capi/m.py": """
            from ..runtime import peer
            from .common import export
            @export
            def hipP(a, f):
                if f:
                    raise invalid("f")
                peer.enable(a)
        """,
    })
    [(name, verdict, h, cb)] = hip_faces.overlap(root)
    assert (name, verdict, h.checks, cb.checks) == ("hipP", "twice", 2, 2)


def test_runs_on_the_repository():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "hip_faces.py"), str(ROOT)],
                         capture_output=True, text=True, check=True).stdout
    summary = [line for line in out.splitlines() if "HIP functions in both faces" in line]
    assert summary, out
    total = int(summary[0].split()[0])
    assert total > 100                  # hipMalloc, hipStreamCreate, hipDeviceGet… are in both faces
    twice = [line for line in out.splitlines() if line.startswith("twice")]
    assert twice == [], "\n".join(twice)          # every HIP rule both faces share is written once (pyhip/hipapi)
    assert summary[0].endswith(" 0 twice")
