"""The packaged groundedness model is what its fitting script makes of the labelled sets in the repository."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_fitting_script_reproduces_the_packaged_model() -> None:
    done = subprocess.run(
        [sys.executable, "bench/fit_groundedness.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "packaged model reproduced" in done.stdout
