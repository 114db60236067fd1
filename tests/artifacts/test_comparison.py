"""``compare_runs``: deltas with bootstrap intervals, case verdict changes, problems by stable key, and the
Markdown/HTML outputs escaping what the runs said."""

from artifacts.comparison import compare_runs, problem_key
from artifacts.comparison_report import comparison_html, comparison_markdown
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
