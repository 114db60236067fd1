"""``assess``: a re-validation whose baseline shares nothing with the run is "not comparable" and fails, never
a vacuous pass; a comparison with some overlap passes or fails on its merits; old verdicts still load."""

from datetime import UTC, datetime
from typing import Any

from assay.artifacts.revalidation import FOLDER, assess

from assay.models.revalidation import BaselineApproval, RevalidationVerdict
from tests.support.fake_runs import fake_run

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
