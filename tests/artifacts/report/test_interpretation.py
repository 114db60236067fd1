"""interpretation.json and the report built from a tiny real evaluation: verdicts, thresholds, explanations."""

import json
import re
import time
from pathlib import Path

import pytest
from assay.artifacts.report.evaluation_sections import evaluation_sections
from assay.artifacts.report.html import render_report
from assay.artifacts.report.interpretation import build_interpretation, explanation, verdict
from assay.artifacts.report.run_documents import read_folder

from assay.validity.published import published_metrics
from tests.artifacts.report.report_lab import build_run
from tests.validity.test_published import ENTRY, measured


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_run(tmp_path_factory.mktemp("run"))


@pytest.fixture(scope="module")
def report(run_folder: Path) -> tuple[str, dict]:
    return render_report(read_folder(run_folder))


def test_verdicts_follow_direction_and_never_turn_unscored_into_zero() -> None:
    assert verdict(0.8, 0.75, True) == "pass" and verdict(0.7, 0.75, True) == "fail"
    assert verdict(0.8, 0.75, False) == "fail" and verdict(None, 0.75, True) == "unscored"
    assert verdict(0.1, None, True) == "no threshold"


def test_interpretation_lists_cases_metrics_thresholds_and_pii(report: tuple[str, dict]) -> None:
    _, interpretation = report
    assert interpretation["overview"]["run_id"] == "run-report-1"
    assert [e["id"] for e in interpretation["evaluators"]] == ["text_matching", "pii_leakage", "token_count"]
    assert len(interpretation["cases"]) == 6
    leaky = next(c for c in interpretation["cases"] if c["model_key"] == "leaky" and c["test_case_key"] == "tc-2")
    pii = next(e for e in leaky["evaluations"] if e["evaluator"] == "pii_leakage")
    passes = next(m for m in pii["metrics"] if m["key"] == "model_passes")
    assert passes["score"] == 0.0 and passes["verdict"] == "fail"
    assert passes["threshold_source"] == "pii_leakage default"
    assert any(item["label"] == "found in the answer" and "phone" in item["text"] for item in pii["explanation"])
    assert "pii_leakage/model_passes" in leaky["failed_metrics"] and leaky["verdict"] == "fail"
    no_condition = next(c for c in interpretation["cases"] if c["test_case_key"] == "tc-3")
    text = next(e for e in no_condition["evaluations"] if e["evaluator"] == "text_matching")
    assert text["unscored_reason"] and {m["verdict"] for m in text["metrics"]} == {"unscored"}


def test_groundedness_explanation_names_unsupported_sentences() -> None:
    details = {"sentences": [{"sentence": "Fees are 0.", "support": 0.9, "closest_context": "No fee."},
                             {"sentence": "Rates are 9%.", "support": 0.2}, {"sentence": "Ok.", "support": 1.0}],
               "unsupported_figures": ["9%"], "verdict": {"rationale": "made up"},
               "left_out": [{"text": "I hope this helps!", "reason": "courtesy"}],
               "contradicted_by_record": ['delivery = "False"']}  # fmt: skip
    items = explanation(details, 0.75)
    assert items[0] == {"label": "unsupported claim (support 0.2)", "text": "Rates are 9%."}
    assert {"label": "supported claim (support 0.9)", "text": "Fees are 0. ← evidence: No fee."} in items
    assert {"label": "not checked: courtesy", "text": "I hope this helps!"} in items
    assert {"label": "contradicted by record", "text": 'delivery = "False"'} in items
    assert {"label": "unsupported figures", "text": "9%"} in items and {
        "label": "judge rationale",
        "text": "made up",
    } in items
    assert not any(item["text"] == "Ok." for item in items)


def test_html_has_sections_and_renders_fast(report: tuple[str, dict], tmp_path: Path) -> None:
    html, _ = report
    for section in ("summary", "models", "leaderboards", "validity", "problems", "insights", "eval-eye"):
        assert f'<section id="{section}"' in html
    assert 'id="leaderboard-pii_leakage"' in html and 'data-model="leaky"' in html
    folder = build_run(tmp_path / "again", run_id="run-report-2")
    started = time.perf_counter()
    render_report(read_folder(folder))
    assert time.perf_counter() - started < 2.0


def test_evaluator_validity_shows_published_figures_or_says_not_measured(run_folder: Path, tmp_path: Path) -> None:
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(measured(pii_leakage={"model_passes": [ENTRY]})), encoding="utf-8")
    interpretation = build_interpretation(
        read_folder(run_folder), published=lambda evaluator_id: published_metrics(evaluator_id, path=path)
    )
    rows = {row["evaluator_id"]: row for row in interpretation["validity"]["evaluators"]}
    assert [figure["metric"] for figure in rows["pii_leakage"]["figures"]] == ["model_passes"]
    assert "model_passes" not in rows["pii_leakage"]["not_measured"] and rows["pii_leakage"]["not_measured"]
    assert rows["text_matching"]["figures"] == [] and rows["token_count"]["figures"] == []
    (section,) = [s for s in evaluation_sections(interpretation) if s.id == "validity"]
    text = " ".join(re.sub(r"<[^>]+>", " ", str(section.html)).split())
    assert "0.950 [0.930, 0.970]" in text and "begin_dev_wow" in text and "token_precision (0.947)" in text
    assert "Data: BEGIN benchmark (Dziri et al.) (CC BY 4.0)" in text
    assert text.count("not measured against human labels") == 3  # text matching, token count, pii's other metrics
