"""System-prompt rules from hand-made findings: each rule traced to what motivated it, none without a finding."""

from assay.artifacts.prompt_extension import PromptExtension, build_prompt_extension

from assay.models.findings import Problem
from assay.models.mrm import (
    FailureCluster,
    FailureClusters,
    FlipCount,
    GroupStat,
    MetricWeaknesses,
    RobustnessReport,
    WeaknessReport,
)


def flips(kind: str, counts: dict[str, tuple[int, int]], evaluator: str = "similarity") -> RobustnessReport:
    return RobustnessReport(
        kind=kind,  # type: ignore[arg-type]
        evaluator_id=evaluator,
        metric="score",
        by_perturbator={
            name: FlipCount(cases=cases, flips=flipped, pass_to_fail=flipped, fail_to_pass=0)
            for name, (cases, flipped) in counts.items()
        },
    )


def weak(evaluator: str, metric: str, weakest: list[str]) -> MetricWeaknesses:
    stat = GroupStat(mean=0.412, cases=5, pass_rate=0.2)
    return MetricWeaknesses(
        evaluator_id=evaluator,
        metric=metric,
        by_topic={"cards": stat, "savings": GroupStat(mean=0.9, cases=6)},
        by_question_type={"out_of_scope": stat, "simple_factual": GroupStat(mean=0.95, cases=9)},
        grid={},
        weakest=weakest,
    )


def problem(evaluator: str, problem_type: str = "accuracy") -> Problem:
    return Problem(
        description=f"Model 'rag' has average {evaluator} 0.400, below the threshold 0.75.",
        severity="high",
        problem_type=problem_type,
        problem_code="AVID / P0204 / Accuracy",
        attributes={"model_key": "rag", "evaluator": evaluator, "metric": evaluator, "value": 0.4, "threshold": 0.75},
    )


def test_no_findings_no_rules() -> None:
    quiet = [flips("input_variations", {"typos": (10, 0)}), flips("adversarial", {"base64": (4, 0)})]
    clusters = FailureClusters(
        clusters=[FailureCluster(id=0, size=3, row_keys=[], weakness="card, fee, number")], failures=3
    )
    extension = build_prompt_extension(
        WeaknessReport(metrics=[weak("similarity", "score", [])]),
        clusters,
        quiet,
        [problem("toxicity"), problem("groundedness", problem_type="robustness")],
    )
    assert extension.rules == [] and extension.text() == ""
    assert build_prompt_extension(None, None, [], []).rules == []


def test_typo_flips_give_a_traced_typo_tolerance_rule() -> None:
    extension = build_prompt_extension(
        None, None, [flips("input_variations", {"random_keyboard_typos": (10, 3), "word_swap": (10, 0)})], []
    )
    (rule,) = extension.rules
    assert rule.id == "typo-tolerance" and rule.section == "Handling input variations"
    assert rule.text.endswith("Variations that changed answers during validation: random keyboard typos.")
    (trace,) = rule.traces
    assert trace.kind == "robustness"
    assert trace.description == (
        "3 of 10 answers flipped under 'random_keyboard_typos' (input variations, similarity/score)"
    )
    assert trace.attributes == {
        "kind": "input_variations",
        "evaluator_id": "similarity",
        "metric": "score",
        "perturbator": "random_keyboard_typos",
        "cases": 10,
        "flips": 3,
        "pass_to_fail": 3,
        "fail_to_pass": 0,
    }


def test_rules_from_weaknesses_clusters_problems_and_adversarial_flips() -> None:
    extension = build_prompt_extension(
        WeaknessReport(
            metrics=[
                weak("similarity", "score", ["question_type:out_of_scope"]),
                weak("groundedness", "groundedness", ["cards"]),
            ]
        ),
        FailureClusters(
            clusters=[
                FailureCluster(id=2, size=4, row_keys=[], weakness="Numerical answers rounded"),
                FailureCluster(id=3, size=2, row_keys=[], weakness="card, fee, annual"),
            ],
            failures=6,
        ),
        [
            flips("adversarial", {"base64_encoding": (6, 2), "contextual_misinformation": (6, 1), "novel": (6, 1)}),
            flips("input_variations", {"synonym": (8, 2)}, evaluator="groundedness"),
        ],
        [problem("groundedness"), problem("toxicity")],
    )
    traces = {rule.id: [trace.description for trace in rule.traces] for rule in extension.rules}
    assert traces == {
        "phrasing-robustness": ["2 of 8 answers flipped under 'synonym' (input variations, groundedness/score)"],
        "grounding": [
            "weak topic 'cards' on groundedness/groundedness (mean 0.412 over 5 cases)",
            "Model 'rag' has average groundedness 0.400, below the threshold 0.75.",
        ],
        "out-of-scope": ["weak question type 'out_of_scope' on similarity/score (mean 0.412 over 5 cases)"],
        "numeric-precision": ["failure cluster 2 'Numerical answers rounded' (4 failures)"],
        "misleading-premise": [
            "1 of 6 answers flipped under 'contextual_misinformation' (adversarial, similarity/score)",
            "1 of 6 answers flipped under 'novel' (adversarial, similarity/score)",  # unknown adversarial id
        ],
        "adversarial-encoding": ["2 of 6 answers flipped under 'base64_encoding' (adversarial, similarity/score)"],
    }
    texts = {rule.id: rule.text for rule in extension.rules}
    assert texts["phrasing-robustness"].endswith(" Variations that changed answers during validation: synonym.")
    assert "Variations" not in texts["adversarial-encoding"]  # attacks are not variations to tolerate
    assert PromptExtension.model_validate_json(extension.model_dump_json()) == extension


def test_text_is_a_block_to_append_to_a_system_prompt() -> None:
    extension = build_prompt_extension(
        WeaknessReport(metrics=[weak("hallucination", "hallucination", ["savings"])]),
        None,
        [flips("input_variations", {"comma": (5, 1)})],
        [],
        title="Rules from validation",
    )
    assert extension.text() == (
        "## Rules from validation\n"
        "\n"
        "### Handling input variations\n"
        "\n"
        "- Typo tolerance: Questions may contain misspellings, typing slips and stray punctuation. Read each "
        "question as the user most likely meant it before searching, answer that intended question, and do not "
        "comment on the user's spelling. Variations that changed answers during validation: comma.\n"
        "\n"
        "### Grounding and scope\n"
        "\n"
        "- Grounding: Answer only from the retrieved context. When the context does not contain the answer, say "
        "so plainly instead of guessing or using outside knowledge, and never add facts, figures or conditions "
        "that the context does not state.\n"
    )


def test_weak_question_types_as_weakness_detection_words_them() -> None:
    from assay.models.mrm import GroupStat, MetricWeaknesses, WeaknessReport

    weak = GroupStat(mean=0.2, cases=3, pass_rate=0.0)
    report = WeaknessReport(metrics=[MetricWeaknesses(
        evaluator_id="answer_semantic_similarity", metric="answer_similarity",
        by_topic={"sample-rag:cards": GroupStat(mean=0.7, cases=5)},
        by_question_type={"sample-rag:out_of_scope_questions": weak}, grid={},
        weakest=["question type 'out_of_scope_questions': mean 0.20 over 3 cases vs 0.60 overall"],
    )])
    extension = build_prompt_extension(report, None, [], [])
    rule = next(rule for rule in extension.rules if rule.id == "out-of-scope")
    assert rule.traces[0].attributes["dimension"] == "question type"
    assert rule.traces[0].attributes["mean"] == 0.2
