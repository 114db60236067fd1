"""The published validity figures (``measured.json``): read per evaluator metric, absent means [], and a bad
file is one clear error naming the file and the field. Files are written here, never the package's."""

import json
from pathlib import Path
from typing import Any

import pytest

from assay.validity.published import published_metrics, published_validity

ENTRY = {
    "set": "begin_dev_wow",
    "source": "BEGIN benchmark (Dziri et al.)",
    "licence": "CC BY 4.0",
    "split": "held-out",
    "n": 430,
    "auc": 0.95,
    "auc_low": 0.93,
    "auc_high": 0.97,
    "best_baseline": "token_precision",
    "best_baseline_auc": 0.947,
}


def measured(**evaluators: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "measured_by": "bench/validity.py",
        "measured_on": "2026-11-24",
        "evaluators": evaluators,
    }


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "measured.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_an_entry_is_read_with_who_measured_it_and_when(tmp_path: Path) -> None:
    second = {**ENTRY, "set": "other", "best_baseline": None, "best_baseline_auc": None}
    path = write(tmp_path, measured(groundedness={"groundedness": [ENTRY, second]}))
    first, other = published_validity("groundedness", "groundedness", path=path)
    assert (first.set, first.n, first.auc, first.auc_low, first.auc_high) == ("begin_dev_wow", 430, 0.95, 0.93, 0.97)
    assert (first.licence, first.best_baseline, first.best_baseline_auc) == ("CC BY 4.0", "token_precision", 0.947)
    assert (first.measured_by, first.measured_on) == ("bench/validity.py", "2026-11-24")
    assert other.best_baseline is None
    assert list(published_metrics("groundedness", path=path)) == ["groundedness"]


def test_absent_file_evaluator_or_metric_is_no_figure(tmp_path: Path) -> None:
    assert published_validity("groundedness", "groundedness", path=tmp_path / "none.json") == []
    path = write(tmp_path, measured(groundedness={"groundedness": [ENTRY]}))
    assert published_validity("toxicity", "toxicity", path=path) == []
    assert published_validity("groundedness", "ungrounded_sentences", path=path) == []


def test_a_rewritten_file_is_read_again(tmp_path: Path) -> None:
    path = write(tmp_path, measured(groundedness={"groundedness": [ENTRY]}))
    assert published_validity("groundedness", "groundedness", path=path)[0].n == 430
    write(tmp_path, measured(groundedness={"groundedness": [{**ENTRY, "n": 1200}]}))
    assert published_validity("groundedness", "groundedness", path=path)[0].n == 1200


def entry(**change: Any) -> dict[str, Any]:
    """A file whose one groundedness entry has ``change`` applied (None removes the field)."""
    changed = {key: value for key, value in {**ENTRY, **change}.items() if value is not None}
    return measured(groundedness={"groundedness": [changed]})


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "not valid JSON"),
        (entry(auc=1.5), "evaluators.groundedness.groundedness[0].auc: Input should be less than or equal to 1"),
        (entry(auc_low=0.96), "auc_low <= auc <= auc_high"),
        (entry(lisence="x"), "groundedness[0].lisence: Extra inputs are not permitted"),
        (entry(n=None), "groundedness[0].n: Field required"),
        ({**measured(), "measured_on": "yesterday"}, "measured_on"),
        ({**measured(), "schema_version": 2}, "schema_version: 2 was written by a newer Assay"),
        (measured(groundedness=[ENTRY]), "evaluators.groundedness"),
    ],
)
def test_a_bad_file_names_the_file_and_the_field(tmp_path: Path, data: Any, expected: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match=r"measured\.json") as error:
        published_validity("groundedness", "groundedness", path=path)
    assert expected in str(error.value)
