"""The packaged groundedness model is what its fitting script makes of the labelled sets in the repository."""

import subprocess
import sys
from pathlib import Path

import pytest

from bench import fit_groundedness
from bench.groundedness_sets import TRAINING_SETS, Row, load_rows

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_fitting_script_reproduces_the_packaged_model_from_signals_it_recomputes_in_part() -> None:
    """The fit from the recorded signals of every training row, and 4 rows of each set computed again (with a
    cold cache, 25 a set cost 85 s of CPU); ``make bench`` computes every row again."""
    done = subprocess.run(
        [sys.executable, "bench/fit_groundedness.py", "--check", "--sample", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "24 rows computed again, 0 differences" in done.stdout
    assert "packaged model reproduced" in done.stdout


def _training_rows() -> list[Row]:
    return [row for row in load_rows() if row.set in TRAINING_SETS]


def test_every_training_row_has_its_recorded_signals_and_label() -> None:
    rows = _training_rows()
    assert fit_groundedness.recorded_signals(rows) == []
    assert sum(row.signals is not None for row in rows) > 2500


def test_a_row_missing_from_the_record_or_relabelled_is_named() -> None:
    rows = _training_rows()
    rows[0].label = 1 - rows[0].label
    extra = Row("made-up-1", TRAINING_SETS[0], "q", ["c"], "a", 1, "")
    problems = fit_groundedness.recorded_signals([*rows, extra])
    assert problems == [f"{rows[0].set}/{rows[0].id}: label differs", f"{extra.set}/made-up-1: not recorded"]


def test_a_recorded_signal_that_the_code_no_longer_computes_is_named() -> None:
    recorded = Row("r1", "q2_wow", "", [], "", 1, "", signals={"hybrid": 0.5, "ordered_overlap": 0.25})
    computed = Row("r1", "q2_wow", "", [], "", 1, "", signals={"hybrid": 0.5, "ordered_overlap": 0.2501})
    assert fit_groundedness.signal_differences([recorded], computed=[computed]) == [
        "q2_wow/r1: ordered_overlap recorded 0.25, computed 0.2501"
    ]
    unscored = Row("r1", "q2_wow", "", [], "", 1, "")
    differences = fit_groundedness.signal_differences([recorded], [unscored])
    assert differences == ["q2_wow/r1: scored or figure verdict differs"]


def test_the_same_rows_are_sampled_on_every_run() -> None:
    rows = _training_rows()
    first = [row.id for row in fit_groundedness.sample_of(rows, 3)]
    assert first == [row.id for row in fit_groundedness.sample_of(list(reversed(rows)), 3)]
    assert len(first) == 3 * len(TRAINING_SETS)
