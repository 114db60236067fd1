"""tests/durations.txt is written from a measured run and read back for xdist's order and `make check`."""

from pathlib import Path

from tests.support.durations_file import DURATIONS, heavy_files, render, seconds_per_file

ROOT = Path(__file__).resolve().parents[1]

TEST_LOG = """\
........ [100%]
============================= slowest durations ==============================
40.10s call     tests/browser/test_a.py::test_one
12.00s setup    tests/browser/test_a.py::test_one
9.00s call     tests/test_b.py::test_two[with a space]
0.50s call     tests/test_b.py::test_three
================= 12 passed, 1 skipped in 61.20s (0:01:01) ==================
"""
CPU_LOG = """\
20.00 52.10 tests/browser/test_a.py::test_one gw0 1765000000.0
4.00 9.00 tests/test_b.py::test_two[with a space] gw1 1765000001.0
"""


def test_a_run_is_written_and_read_back() -> None:
    text = render(TEST_LOG, CPU_LOG, "a made-up run")
    assert text.startswith("# Test durations: a made-up run\n# pytest: 12 passed, 1 skipped in 61 s wall.\n")
    assert all(len(line) <= 120 for line in text.splitlines() if line.startswith("#"))
    assert "#      52.1 s wall     20.0 s CPU  tests/browser/test_a.py" in text
    assert "0.50s" not in text  # phases under 1 s are counted in no file's total, and not listed
    assert seconds_per_file(text) == {"tests/browser/test_a.py": 52.1, "tests/test_b.py": 9.0}
    assert heavy_files(text) == {"tests/browser/test_a.py"}


def test_the_committed_file_names_existing_files_and_leaves_the_heavy_ones_to_make_test() -> None:
    durations = DURATIONS.read_text(encoding="utf-8")
    costs = seconds_per_file(durations)
    assert len(costs) > 50
    heavy = heavy_files(durations)
    assert {"tests/server/test_mrm_workflow.py", "tests/browser/test_review_forms.py"} <= heavy
    assert [path for path in costs if not (ROOT / path).is_file()] == []
