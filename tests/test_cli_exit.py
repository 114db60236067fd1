"""A command run without the warm worker leaves through ``assay.apps.cli.exit.exit_now``: the interpreter's teardown
is skipped, but nothing an ordinary exit does for other code may be lost (status, buffered output, threads,
threading exit hooks such as Prefect's queue drains, atexit handlers), and it must run in that order."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROGRAM = """
import atexit, sys, threading, time
from assay.apps.cli.exit import exit_now

log = open(sys.argv[1], "a")
def note(what):
    log.write(what + "\\n")
    log.flush()

def worker():
    time.sleep(0.3)
    note("non-daemon thread finished")

threading.Thread(target=worker).start()
threading._register_atexit(lambda: note("threading exit hook"))
atexit.register(lambda: note("atexit handler"))
sys.stdout.write("buffered line without a newline")  # a pipe: block-buffered until flushed
if sys.argv[3] == "exit_now":
    exit_now(int(sys.argv[2]))
sys.exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("status", [0, 3])
def test_exit_now_does_what_an_ordinary_exit_does_for_other_code(tmp_path: Path, status: int) -> None:
    seen = {}
    for how in ("sys.exit", "exit_now"):
        log = tmp_path / f"{how}.log"
        done = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(log), str(status), how],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == status, done.stderr
        assert done.stdout == "buffered line without a newline", how
        seen[how] = log.read_text().splitlines()
    assert seen["exit_now"] == seen["sys.exit"]
    assert sorted(seen["exit_now"]) == ["atexit handler", "non-daemon thread finished", "threading exit hook"]
    assert seen["exit_now"][-1] == "atexit handler"


def test_a_failing_command_keeps_its_status_and_message(tmp_path: Path) -> None:
    """Through the real executable: a usage error is status 2 with typer's message; a missing lab is named."""
    assay = Path(sys.executable).parent / "assay"
    environment = {"ASSAY_WARM_WORKER": "off", "ASSAY_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    usage = subprocess.run([str(assay), "evaluate"], capture_output=True, text=True, env=environment, timeout=120)
    assert usage.returncode == 2 and "Missing option" in usage.stderr
    missing = tmp_path / "missing.json"
    bad = subprocess.run(
        [str(assay), "evaluate", "--lab", str(missing), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert bad.returncode == 2 and f"{missing}: no such file" in bad.stderr, bad.stdout + bad.stderr
