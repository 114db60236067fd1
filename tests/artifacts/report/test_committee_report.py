"""The MRM report a committee reads: a completed run reads completed, the headline counts each primary metric
against its threshold, and an executive summary with the verdict, the steps, the named decisions, the top
risks and the evaluators' validity opens the report, before the MRM sections and then the evaluation's."""

import re
from pathlib import Path
from typing import Any

import pytest
from assay.artifacts.report.html import render_report

from tests.artifacts.report.committee_run import committee_run
from tests.support.reports import SECTION_ID, report_section, visible_text


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    return render_report(committee_run(tmp_path_factory.mktemp("committee")))


def test_a_completed_run_reads_completed_everywhere(rendered: tuple[str, dict[str, Any]]) -> None:
    html, _ = rendered
    executive = report_section(html, "executive-summary")
    assert '<strong class="run-status">completed</strong> at 2026-11-23T09:30:00Z' in executive
    assert "<td>completed</td>" in report_section(html, "summary")
    assert "completed" in visible_text(report_section(html, "mrm-overview"))
    assert "running" not in visible_text(executive + report_section(html, "summary"))


def test_a_run_still_marked_running_says_so(tmp_path: Path) -> None:
    html, _ = render_report(committee_run(tmp_path, status="running"))
    assert '<strong class="run-status">running</strong>' in report_section(html, "executive-summary")


def test_the_headline_counts_each_primary_metric_against_its_threshold(
    rendered: tuple[str, dict[str, Any]],
) -> None:
    html, interpretation = rendered
    summary = visible_text(report_section(html, "summary"))
    assert "rows failing" not in summary and "failing a threshold" not in summary
    lines = {line["evaluator"]: line for line in interpretation["headline"]}
    for evaluation in interpretation["evaluators"]:
        primary = next(metric for metric in evaluation["metrics"] if metric["primary"])
        verdicts = [
            metric["verdict"]
            for case in interpretation["cases"]
            for scored in case["evaluations"]
            if scored["evaluator"] == evaluation["id"]
            for metric in scored["metrics"]
            if metric["key"] == primary["key"]
        ]
        line = lines[evaluation["id"]]
        assert (line["failing"], line["scored"]) == (
            verdicts.count("fail"),
            verdicts.count("fail") + verdicts.count("pass"),
        )
        side = "below" if primary["higher_is_better"] else "above"
        threshold = f"{primary['threshold']:.2f}" if primary["threshold"] < 100 else f"{primary['threshold']:g}"
        counted = f": {line['failing']} of {line['scored']} {side} {threshold}"
        assert line["text"].lower().endswith(primary["display_name"].lower() + counted)
        assert line["text"] in summary
    shares = [line["failing"] / line["scored"] for line in interpretation["headline"] if line["scored"]]
    assert shares == sorted(shares, reverse=True)  # the worst metric first
    assert "Text matching model passes: " in summary  # a metric named by its evaluator when its name does not say


def test_the_executive_summary_opens_the_report_before_the_mrm_and_evaluation_sections(
    rendered: tuple[str, dict[str, Any]],
) -> None:
    html, _ = rendered
    order = re.findall(SECTION_ID, html)
    assert order[:2] == ["executive-summary", "mrm-overview"]
    assert order.index("mrm-artifacts") < order.index("summary") < order.index("eval-eye")
    first_link = re.search(r'<nav class="report-nav".*?<a href="#([^"]+)"', html, re.S)
    assert first_link and first_link.group(1) == "executive-summary"


def test_the_executive_summary_gives_verdict_steps_named_decisions_risks_and_validity(
    rendered: tuple[str, dict[str, Any]],
) -> None:
    html, interpretation = rendered
    executive = report_section(html, "executive-summary")
    text = visible_text(executive)
    counts = interpretation["problem_counts"]
    verdict = re.search(r'<strong class="verdict">(.*?)</strong>', executive)
    assert verdict and (str(counts["high"]) in verdict.group(1) if counts["high"] else verdict.group(1))
    for step in interpretation["mrm"]["overview"]["steps"]:
        assert step["title"] in text
    # who, which step, when and where from, for every decision; a policy is never called a person
    for who, step, when in (
        ("Ana &lt;em&gt;Lima&lt;/em&gt; via prefect-ui", "topic-modeling", "2026-11-23 10:00"),
        ("Bo Chen via approvals-file", "calibration", "2026-11-23 10:00"),
    ):
        row = re.search(rf'<tr data-step="{step}">(.*?)</tr>', executive, re.S)
        assert row and who in row.group(1) and when in row.group(1)
    assert "<td>topic 1 &#34;cards, fees &lt;b&gt;&#34; excluded</td>" in executive  # named, not counted
    assert "excluded case keys: 1" in executive  # a record made before decisions were kept in words
    assert "reviewers: Ana &lt;em&gt;Lima&lt;/em&gt;, Ana Lima, Bo Chen" in executive
    failing = [line for line in interpretation["headline"] if line["failing"]]
    assert failing and failing[0]["text"] in text
    assert f'href="#leaderboard-{failing[0]["evaluator"]}"' in executive
    assert "flipped" in text and 'href="#mrm-weaknesses"' in executive
    assert 'href="#mrm-validity"' in executive and "evaluators have published validity figures" in text


def test_an_unattended_run_names_the_policy_not_a_person(tmp_path: Path) -> None:
    html, _ = render_report(committee_run(tmp_path, reviewed=False))
    executive = report_section(html, "executive-summary")
    assert executive.count("policy (no reviewer)") == 4 and "reviewers:" not in executive
