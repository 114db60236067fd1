"""Judge alignment with people: agreement and Cohen's kappa on hand-computed cases, label files (CSV and the
calibration step's JSON), policy labels left out, errors naming the line."""

import json
from pathlib import Path

import pytest

from assay.judges.alignment import HumanLabel, align, load_labels


def _document(evaluator: str, values: dict[str, float | None], needs: list[str] | None = None) -> dict:
    return {
        "evaluator": {
            "id": evaluator,
            "needs": needs or ["llm"],
            "metrics_meta": [{"key": "score", "is_primary": True, "threshold": 0.5, "higher_is_better": True}],
        },
        "results": [{"test_case_key": key, "model_key": "m", "score": value} for key, value in values.items()],
    }


def test_agreement_and_kappa_match_a_hand_computed_case() -> None:
    judge = _document("j", {"a": 0.9, "b": 0.8, "c": 0.1, "d": 0.2, "e": None})
    people = [HumanLabel(key, passes, "Dana") for key, passes in
              [("a", True), ("b", False), ("c", False), ("d", False), ("e", True)]]  # fmt: skip
    (report,) = align([judge], people)
    # judge: pass pass fail fail; people: pass fail fail fail -> 3/4 agree; p_o .75, p_e .5 -> kappa .5
    assert (report.pairs, report.agreement, report.kappa, report.unscored) == (4, 0.75, 0.5, 1)
    assert report.confusion["judge pass / person fail"] == 1 and report.reviewers == ["Dana"]


def test_labels_for_another_evaluator_or_model_do_not_count_and_offline_evaluators_are_skipped() -> None:
    judge = _document("j", {"a": 0.9})
    offline = _document("o", {"a": 0.9}, needs=["embeddings"])
    people = [HumanLabel("a", True, "Dana", evaluator="other"), HumanLabel("a", True, "Dana", model_key="x")]
    (report,) = align([judge, offline], people)
    assert report.pairs == 0 and report.agreement is None


def test_kappa_is_undefined_when_every_verdict_is_one_class() -> None:
    (report,) = align([_document("j", {"a": 0.9, "b": 0.7})], [HumanLabel("a", True, "D"), HumanLabel("b", True, "D")])
    assert report.agreement == 1.0 and report.kappa is None and "undefined" in report.kappa_note


def test_csv_and_calibration_labels_load_and_policy_labels_are_left_out(tmp_path: Path) -> None:
    csv_file = tmp_path / "labels.csv"
    csv_file.write_text("test_case_key,label,reviewer\na,pass,Dana\nb,No,\nc,fail,policy\n")
    labels, from_policy = load_labels(csv_file)
    assert [(label.test_case_key, label.human_passes, label.reviewer) for label in labels] == [
        ("a", True, "Dana"), ("b", False, "unnamed reviewer")
    ]  # fmt: skip
    assert from_policy == 1
    json_file = tmp_path / "labels.json"
    json_file.write_text(json.dumps([
        {"item_id": "sexism/model_passes/m/a", "human_passes": False, "reviewer": "ana"},
        {"item_id": "sexism/model_passes/m/b", "human_passes": True},
    ]))  # fmt: skip
    labels, from_policy = load_labels(json_file)
    assert labels == [HumanLabel("a", False, "ana", "m", "sexism")] and from_policy == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("case,label\na,pass\n", "line 1: the header needs the columns test_case_key and label"),
        ("test_case_key,label\na,maybe\n", "line 2: label 'maybe' is not a verdict"),
        ("test_case_key,label\n,pass\n", "line 2: test_case_key is empty"),
    ],
)
def test_bad_label_files_name_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_labels(path)
