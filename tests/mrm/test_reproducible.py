"""Same inputs, same seed, same MRM outputs (issue 7, item 14).

Two uninterrupted runs differed in 912 values because wall-clock latency fed clustering, weaknesses and
calibration. The quality steps now leave operational metrics out, and the sample hosts report simulated,
reproducible durations.
"""

import random
import shutil
from pathlib import Path
from typing import Any

from assay.evaluators import build_evaluator, evaluator_class, run_evaluator

from assay.corpora import sample_data_path
from assay.embeddings import EmbeddingEngine
from assay.labs import build_test_lab
from assay.models import ModelHost, Relationship, Test, TestCase, TestLab, TestLabRow, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import ReviewLabel
from assay.mrm.clustering import cluster_failures
from assay.mrm.operational import is_operational
from assay.mrm.robustness import flip_reports
from assay.mrm.weaknesses import detect_weaknesses
from tests.mrm.test_clustering import CARDS, MORTGAGES, TwoDirections
from tests.support.calibration_rounds import calibrate_until_stable

PASSING = ["What is the card annual fee in pounds?", "What does the mortgage valuation cost?"]


def test_operational_evaluators_are_the_run_measurements() -> None:
    operational = {"latency", "token_count"}
    for evaluator_id in (
        *operational,
        "text_matching",
        "groundedness",
        "assertions",
        "answer_relevancy_sentence_similarity",
    ):
        assert is_operational(evaluator_class(evaluator_id).spec) == (evaluator_id in operational)


def _case(key: str, prompt: str, *, perturbed_from: str | None = None) -> TestCase:
    return TestCase(
        key=key,
        prompt=prompt,
        output_condition='"£25"',
        topic="cards" if "card" in prompt else "mortgages",
        generator="numerical" if len(prompt) % 2 else "lexical",
        relationships=[Relationship(type="perturbation", target=perturbed_from)] if perturbed_from else [],
        categories=["perturbed", "perturbator:typos"] if perturbed_from else [],
    )


def _labs(durations_seed: int) -> tuple[TestLab, TestLab]:
    """A baseline and a perturbed lab whose answers are fixed and whose durations are random: 0 to 30 s,
    either side of latency's 10 s threshold, as wall-clock timings of a loaded machine may be."""
    rng = random.Random(durations_seed)
    questions = CARDS + MORTGAGES + PASSING
    answers = ["I do not know."] * len(CARDS + MORTGAGES) + ["It costs £25."] * len(PASSING)

    def row(case: TestCase, answer: str) -> TestLabRow:
        return TestLabRow(test_case=case, model_key="m", actual_output=answer, actual_duration=rng.uniform(0, 30))

    baseline = [row(_case(f"c{i}", q), a) for i, (q, a) in enumerate(zip(questions, answers, strict=True))]
    perturbed = [
        row(_case(f"c{i}~typos", q.lower(), perturbed_from=f"c{i}"), "It costs £25." if i % 3 else "No idea.")
        for i, q in enumerate(questions)
    ]
    models = [ModelHost(key="m", type="t")]
    return TestLab(name="l", models=models, rows=baseline), TestLab(name="p", models=models, rows=perturbed)


def _evaluate(lab: TestLab) -> list[EvaluationResult]:
    return [run_evaluator(build_evaluator(evaluator_id), lab) for evaluator_id in ("text_matching", "latency")]


def _mrm_steps(durations_seed: int) -> dict[str, Any]:
    lab, perturbed = _labs(durations_seed)
    results, perturbed_results = _evaluate(lab), _evaluate(perturbed)
    return {
        "clusters": cluster_failures(lab, results, TwoDirections(), seed=0),
        "weaknesses": detect_weaknesses(lab, results),
        "calibration": calibrate_until_stable(
            lab, results, _agreeing_reviewer, seed=0, bootstrap=50
        ),
        "flips": flip_reports("input_variations", perturbed, perturbed_results, results),
    }


def test_wall_clock_durations_do_not_change_the_quality_steps() -> None:
    first, second = _mrm_steps(durations_seed=1), _mrm_steps(durations_seed=2)
    assert first["clusters"].failures == len(CARDS + MORTGAGES)
    assert [metric.evaluator_id for metric in first["weaknesses"].metrics] == ["text_matching"]
    assert first == second


def test_two_runs_on_the_sample_hosts_give_equal_outputs(tmp_path: Path, engine: EmbeddingEngine) -> None:
    """End to end on a tiny corpus: lab, evaluation results and MRM steps of two runs are equal."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in (
        "report-a-lost-or-stolen-card.md",
        "mortgage-product-sheet.md",
        "easy-access-savings-product-sheet.md",
    ):
        shutil.copy(sample_data_path() / "corpus" / name, corpus / name)
    questions = [
        "Which number do I call if my card is stolen?",
        "How long does a replacement card take to arrive?",
        "What rate does the Easy Access Saver pay?",
        "Is there an early repayment charge on the 2-year fixed mortgage?",
        "What is the closing price of gold in Tokyo?",
    ]
    suite = TestSuite(
        name="tiny",
        tests=[
            Test(
                key="t",
                test_cases=[
                    TestCase(key=f"q{i}", prompt=q, expected_output="Call 0800 555 0199.", topic=f"topic{i % 2}")
                    for i, q in enumerate(questions)
                ],
            )
        ],
    )
    hosts = [
        ModelHost(key=host_type, type=host_type, settings={"corpus": str(corpus)})
        for host_type in ("sample-rag", "sample-rag-keyword")
    ]

    def run(run_id: str) -> dict[str, Any]:
        lab = build_test_lab(suite, hosts, run_id=run_id, embedder=lambda: engine)
        results = [
            run_evaluator(build_evaluator(evaluator_id), lab)
            for evaluator_id in ("latency", "token_count", "text_matching")
        ]
        results.append(run_evaluator(build_evaluator("groundedness", method="lexical"), lab))
        return {
            "rows": lab.rows,
            "scores": [(result.rows, result.aggregates) for result in results],
            "clusters": cluster_failures(lab, results, engine, min_failures=2, seed=0),
            "weaknesses": detect_weaknesses(lab, results),
            "calibration": calibrate_until_stable(
                lab, results, _agreeing_reviewer, seed=0, bootstrap=50
            ),
        }

    first, second = run("first"), run("second")
    assert all(row.actual_duration is not None and row.actual_duration > 0 for row in first["rows"])
    for step in first:
        assert first[step] == second[step], step


def test_a_slow_answer_is_no_quality_failure() -> None:
    lab, _ = _labs(durations_seed=3)
    slow = lab.model_copy(update={"rows": [row.model_copy(update={"actual_duration": 60.0}) for row in lab.rows]})
    latency = run_evaluator(build_evaluator("latency"), slow)
    assert latency.aggregates["m"]["latency_seconds"].passed == 0
    assert cluster_failures(slow, [latency], TwoDirections()).failures == 0


def _agreeing_reviewer(items: list) -> list[ReviewLabel]:  # type: ignore[type-arg]
    """A simulated reviewer who agrees with every verdict (the reproducibility under test is the steps')."""
    return [ReviewLabel(item_id=item.item_id, human_passes=item.metric_passes, reviewer="sim") for item in items]
