"""The control room's step summaries, from small hand-made step outputs: the numbers a reviewer reads, who
decided, and tables whose hostile cells (HTML, pipes, line breaks from corpora and systems under test) stay
one escaped cell when the Prefect UI renders them as Markdown."""

import pytest
from assay.artifacts.findings import find_problems
from assay.artifacts.step_summaries import (
    CELL_CHARS,
    StepSummary,
    summarise_calibration,
    summarise_clusters,
    summarise_evaluation,
    summarise_generation,
    summarise_robustness,
    summarise_topics,
    summarise_validation,
    summarise_weaknesses,
)

from assay.models import ModelHost, Test, TestCase, TestLab, TestLabRow, TestSuite
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricAggregate, MetricMeta
from assay.models.findings import Problem
from assay.models.mrm import (
    Calibration,
    CalibrationValidity,
    CaseValidation,
    Decision,
    FailureCluster,
    FailureClusters,
    FlipCount,
    MetricCalibration,
    RobustnessReport,
    SuiteValidation,
    ThresholdAgreement,
    Topic,
    TopicModel,
)
from assay.mrm.weaknesses import detect_weaknesses

HOSTILE = "<script>alert(1)</script> | fee [x](javascript:alert(1))\nsecond line"


def markdown_table(rows: list[dict]) -> str:
    """The table as the UI shows it when every string cell is rendered as Markdown."""
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join([*lines, *("| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows)])


def assert_table_intact(rows: list[dict]) -> None:
    """One line per row, the same number of cell separators on every line, no raw HTML or link syntax."""
    lines = markdown_table(rows).split("\n")
    assert len(lines) == len(rows) + 2
    assert len({line.count("|") for line in lines}) == 1
    text = "\n".join(lines)
    assert "<script" not in text and "](" not in text


def person(step: str, decision: dict, reviewer: str = "Ana Lima") -> Decision:
    return Decision(
        step=step,
        decided_by="person",
        decision=decision,
        reviewer=reviewer,
        source="prefect-ui",
        run_id="run-1",
        decided_at="2026-11-23T10:00:00Z",
    )


def test_topics_show_the_kept_configuration_and_the_reviewers_exclusions_escaped() -> None:
    model = TopicModel(
        topics=[
            Topic(id=0, label=HOSTILE, keywords=["fee", "card|debit"], chunk_refs=["a.md#0", "a.md#1"]),
            Topic(id=1, label="mortgage, rate", keywords=["mortgage", "rate"], chunk_refs=["b.md#0"]),
        ],
        outlier_chunk_refs=["c.md#0"],
        config={"clustering": "kmeans", "kmeans_n_clusters": 2, "corpus_stop_words": ["bank"]},
        silhouette=0.41234,
        grid=[{"clustering": "hdbscan", "silhouette": None, "topics": 1}, {"clustering": "kmeans", "silhouette": 0.41}],
    )
    summary = summarise_topics(model, person("topic-modeling", {"excluded_topic_ids": [1]}))
    assert "2 topics over 4 chunks (1 outlier chunks)" in summary.markdown
    assert "silhouette 0.412 (best of 2 configurations tried)" in summary.markdown
    assert "clustering=kmeans, kmeans_n_clusters=2" in summary.markdown and "stop" not in summary.markdown
    assert "Ana Lima via prefect-ui" in summary.markdown and "excluded 1 topics: mortgage, rate" in summary.markdown
    topics = summary.tables["topics"]
    assert [(row["id"], row["chunks"], row["excluded"]) for row in topics] == [(0, 2, "no"), (1, 1, "yes")]
    assert topics[0]["label"].startswith("&lt;script&gt;alert(1)&lt;/script&gt; &#124; fee &#91;x&#93;")
    assert topics[0]["keywords"] == "fee, card&#124;debit"
    assert [row["silhouette"] for row in summary.tables["grid"]] == ["—", 0.41]
    assert_table_intact(topics)


def test_generated_cases_are_listed_with_long_text_cut_and_hostile_text_escaped() -> None:
    cases = [
        TestCase(key="c1", prompt=HOSTILE, expected_output="£25 a year", topic="cards", generator="numerical"),
        TestCase(key="c2", prompt="Why? " * 100, expected_output="Because.", topic="cards", generator="inference"),
        TestCase(key="c3", prompt="Who can open an ISA?", topic="savings"),
    ]
    suite = TestSuite(name="s", tests=[Test(key="t1", test_cases=cases[:2]), Test(key="t2", test_cases=cases[2:])])
    summary = summarise_generation(suite)
    assert "3 test cases in 2 tests" in summary.markdown
    assert "by generator: inference 1, numerical 1, unknown 1" in summary.markdown
    assert "by topic: cards 2, savings 1" in summary.markdown
    rows = summary.tables["cases"]
    assert list(rows[0]) == ["key", "topic", "generator", "question", "expected answer"]
    assert [row["key"] for row in rows] == ["c1", "c2", "c3"]
    assert rows[0]["expected answer"] == "£25 a year"
    assert len(rows[1]["question"]) == CELL_CHARS and rows[1]["question"].endswith("…")
    assert "<br>" not in rows[0]["question"] and "second line" in rows[0]["question"]
    assert_table_intact(rows)


def test_validation_lists_every_measure_and_what_the_reviewer_excluded() -> None:
    validation = SuiteValidation(
        cases=[
            CaseValidation(test_case_key="c1", cosine=0.81234, bertscore_f1=0.9, nli_entailment=None),
            CaseValidation(
                test_case_key="c2", cosine=0.1, outlier=True, reasons=["cosine 0.10 below 0.35", "bertscore 0.2 low"]
            ),
            CaseValidation(test_case_key="c3", cosine=None, outlier=True, reasons=["cosine not computable"]),
        ],
        nli_status="no NLI model configured",
        thresholds={"cosine": 0.35},
    )
    suite = TestSuite(name="s", tests=[Test(key="t", test_cases=[TestCase(key="c2", prompt=HOSTILE)])])
    decision = person("test-validation", {"excluded_case_keys": ["c2", "c1"]}, reviewer="Bo")
    summary = summarise_validation(validation, decision, suite)
    assert "3 cases checked, 2 flagged as outliers (bertscore 1, cosine 2)" in summary.markdown
    assert "NLI: no NLI model configured" in summary.markdown and "cosine 0.350" in summary.markdown
    assert "Bo via prefect-ui" in summary.markdown
    assert "excluded 2 cases (1 of the 2 flagged, 1 others)" in summary.markdown
    rows = summary.tables["cases"]
    assert rows[0] == {
        "key": "c1",
        "question": "",
        "cosine": 0.812,
        "bertscore f1": 0.9,
        "nli entailment": "—",
        "outlier": "no",
        "reasons": "",
    }
    assert rows[1]["outlier"] == "yes" and rows[1]["reasons"] == "cosine 0.10 below 0.35, bertscore 0.2 low"
    assert rows[1]["question"].startswith("&lt;script&gt;")
    assert rows[2]["cosine"] == "—"
    assert_table_intact(rows)
    assert "question" not in summarise_validation(validation).tables["cases"][0]


def evaluation() -> tuple[TestLab, EvaluationResult]:
    cases = [TestCase(key=key, prompt=f"question {key}") for key in ("a", "b", "c")]
    lab = TestLab(
        name="lab",
        models=[ModelHost(key="rag", type="t", name=HOSTILE), ModelHost(key="llm", type="t", name="Plain LLM")],
        rows=[TestLabRow(test_case=case, model_key="rag", actual_output="x") for case in cases]
        + [TestLabRow(test_case=case, model_key="llm", actual_output="x") for case in cases[:2]]
        + [TestLabRow(test_case=cases[2], model_key="llm", error="timeout")],
    )
    result = EvaluationResult(
        evaluator=EvaluatorSpec(
            id="similarity",
            display_name="Similarity",
            description="d",
            domain="generation",
            required_inputs=["actual_output"],
            metrics=[MetricMeta(key="score", display_name="S", description="d", threshold=0.5, is_primary=True)],
        ),
        rows=[
            CaseScores(test_case_key="a", model_key="rag", scores={"score": 0.9}),
            CaseScores(test_case_key="b", model_key="rag", scores={"score": 0.8}),
            CaseScores(test_case_key="c", model_key="rag", scores={"score": 0.1}),
            CaseScores(test_case_key="a", model_key="llm", scores={"score": 0.2}),
            CaseScores(test_case_key="b", model_key="llm", scores={"score": 0.6}),
            CaseScores(test_case_key="c", model_key="llm", unscored_reason="host failed"),
        ],
        aggregates={
            "rag": {"score": MetricAggregate(mean=0.6, scored=3, unscored=0, passed=2)},
            "llm": {"score": MetricAggregate(mean=0.4, scored=2, unscored=1, passed=1)},
        },
    )
    return lab, result


def test_evaluation_leaderboard_ranks_models_with_pass_rate_and_unscored() -> None:
    lab, result = evaluation()
    problems = [
        Problem(description=HOSTILE, severity="low", problem_type="accuracy", problem_code="AVID"),
        Problem(description="host down", severity="high", problem_type="runtime", problem_code="AVID"),
        Problem(description="slow", severity="high", problem_type="runtime", problem_code="AVID"),
    ]
    summary = summarise_evaluation(lab, [result], problems)
    assert "2 models x 3 cases: 5 of 6 answered (1 host errors)" in summary.markdown
    assert "problems by severity: high 2, medium 0, low 1" in summary.markdown
    board = summary.tables["leaderboard"]
    assert [(row["rank"], row["mean"], row["pass rate"], row["scored"], row["unscored"]) for row in board] == [
        (1, 0.6, 0.667, 3, 0),
        (2, 0.4, 0.5, 2, 1),
    ]
    assert board[0]["model"].startswith("&lt;script&gt;") and board[1]["model"] == "Plain LLM"
    assert [row["severity"] for row in summary.tables["problems"]] == ["high", "high", "low"]
    assert_table_intact(board)
    assert_table_intact(summary.tables["problems"])


def test_evaluation_finds_the_problems_itself_when_not_given_them() -> None:
    lab, result = evaluation()
    found = find_problems(lab, [result])
    assert found, "the fixture's host error and low scores should give problems"
    summary = summarise_evaluation(lab, [result])
    assert len(summary.tables["problems"]) == len(found)
    high = sum(problem.severity == "high" for problem in found)
    assert f"problems by severity: high {high}," in summary.markdown


CALIBRATION = Calibration(
    metrics=[
        MetricCalibration(
            evaluator_id="similarity",
            metric="score",
            higher_is_better=True,
            default_threshold=0.5,
            calibrated_threshold=0.6123,
            interval=(0.55, 0.68),
            labels=8,
            agreement_before=0.625,
            agreement_after=0.875,
            stable=True,
        ),
        MetricCalibration(
            evaluator_id="latency_free",
            metric="toxicity",
            higher_is_better=False,
            default_threshold=0.3,
            calibrated_threshold=None,
            labels=2,
            agreement_before=None,
            agreement_after=None,
            stable=False,
        ),
    ],
    rounds=2,
    decided_by="person",
    human_passed_failures=["rag:c"],
)


def test_calibration_shows_default_and_calibrated_thresholds_and_who_labelled() -> None:
    summary = summarise_calibration(CALIBRATION, person("calibration", {"passed_item_ids": ["x"]}))
    assert "1 of 2 metrics calibrated from 10 labels in 2 rounds" in summary.markdown
    assert "labelled by Ana Lima via prefect-ui at 2026-11-23T10:00:00Z" in summary.markdown
    assert "1 answers failed by a metric were passed by the reviewer" in summary.markdown
    first, second = summary.tables["thresholds"]
    assert (first["default threshold"], first["calibrated threshold"], first["labels"]) == (0.5, 0.612, 8)
    assert (first["agreement before"], first["agreement after"], first["interval"]) == (0.625, 0.875, "0.550 – 0.680")
    assert first["labelled by"].startswith("Ana Lima")
    assert (second["default threshold"], second["calibrated threshold"], second["better"]) == (0.3, "—", "lower")
    assert (second["agreement before"], second["interval"], second["stable"]) == ("—", "—", "no")


def test_several_review_pages_name_each_reviewer_once() -> None:
    pages = [
        person("calibration", {}, reviewer="Ana"),
        person("calibration", {}, reviewer="Bo"),
        person("calibration", {}, reviewer="Ana"),
    ]
    assert "labelled by Ana via prefect-ui; Bo via prefect-ui\n" in summarise_calibration(CALIBRATION, pages).markdown
    assert "labelled by no reviewer (no decision recorded)" in summarise_calibration(CALIBRATION, []).markdown
    single = summarise_calibration(CALIBRATION, pages[:1]).markdown
    assert "labelled by Ana via prefect-ui at 2026-11-23T10:00:00Z" in single


def _agreement(threshold: float, accuracy: float, low: float, high: float) -> ThresholdAgreement:
    return ThresholdAgreement(threshold=threshold, accuracy=accuracy, accuracy_low=low, accuracy_high=high)


def test_calibration_shows_each_metrics_agreement_with_the_reviewers_labels() -> None:
    """Per metric one line: AUC [95%], accuracy before -> after [95%] (in-sample when refitted), n, whose labels;
    one-class labels have no AUC, an unlabelled metric says so, names from the approvals file are escaped."""
    similarity, toxicity = CALIBRATION.metrics
    figures = {
        "n": 8,
        "acceptable": 5,
        "auc": 0.8667,
        "auc_low": 0.6,
        "auc_high": 1.0,
        "before": _agreement(0.5, 0.625, 0.25, 0.875),
        "after": _agreement(0.6123, 0.875, 0.625, 1.0),
        "refitted": True,
        "labelled_by": ["Ana Lima", "<b>Eve</b>"],
    }
    one_class = {**figures, "n": 4, "acceptable": 4, "auc": None, "auc_low": None, "auc_high": None,
                 "after": figures["before"], "refitted": False, "labelled_by": ["Ana Lima"]}  # fmt: skip
    unlabelled = MetricCalibration(**{**toxicity.model_dump(), "evaluator_id": "rouge", "metric": "rouge_l"})
    labelled = CALIBRATION.model_copy(
        update={
            "metrics": [
                similarity.model_copy(update={"validity": CalibrationValidity(**figures)}),
                toxicity.model_copy(update={"validity": CalibrationValidity(**one_class)}),
                unlabelled,
            ]
        }
    )
    lines = summarise_calibration(labelled, person("calibration", {})).markdown.split("\n")
    assert (
        "- similarity / score: AUC 0.867 [0.600, 1.000]; accuracy 0.625 [0.250, 0.875] -> 0.875 [0.625, 1.000] "
        "(in-sample); n 8 (5 acceptable); labels by Ana Lima, &lt;b&gt;Eve&lt;/b&gt;" in lines
    )
    assert (
        "- latency_free / toxicity: AUC not computable (one class of labels); accuracy 0.625 [0.250, 0.875] -> "
        "0.625 [0.250, 0.875]; n 4 (4 acceptable); labels by Ana Lima" in lines
    )
    assert "- rouge / rouge_l: not labelled" in lines
    unreviewed = summarise_calibration(CALIBRATION.model_copy(update={"decided_by": "no reviewer"}), None).markdown
    assert "- agreement with people: not measured (no reviewer labelled answers)\n" in unreviewed
    assert "AUC" not in unreviewed


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        (None, "no reviewer (no decision recorded)"),
        (Decision(step="calibration", decided_by="policy", decision={}), "no reviewer (policy)"),
        (
            Decision(step="calibration", decided_by="person", decision={}, reviewer="", source="approvals-file"),
            "an unnamed reviewer via approvals-file",
        ),
        (
            Decision(step="calibration", decided_by="person", decision={}, reviewer="<b>Eve</b> | [x](y)"),
            "&lt;b&gt;Eve&lt;/b&gt; &#124; &#91;x&#93;(y) via unknown",
        ),
    ],
)
def test_who_labelled_is_a_person_with_a_source_or_no_reviewer(decision: Decision | None, expected: str) -> None:
    summary = summarise_calibration(CALIBRATION, decision)
    assert f"labelled by {expected}" in summary.markdown
    assert summary.tables["thresholds"][0]["labelled by"] == expected


def test_clusters_show_names_sizes_keywords_and_an_example() -> None:
    clusters = FailureClusters(
        clusters=[
            FailureCluster(
                id=0,
                size=4,
                row_keys=["rag:a"],
                keywords=["fee", "card"],
                example_questions=[HOSTILE, "other"],
                weakness="Card fees | wrong",
            ),
            FailureCluster(id=1, size=2, row_keys=["rag:b"], keywords=["isa"]),
        ],
        failures=6,
    )
    summary = summarise_clusters(clusters, person("failure-clustering", {"names": {"0": "Card fees"}}))
    assert "6 failed answers in 2 clusters" in summary.markdown and "named 1 of 2 clusters" in summary.markdown
    kept = person("failure-clustering", {"names": {"0": "Card fees", "1": "isa"}, "kept_proposed": ["1"]})
    assert "named 1 of 2 clusters; 1 kept the proposed keyword name" in summarise_clusters(clusters, kept).markdown
    rows = summary.tables["clusters"]
    assert [(row["id"], row["size"], row["weakness"], row["keywords"]) for row in rows] == [
        (0, 4, "Card fees &#124; wrong", "fee, card"),
        (1, 2, "—", "isa"),
    ]
    assert rows[0]["example question"].startswith("&lt;script&gt;") and rows[1]["example question"] == ""
    assert_table_intact(rows)
    empty = summarise_clusters(FailureClusters(clusters=[], failures=2, message="only 2 failures: too few"))
    assert "only 2 failures: too few" in empty.markdown and empty.tables["clusters"] == []


def test_weakness_grid_has_one_row_per_topic_and_question_type_and_names_the_weakest() -> None:
    scores = {"a": 0.1, "b": 0.2, "c": 0.15, "d": 0.9, "e": 0.95, "f": 0.9, "g": 0.85}
    kinds = {"a": "numerical", "b": "numerical", "c": "numerical"}
    cases = [
        TestCase(
            key=key,
            prompt=f"q {key}",
            topic="cards|fees" if key in kinds else "loans",
            generator=kinds.get(key, "factual"),
        )
        for key in scores
    ]
    _, result = evaluation()
    lab = TestLab(
        name="lab",
        models=[ModelHost(key="rag", type="t")],
        rows=[TestLabRow(test_case=case, model_key="rag", actual_output="x") for case in cases],
    )
    result = result.model_copy(
        update={"rows": [CaseScores(test_case_key=k, model_key="rag", scores={"score": v}) for k, v in scores.items()]}
    )
    summary = summarise_weaknesses(detect_weaknesses(lab, [result]))
    grid = summary.tables["grid"]
    assert [(row["topic"], row["question type"], row["cases"], row["mean"]) for row in grid] == [
        ("cards&#124;fees", "numerical", 3, 0.15),
        ("loans", "factual", 4, 0.9),
    ]
    assert grid[0]["pass rate"] == 0.0 and grid[1]["pass rate"] == 1.0 and grid[0]["model"] == "rag"
    assert "1 primary metrics broken down by topic x question type; 1 weak groups" in summary.markdown
    assert summary.tables["weakest"][0]["group"].startswith("topic 'cards&#124;fees': mean 0.15 over 3 cases")
    assert "similarity / score: topic 'cards&#124;fees'" in summary.markdown
    assert_table_intact(grid)


def test_robustness_counts_flips_per_perturbator_of_the_steps_kind_only() -> None:
    reports = [
        RobustnessReport(
            kind="input_variations",
            evaluator_id="similarity",
            metric="score",
            by_perturbator={
                "comma": FlipCount(cases=4, flips=0, pass_to_fail=0, fail_to_pass=0),
                "typos": FlipCount(cases=4, flips=3, pass_to_fail=2, fail_to_pass=1),
            },
        ),
        RobustnessReport(
            kind="adversarial",
            evaluator_id="similarity",
            metric="score",
            by_perturbator={"base64": FlipCount(cases=0, flips=0, pass_to_fail=0, fail_to_pass=0)},
        ),
    ]
    summary = summarise_robustness(reports, "robustness-input-variations")
    assert "3 verdict flips over 8 perturbed cases (flip rate 0.375)" in summary.markdown
    assert "most flips: typos (3 on similarity)" in summary.markdown
    assert [(row["perturbator"], row["cases"], row["flips"], row["flip rate"]) for row in summary.tables["flips"]] == [
        ("comma", 4, 0, 0.0),
        ("typos", 4, 3, 0.75),
    ]
    adversarial = summarise_robustness(reports, "robustness-adversarial")
    assert [row["flip rate"] for row in adversarial.tables["flips"]] == ["—"]
    assert "0 verdict flips over 0 perturbed cases (flip rate —)" in adversarial.markdown
    with pytest.raises(KeyError):
        summarise_robustness(reports, "robustness")


def test_summaries_are_frozen_data() -> None:
    summary = StepSummary(markdown="m", tables={"t": [{"a": 1}]})
    with pytest.raises(ValueError):
        summary.markdown = "changed"  # type: ignore[misc]
    assert StepSummary.model_validate(summary.model_dump()) == summary
