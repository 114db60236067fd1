"""``compare_runs``: deltas with bootstrap intervals, case verdict changes, problems by stable key, and the
Markdown/HTML outputs escaping what the runs said."""

from assay.artifacts.comparison import compare_runs, problem_key
from assay.artifacts.comparison_report import comparison_html, comparison_markdown

from assay.models.comparison import Comparison
from tests.support.fake_runs import fake_run, problem

CASES = [f"c{index}" for index in range(8)]
GOOD = {case: 0.9 for case in CASES}
WORSE = {**GOOD, "c0": 0.1, "c1": 0.2, "c2": 0.3, "c3": 0.4}


def test_paired_regression_is_significant_and_names_newly_failing_cases() -> None:
    baseline = fake_run("base", {"rag": GOOD, "keyword": GOOD}, problems=[problem("low")])
    current = fake_run(
        "cur",
        {"rag": {**WORSE, "c7": None}, "keyword": {**GOOD, "c4": 0.91}},
        problems=[problem("low"), problem("high", case="c0")],
    )
    comparison = compare_runs(baseline, current)
    rag = next(d for d in comparison.deltas if d.model_key == "rag")
    assert rag.pairing == "paired" and rag.paired_cases == 7 and rag.current_unscored == 1
    assert rag.ci_high is not None and rag.ci_high < 0 and rag.change == "worse"
    assert abs(rag.delta - -(0.8 + 0.7 + 0.6 + 0.5) / 7) < 1e-9  # mean paired difference over shared cases
    assert (rag.baseline_pass_rate, rag.current_pass_rate) == (1.0, 3 / 7)
    keyword = next(d for d in comparison.deltas if d.model_key == "keyword")
    assert keyword.change == "no significant change" and keyword.ci_low <= 0 <= keyword.ci_high
    changes = {(c.test_case_key, c.change) for c in comparison.case_changes}
    assert changes == {("c0", "newly fails"), ("c1", "newly fails"), ("c2", "newly fails"), ("c3", "newly fails"),
                       ("c7", "newly unscored")}  # fmt: skip
    assert next(c for c in comparison.case_changes if c.test_case_key == "c7").reason == "no context"
    assert [(p.status, p.severity) for p in comparison.problem_changes] == [("new", "high")]
    assert comparison.regressed
    again = compare_runs(baseline, current)  # fixed seed: the same interval every time
    assert again.deltas[0].ci_low == comparison.deltas[0].ci_low


def test_identical_runs_show_no_change_and_different_cases_are_unpaired() -> None:
    same = compare_runs(fake_run("a", {"rag": WORSE}), fake_run("b", {"rag": WORSE}))
    assert not same.regressed and not same.case_changes and not same.problem_changes
    assert [(d.change, d.delta, d.ci_low, d.ci_high) for d in same.deltas] == [("no significant change", 0, 0, 0)]
    other_cases = {f"x{index}": 0.2 for index in range(6)}
    unpaired = compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"rag": other_cases, "new-model": GOOD}))
    delta = unpaired.deltas[0]
    assert delta.pairing == "unpaired" and delta.paired_cases == 0 and delta.change == "worse"
    assert unpaired.unmatched.models_only_in_current == ["new-model"] and not unpaired.case_changes
    assert unpaired.nothing_comparable  # an unpaired delta between different cases compares no case


def test_problems_match_by_key_not_wording() -> None:
    reworded = {**problem("medium"), "description": "said differently"}
    comparison = compare_runs(
        fake_run("a", {"rag": GOOD}, problems=[problem("medium"), problem("high", case="c1")]),
        fake_run("b", {"rag": GOOD}, problems=[reworded]),
    )
    assert [(p.status, p.key) for p in comparison.problem_changes] == [
        ("resolved", "groundedness | accuracy | groundedness | rag | c1")]  # fmt: skip
    assert problem_key(problem("low")) == "groundedness | accuracy | groundedness | rag"


def test_outputs_escape_hostile_text() -> None:
    hostile_model = "<script>alert(1)</script>|x"
    question = "<img src=x onerror=alert(2)> \x1b[31mred\x1b[0m"
    comparison = compare_runs(
        fake_run("a", {hostile_model: GOOD}, questions={"c0": question}),
        fake_run("b", {hostile_model: WORSE}, questions={"c0": question}),
    )
    markdown = comparison_markdown(comparison)
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| newly fails") and "c0" in line)
    assert row.count("|") == 7  # the model key's "|" cannot add a cell
    page = comparison_html(comparison)
    assert "<script>alert(1)" not in page and "<img src=x" not in page and "\x1b" not in page
    assert 'id="deltas"' in page and "plotly" in page and "newly fails" in page


def test_runs_with_no_case_in_common_compare_nothing_and_say_why() -> None:
    other_cases = {f"x{index}": 0.2 for index in range(6)}
    comparison = compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"rag": other_cases}))
    compared = comparison.compared
    assert compared is not None and comparison.nothing_comparable
    assert (compared.metrics_compared, compared.metrics_in_both, compared.cases_matched, compared.cases_compared) == (
        0, 1, 0, 0)  # fmt: skip
    assert [(item.item, item.reason) for item in compared.left_out] == [
        ("rag / groundedness.groundedness", "no case in common")]  # fmt: skip
    assert "no test case key is in both runs" in compared.nothing_comparable_reason
    markdown = comparison_markdown(comparison)
    assert markdown.index("## What was compared") < markdown.index("## Significant changes")
    assert (
        "**Nothing was comparable**" in markdown and "| rag / groundedness.groundedness | no case in common" in markdown
    )
    page = comparison_html(comparison)
    assert page.index('id="compared"') < page.index('id="overview"') and "Nothing was comparable" in page


def test_unscored_on_one_side_and_things_in_one_run_are_left_out_with_reasons() -> None:
    unscored = compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"rag": dict.fromkeys(CASES)}))
    assert unscored.nothing_comparable and unscored.compared is not None
    assert unscored.compared.cases_matched == 8 and unscored.compared.left_out[0].reason == "all unscored"
    assert "unscored in at least one" in unscored.compared.nothing_comparable_reason
    other_metric = compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"rag": GOOD}, metric="faithfulness"))
    assert other_metric.nothing_comparable and other_metric.compared is not None
    assert {(item.item, item.reason, item.detail) for item in other_metric.compared.left_out} == {
        ("groundedness.groundedness", "metric only in one run", "only in the baseline"),
        ("groundedness.faithfulness", "metric only in one run", "only in the current run")}  # fmt: skip
    no_model = compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"keyword": GOOD}))
    assert no_model.nothing_comparable and no_model.compared is not None
    assert "no model key" in no_model.compared.nothing_comparable_reason
    assert {item.reason for item in no_model.compared.left_out} == {"model only in one run"}


def test_partial_overlap_is_compared_and_counted() -> None:
    half = {**{case: 0.9 for case in CASES[:4]}, "c3": None, **{f"x{index}": 0.5 for index in range(4)}}
    comparison = compare_runs(
        fake_run("a", {"rag": GOOD, "old": GOOD}), fake_run("b", {"rag": half, "keyword": GOOD, "fresh": {"z": 1.0}})
    )
    compared = comparison.compared
    assert compared is not None and not comparison.nothing_comparable and not compared.nothing_comparable_reason
    assert (compared.metrics_compared, compared.metrics_in_both, compared.cases_matched, compared.cases_compared) == (
        1, 1, 4, 3)  # fmt: skip
    delta = comparison.deltas[0]
    assert (delta.matched_cases, delta.compared_cases) == (4, 3)
    assert {item.item for item in compared.left_out} == {"model old", "model keyword", "model fresh"}
    summary = "1 of 1 (model, evaluator, metric) in both runs compared case by case; 4 test cases in both runs, 3"
    assert summary in comparison_markdown(comparison)


def test_a_comparison_written_before_schema_2_still_loads() -> None:
    written = compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"rag": GOOD})).model_dump(mode="json")
    written["schema_version"] = 1
    del written["compared"]
    for delta in written["deltas"]:
        del delta["matched_cases"], delta["compared_cases"]
    old = Comparison.model_validate(written)
    assert old.compared is None and not old.nothing_comparable
    assert "written before comparison schema version 2" in comparison_markdown(old)
    assert compare_runs(fake_run("a", {"rag": GOOD}), fake_run("b", {"rag": GOOD})).schema_version == 2
