"""Outputs are written whole or not at all: a command killed while writing leaves the previous files."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.atomic import write_all_atomic, write_atomic
from tests.traces.test_trace_files import T0, export, otlp_span, run_import, write_jsonl


def test_a_failed_write_keeps_the_previous_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out" / "lab.json"
    write_atomic(path, "old\n")
    assert path.read_text() == "old\n" and oct(path.stat().st_mode & 0o777) != oct(0o600)

    def interrupted(_: object, __: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_all_atomic([(path, "new lab\n"), (path.with_name("lab.import.json"), "new report\n")])
    assert path.read_text() == "old\n"
    assert sorted(child.name for child in path.parent.iterdir()) == ["lab.json"]


KILL_DURING_THE_REPORT = textwrap.dedent(
    """
    import os, signal, sys
    import assay.atomic as atomic
    from assay.apps.cli.main import app

    staged = atomic._staged

    def staged_then_killed(path, data):
        if path.name.endswith(".import.json"):  # the lab is on disk, the report half-written: kill -9
            os.kill(os.getpid(), signal.SIGKILL)
        return staged(path, data)

    atomic._staged = staged_then_killed
    app(sys.argv[1:])
    """
)


def one_request(path: Path, trace: int, question: str, answer: str) -> Path:
    span = otlp_span(trace, trace * 10, None, "rag", "CHAIN", T0, T0 + 1, input__value=question, output__value=answer)
    return write_jsonl(path, [export([span])])


def test_an_import_killed_while_writing_keeps_the_previous_lab_and_its_report(tmp_path: Path) -> None:
    run_import(tmp_path, [one_request(tmp_path / "a.jsonl", 1, "Fee?", "5 EUR.")])
    lab, report = tmp_path / "out" / "lab.json", tmp_path / "out" / "lab.import.json"
    before = lab.read_bytes(), report.read_bytes()
    second = one_request(tmp_path / "b.jsonl", 2, "Limit?", "500.")
    killed = subprocess.run(
        [sys.executable, "-c", KILL_DURING_THE_REPORT, "traces", "import", str(second), "--out", str(lab)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (lab.read_bytes(), report.read_bytes()) == before
    assert json.loads(lab.read_text())["rows"][0]["test_case"]["prompt"] == "Fee?"
