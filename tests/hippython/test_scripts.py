"""hip-python-style scripts (tests/hippython/scripts: each written as for AMD's hip-python with only the import
changed to ``from pyhip import hip, hiprtc``) run unmodified in their own interpreter and check their results
against numpy themselves; each prints ``ok``."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPTS = sorted((HERE / "scripts").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script(script):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_scripts_use_only_the_pyhip_import():
    for s in SCRIPTS:
        text = s.read_text()
        assert "from pyhip import hip" in text and "import pyhip." not in text, s.name
