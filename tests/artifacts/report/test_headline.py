"""The headline ranks informative failures first; a metric with the same verdict on nearly every row is named
"not informative on this suite" and is never a top risk."""

from typing import Any

from assay.artifacts.report.executive_summary import _risks
from assay.artifacts.report.headline import informative, primary_metric_headline


def _evaluator(evaluator_id: str, name: str) -> dict[str, Any]:
    metric = {"key": "score", "display_name": name, "primary": True, "threshold": 0.5, "higher_is_better": True}
    return {"id": evaluator_id, "display_name": name, "metrics": [metric]}


def _cases(verdicts: dict[str, list[str]]) -> list[dict[str, Any]]:
    rows = max(map(len, verdicts.values()))
    def evaluations(row: int) -> list[dict[str, Any]]:
        return [
            {"evaluator": evaluator, "metrics": [{"key": "score", "verdict": found[row]}]}
            for evaluator, found in verdicts.items()
            if row < len(found)
        ]

    return [{"evaluations": evaluations(row)} for row in range(rows)]


def test_a_metric_failing_nearly_every_row_is_not_a_top_risk_but_is_still_named() -> None:
    verdicts = {"bleu": ["fail"] * 39 + ["pass"], "groundedness": ["fail"] * 8 + ["pass"] * 32}
    lines = primary_metric_headline(
        [_evaluator("bleu", "BLEU-1"), _evaluator("groundedness", "Groundedness")], _cases(verdicts)
    )
    assert [line["evaluator"] for line in lines] == ["groundedness", "bleu"]  # informative first, though less failing
    assert lines[1]["note"] == "not informative on this suite: fails 98% of rows" and not lines[1]["informative"]
    interpretation = {"headline": lines, "mrm": {"weaknesses": {}, "robustness": {}}}
    assert [risk["text"] for risk in _risks(interpretation)] == ["Groundedness: 8 of 40 below 0.50"]


def test_the_cut_is_more_than_95_percent_either_way() -> None:
    assert informative(95, 100) and informative(5, 100)
    assert not informative(96, 100) and not informative(4, 100) and not informative(0, 0)


def test_a_metric_the_reviewer_marked_not_meaningful_leaves_the_risks() -> None:
    marked = _evaluator("similarity", "Similarity")
    marked["metrics"][0]["in_verdict"] = False
    verdicts = {"similarity": ["fail"] * 20 + ["pass"] * 20, "groundedness": ["fail"] * 8 + ["pass"] * 32}
    lines = primary_metric_headline([marked, _evaluator("groundedness", "Groundedness")], _cases(verdicts))
    assert [line["evaluator"] for line in lines] == ["groundedness", "similarity"]
    assert lines[1]["note"] == "marked not meaningful for this system by the reviewer: left out of the verdict"
    interpretation = {"headline": lines, "mrm": {"weaknesses": {}, "robustness": {}}}
    assert [risk["text"] for risk in _risks(interpretation)] == ["Groundedness: 8 of 40 below 0.50"]
