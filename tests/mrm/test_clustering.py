"""Failure clustering (MRM step 6) on failed card and mortgage questions that a fake embedder sets apart."""

import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricMeta
from assay.mrm.clustering import cluster_failures, failed_row_keys

CARDS = [f"What is the card {word} fee?" for word in ("annual", "foreign", "late", "cash", "replacement", "overlimit")]
MORTGAGES = [
    f"How does the mortgage {word} work?" for word in ("rate", "term", "deposit", "overpayment", "offer", "valuation")
]
PASSING = ["Where is my nearest branch?", "Can I open a savings account online?"]


class TwoDirections:
    """Card texts point along one axis, mortgage texts along another, each with a little seeded noise."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = []
        for text in texts:
            vector = np.random.default_rng(zlib.crc32(text.encode())).normal(0.0, 0.05, 16)
            vector[0 if "card" in text else 1 if "mortgage" in text else 2] += 1.0
            vectors.append(vector / np.linalg.norm(vector))
        return np.array(vectors)


def evaluation(scores: Sequence[float | None], *, higher_is_better: bool = True) -> EvaluationResult:
    metric = MetricMeta(
        key="similarity",
        display_name="Similarity",
        description="d",
        threshold=0.5,
        higher_is_better=higher_is_better,
        is_primary=True,
    )
    spec = EvaluatorSpec(
        id="sim",
        display_name="sim",
        description="d",
        domain="generation",
        required_inputs=["actual_output"],
        metrics=[metric, MetricMeta(key="length", display_name="Length", description="d", range=(0, 1000))],
    )
    rows = [
        CaseScores(
            test_case_key=f"c{i}", model_key="m", scores={} if s is None else {"similarity": s, "length": 10.0 * i}
        )
        for i, s in enumerate(scores)
    ]
    return EvaluationResult(evaluator=spec, rows=rows)


def lab(questions: Sequence[str]) -> TestLab:
    rows = [
        TestLabRow(test_case=TestCase(key=f"c{i}", prompt=q), model_key="m", actual_output="I do not know.")
        for i, q in enumerate(questions)
    ]
    return TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)


def test_card_and_mortgage_failures_form_two_clusters() -> None:
    questions = CARDS + MORTGAGES + PASSING
    scores = [0.2 + 0.01 * i for i in range(12)] + [0.9, 0.9]
    result = evaluation(scores)
    clusters = cluster_failures(lab(questions), [result], TwoDirections(), seed=0)
    assert clusters.failures == 12
    assert clusters.message.startswith("12 failed cases in 2 clusters")
    by_first_keyword = {cluster.keywords[0]: cluster for cluster in clusters.clusters}
    cards, mortgages = by_first_keyword["card"], by_first_keyword["mortgage"]
    assert cards.row_keys == [f"m:c{i}" for i in range(6)]
    assert mortgages.row_keys == [f"m:c{i}" for i in range(6, 12)]
    assert (cards.size, mortgages.size) == (6, 6)
    assert set(cards.example_questions) <= set(CARDS) and len(cards.example_questions) == 3
    assert cards.mean_scores == {"sim/length": pytest.approx(25.0), "sim/similarity": pytest.approx(0.225)}
    assert clusters == cluster_failures(lab(questions), [result], TwoDirections(), seed=0)


def test_too_few_failures_is_a_message_not_an_error() -> None:
    clusters = cluster_failures(lab(CARDS[:6]), [evaluation([0.1, 0.2, 0.3, 0.4, 0.9, 0.9])], TwoDirections())
    assert (clusters.clusters, clusters.failures) == ([], 4)
    assert clusters.message == "4 failed cases, fewer than the 5 needed to cluster failures"


def test_failures_follow_the_calibrated_threshold_and_the_metric_direction() -> None:
    result = evaluation([0.1, 0.45, 0.6, None])
    questions = CARDS[:4]
    assert failed_row_keys(lab(questions), [result]) == ["m:c0", "m:c1"]
    assert failed_row_keys(lab(questions), [result], {("sim", "similarity"): 0.4}) == ["m:c0"]
    assert failed_row_keys(lab(questions), [evaluation([0.1, 0.45, 0.6, None], higher_is_better=False)]) == ["m:c2"]
    calibrated = cluster_failures(
        lab(CARDS + MORTGAGES), [evaluation([0.2] * 12)], TwoDirections(), thresholds={("sim", "similarity"): 0.1}
    )
    assert (calibrated.failures, calibrated.clusters) == (0, [])
