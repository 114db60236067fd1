"""``assess``: a re-validation whose baseline shares nothing with the run is "not comparable" and fails, never
a vacuous pass; a comparison with some overlap passes or fails on its merits; old verdicts still load. Failed
requests are judged on their own limit (who set it is said), not by --fail-on; the Prefect artifact draws in
the default UI (no HTML entity, tables of four columns at most); a run's own verdict is put in words."""

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from assay.artifacts.failed_requests import failed_requests_limit
from assay.artifacts.gates import check_gates, parse_gates
from assay.artifacts.report.run_documents import RunDocuments
from assay.artifacts.revalidation import FOLDER, assess, recorded_verdict, verdict_words

from assay.models.revalidation import BaselineApproval, RevalidationVerdict
from assay.models.workflow import RUN_DEFAULTS
from tests.support.fake_runs import fake_run, problem

CASES = [f"c{index}" for index in range(6)]
GOOD = {case: 0.9 for case in CASES}
APPROVAL = BaselineApproval(
    name="revalidation", run_id="base", approved_by="Ana Lima", source="person", approved_at=datetime.now(UTC)
)


def _assess(current_scores: dict[str, float | None]) -> tuple[RevalidationVerdict, dict[str, Any], str]:
    baseline = (APPROVAL, fake_run("base", {"rag": GOOD}))
    return assess("revalidation", fake_run("cur", {"rag": current_scores}), baseline=baseline, gates=[],
                  fail_on=None, fail_on_regression=True)  # fmt: skip


def test_nothing_comparable_is_its_own_failing_verdict_with_the_reason() -> None:
    renamed = {f"new-{case}": 0.1 for case in CASES}  # the suite's keys changed: scores are far worse, unpaired
    verdict, documents, markdown = _assess(renamed)
    assert verdict.verdict == "not comparable" and verdict.breached
    assert verdict.reasons == ["not comparable with baseline run base: no test case key is in both runs "
                               "(cases are matched by key)"]  # fmt: skip
    assert verdict.compared is not None and verdict.compared.metrics_compared == 0
    written = documents[f"{FOLDER}/verdict.json"]
    assert (
        written["verdict"] == "not comparable" and written["compared"]["left_out"][0]["reason"] == "no case in common"
    )
    assert markdown.startswith("# Re-validation revalidation: **FAILED: not comparable**")
    assert "## What was compared" in markdown


def test_some_overlap_is_judged_on_its_merits() -> None:
    verdict, _, markdown = _assess({**GOOD, "c5": None, "extra": 0.9})
    assert verdict.verdict == "pass" and not verdict.breached
    assert verdict.compared is not None and (verdict.compared.cases_matched, verdict.compared.cases_compared) == (6, 5)
    assert markdown.startswith("# Re-validation revalidation: **passed**")
    regressed, _, _ = _assess({**GOOD, "c0": 0.1, "c1": 0.1, "c2": 0.1})
    assert regressed.verdict == "fail" and regressed.reasons[0].startswith("regression against baseline run base")
    # the state message names the metric, before -> after, with the interval of the change
    assert " -> " in regressed.reasons[0] and "95% interval [" in regressed.reasons[0], regressed.reasons[0]


def test_without_a_baseline_the_verdict_says_so_and_old_verdicts_load() -> None:
    verdict, _, markdown = assess("revalidation", fake_run("cur", {"rag": GOOD}), baseline=None, gates=[],
                                  fail_on=None, fail_on_regression=True, baseline_note="none approved")  # fmt: skip
    assert verdict.verdict == "no baseline" and not verdict.breached and verdict.compared is None
    assert "**no baseline**" in markdown
    old = verdict.model_dump(mode="json", exclude={"verdict", "compared"}) | {"schema_version": 1, "breached": True}
    assert RevalidationVerdict.model_validate(old).verdict == "fail"
    assert RevalidationVerdict.model_validate({**old, "breached": False}).verdict == "no baseline"


MANY = [f"c{index}" for index in range(40)]
HOST_FAILURE = {"description": "Model 'rag' failed to answer 1 of 40 test cases (first error: HTTP 500 | [x])",
                "severity": "high", "problem_type": "runtime", "problem_code": "AVID / runtime",
                "attributes": {"model_key": "rag", "failures": [{"test_case_key": "c39", "error": "HTTP 500"}]},
                "actions": []}  # fmt: skip


def _week(failed: int, *, problems: list[dict[str, Any]] | None = None) -> RunDocuments:
    """A week of 40 requests to 'rag', the last ``failed`` of them failed (unscored, with their error)."""
    run = fake_run("cur", {"rag": {case: 0.9 if index < 40 - failed else None for index, case in enumerate(MANY)}},
                   problems=problems)  # fmt: skip
    run.documents["summary.json"]["models"][0] |= {"answered": 40 - failed, "host_failures": failed}
    for row in run.documents["groundedness/results.json"]["results"][40 - failed :]:
        row["error"] = "HTTP 500 | upstream [down]"
    return run


def _judged(run: RunDocuments, limit: float | None) -> tuple[RevalidationVerdict, str]:
    baseline = (APPROVAL, fake_run("base", {"rag": dict.fromkeys(MANY, 0.9)}))
    verdict, _, markdown = assess("revalidation", run, baseline=baseline, gates=[], fail_on="high",
                                  fail_on_regression=True, failed_requests=failed_requests_limit(limit))  # fmt: skip
    return verdict, markdown


def test_one_failed_request_out_of_many_passes_on_the_default_limit_not_fail_on_high() -> None:
    week = _week(1, problems=[HOST_FAILURE])  # the problem says "high", as one failure in 20 or fewer would
    verdict, markdown = _judged(week, None)
    assert verdict.verdict == "pass" and verdict.reasons == [], verdict.reasons
    requests = verdict.gates.failed_requests
    assert requests is not None and (requests.failed, requests.requests, requests.passed) == (1, 40, True)
    assert requests.limit.set_by == "default" and requests.limit.max_share == RUN_DEFAULTS.max_failed_requests_share
    assert "1 of 40 requests failed (2.5%); within the limit of 5% (the default)" in requests.reason
    assert verdict.gates.severity is not None and verdict.gates.severity.passed
    assert "(failed requests judged apart)" in verdict.gates.severity.reason
    assert "- Failed requests: 1 of 40 (2.5%); limit 5% (the default) of each model's requests: within" in markdown
    assert "| failed requests <= 5% | rag | 2.5% | pass |" in markdown
    # the same week without a failed-request limit (assay evaluate --fail-on high) still counts it as a problem
    assert not check_gates(week, [], "high").severity.passed  # type: ignore[union-attr]


def test_too_many_failed_requests_fail_on_their_own_parameter_with_the_first_error() -> None:
    verdict, markdown = _judged(_week(3), 0.05)
    assert verdict.verdict == "fail"
    [reason] = verdict.reasons
    assert reason == ("failed requests: rag: 3 of 40 requests failed (7.5%); over the limit of 5% (set by "
                      "max_failed_requests_share) (rag's first error: HTTP 500 | upstream [down])")  # fmt: skip
    assert "- Failed requests: 3 of 40 (7.5%); limit 5% (set by max_failed_requests_share)" in markdown
    assert "upstream \\[down\\]" in markdown and "HTTP 500 \\| upstream" in markdown  # V1-safe, no entity
    assert _judged(_week(3), 0.1)[0].verdict == "pass"  # a looser limit, set by the operator
    with pytest.raises(ValueError, match="max_failed_requests_share: expected a share between 0 and 1"):
        failed_requests_limit(5)


def test_the_verdict_artifact_draws_in_prefects_default_ui_without_entities_or_wide_tables() -> None:
    hostile = "rag|v2 [x](javascript:alert(1)) <b>"
    regressed = {**GOOD, "c0": 0.1, "c1": 0.1, "c2": 0.1}
    baseline = (APPROVAL, fake_run("base", {hostile: GOOD}, problems=[problem("medium", model=hostile)]))
    current = fake_run("cur", {hostile: regressed}, problems=[problem("high", model=hostile)])
    verdict, documents, markdown = assess("revalidation", current, baseline=baseline, gates=parse_gates(
        ["groundedness>=0.9"]), fail_on="high", fail_on_regression=True)  # fmt: skip
    assert verdict.verdict == "fail"
    assert "&#" not in markdown  # V1 shows a numeric entity as it is
    assert re.search(r"(?<!\\)(<b>|\]\()", markdown) is None  # no HTML and no link: each is backslash-escaped
    assert "rag\\|v2 \\[x\\](javascript:alert(1)) \\<b>" in markdown
    tables = [line for line in markdown.splitlines() if line.startswith("|")]
    assert tables, markdown
    for row in tables:  # four columns at most, and a "|" of the run's text cannot add a cell
        assert len(re.split(r"(?<!\\)\|", row)) - 2 <= 4, row
    assert "| **worse** |" in markdown and "95% interval from -" in markdown  # the interval below the table
    assert "- newly fails: c0 (" in markdown
    assert "&#124;" in documents[f"{FOLDER}/comparison.md"]  # the file keeps its GitHub-safe entities


def test_a_runs_own_verdict_in_words_for_the_approver() -> None:
    _, documents, _ = _assess({**GOOD, "c0": 0.1, "c1": 0.1, "c2": 0.1})
    run = RunDocuments(source="memory", documents=documents)
    recorded = recorded_verdict(run)
    assert recorded is not None and recorded.verdict == "fail"
    assert verdict_words(recorded).startswith("FAILED: regression against baseline run base: ")
    _, documents, _ = _assess(GOOD)
    assert verdict_words(recorded_verdict(RunDocuments(source="m", documents=documents))) == (
        "passed: compared with baseline run base, nothing failed")  # fmt: skip
    assert recorded_verdict(fake_run("plain", {"rag": GOOD})) is None
    assert verdict_words(None).startswith("none recorded: not a re-validation run")
