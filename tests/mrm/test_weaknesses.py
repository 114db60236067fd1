"""Weakness detection (MRM step 7): group counts, means, pass rates and the weakest groups on a hand-made lab
with known scores."""

import pytest

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.mrm import GroupStat
from assay.mrm.weaknesses import detect_weaknesses, question_type

# key: (topic, generator, score of model "rag"); score None = unscored
CASES = {
    "c1": ("cards", "numerical", 0.1),
    "c2": ("cards", "numerical", 0.2),
    "c3": ("cards", "numerical", 0.3),
    "c4": ("cards", "factual", 0.9),
    "c5": ("loans", "numerical", 0.8),
    "c6": ("loans", "factual", 0.9),
    "c7": ("loans", "factual", 1.0),
    "c8": (None, None, 0.9),  # no topic, no generator: first category
    "c9": ("loans", "factual", None),
}


def spec(higher_is_better: bool = True) -> EvaluatorSpec:
    metric = MetricMeta(
        key="score",
        display_name="Score",
        description="d",
        threshold=0.5,
        is_primary=True,
        higher_is_better=higher_is_better,
    )
    other = MetricMeta(key="side", display_name="Side", description="d", threshold=0.5)
    return EvaluatorSpec(
        id="fake",
        display_name="Fake",
        description="d",
        domain="generation",
        required_inputs=[],
        metrics=[other, metric],
    )


def case(key: str) -> TestCase:
    topic, generator, _ = CASES[key]
    return TestCase(key=key, prompt=f"q {key}", topic=topic, generator=generator, categories=["yes-no", "x"])


def lab(models: tuple[str, ...] = ("rag",)) -> TestLab:
    rows = [TestLabRow(test_case=case(key), model_key=model, actual_output="a") for model in models for key in CASES]
    return TestLab(name="lab", models=[ModelHost(key=model, type="t") for model in models], rows=rows)


def result(
    scores: dict[str, dict[str, float | None]], *, higher_is_better: bool = True, **parameters: float
) -> EvaluationResult:
    rows = [
        CaseScores(
            test_case_key=key,
            model_key=model,
            scores={"score": value, "side": 0.0} if value is not None else {},
            unscored_reason=None if value is not None else "host failed",
        )
        for model, values in scores.items()
        for key, value in values.items()
    ]
    return EvaluationResult(evaluator=spec(higher_is_better), parameters=parameters, rows=rows)


RAG = {key: score for key, (_, _, score) in CASES.items()}


def test_question_type_falls_back_to_the_first_category_then_unknown() -> None:
    assert question_type(case("c1")) == "numerical"
    assert question_type(case("c8")) == "yes-no"
    assert question_type(TestCase(key="k", prompt="p")) == "unknown"


def test_groups_count_scored_cases_and_keep_unscored_apart() -> None:
    (metric,) = detect_weaknesses(lab(), [result({"rag": RAG})]).metrics
    assert (metric.evaluator_id, metric.metric) == ("fake", "score")
    assert metric.by_topic == {
        "rag:cards": GroupStat(mean=0.375, cases=4, pass_rate=0.25),
        "rag:loans": GroupStat(mean=0.9, cases=3, pass_rate=1.0),
        "rag:unknown": GroupStat(mean=0.9, cases=1, pass_rate=1.0),
        "rag:(unscored)": GroupStat(mean=None, cases=1),
    }
    assert metric.by_question_type == {
        "rag:factual": GroupStat(mean=0.933333, cases=3, pass_rate=1.0),
        "rag:numerical": GroupStat(mean=0.35, cases=4, pass_rate=0.25),
        "rag:yes-no": GroupStat(mean=0.9, cases=1, pass_rate=1.0),
        "rag:(unscored)": GroupStat(mean=None, cases=1),
    }
    assert metric.grid == {
        "rag:cards": {
            "factual": GroupStat(mean=0.9, cases=1, pass_rate=1.0),
            "numerical": GroupStat(mean=0.2, cases=3, pass_rate=0.0),
        },
        "rag:loans": {
            "factual": GroupStat(mean=0.95, cases=2, pass_rate=1.0),
            "numerical": GroupStat(mean=0.8, cases=1, pass_rate=1.0),
        },
        "rag:unknown": {"yes-no": GroupStat(mean=0.9, cases=1, pass_rate=1.0)},
    }
    # overall mean 0.6375, population sd 0.3462: only the cards x numerical cell is more than 1 sd below
    assert metric.weakest == ["topic 'cards' x type 'numerical': mean 0.20 over 3 cases vs 0.64 overall"]


@pytest.mark.parametrize(
    ("thresholds", "parameters", "pass_rate"),
    [
        ({("fake", "score"): 0.15}, {"metric_threshold": 0.95}, 2 / 3),  # calibrated wins over the parameter
        (None, {"metric_threshold": 0.25}, 1 / 3),
        ({("other", "score"): 0.95}, {}, 0.0),  # another evaluator's threshold: the default 0.5 applies
    ],
)
def test_threshold_precedence(thresholds: dict | None, parameters: dict, pass_rate: float) -> None:
    (metric,) = detect_weaknesses(lab(), [result({"rag": RAG}, **parameters)], thresholds=thresholds).metrics
    assert metric.grid["rag:cards"]["numerical"].pass_rate == pytest.approx(pass_rate, abs=1e-6)


def test_models_are_analysed_separately() -> None:
    flat = dict.fromkeys(RAG, 0.5)
    (metric,) = detect_weaknesses(lab(("rag", "flat")), [result({"rag": RAG, "flat": flat})]).metrics
    assert metric.by_topic["flat:cards"] == GroupStat(mean=0.5, cases=4, pass_rate=1.0)
    assert metric.by_topic["flat:loans"] == GroupStat(mean=0.5, cases=4, pass_rate=1.0)  # c9 scored here
    assert "flat:(unscored)" not in metric.by_topic
    assert metric.by_topic["rag:cards"].mean == 0.375
    # the flat model has no spread, so nothing of it is weak; the other is named once there are two
    assert metric.weakest == ["model 'rag', topic 'cards' x type 'numerical': mean 0.20 over 3 cases vs 0.64 overall"]


def test_lower_is_better_metrics_are_weak_above_the_mean() -> None:
    inverted = {key: None if score is None else round(1 - score, 2) for key, score in RAG.items()}
    (metric,) = detect_weaknesses(lab(), [result({"rag": inverted}, higher_is_better=False)]).metrics
    assert metric.grid["rag:cards"]["numerical"] == GroupStat(mean=0.8, cases=3, pass_rate=0.0)
    assert metric.weakest == ["topic 'cards' x type 'numerical': mean 0.80 over 3 cases vs 0.36 overall"]


def test_a_result_row_outside_the_lab_is_an_error() -> None:
    with pytest.raises(ValueError, match="row rag:ghost is not in lab 'lab'"):
        detect_weaknesses(lab(), [result({"rag": {"ghost": 0.5}})])
