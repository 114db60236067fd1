"""Bounds on a claim's support before the embedding model, and the claims a score or a verdict needs."""

import json
from pathlib import Path

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator
from assay.evaluators._claim_reading import ClaimReading, combined_support, deciding_claims, support_bounds
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
RULES = ("hybrid", "semantic", "semantic_gated", "lexical")
unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def readings(draw: st.DrawFn) -> ClaimReading:
    units = draw(st.integers(0, 12))
    missing = tuple(f"word{i}" for i in range(draw(st.integers(0, units))))
    return ClaimReading(
        sentence="a claim",
        lexical=None if units == 0 else draw(unit) * (units - len(missing)) / units,
        missing_words=missing,
        units=units,
        local=None if units == 0 else draw(unit),
        gate=draw(st.sampled_from([0.0, 0.125, 0.25, 0.5, 1.0])),
        unsupported_figures=(),
        unsupported_names=(),
        flips=tuple(draw(st.lists(st.booleans(), min_size=1, max_size=4))),
        contradicted_by_record=("delivery",) if draw(st.booleans()) and draw(st.booleans()) else (),
    )


@given(readings(), st.sampled_from(RULES), unit, st.data())
def test_every_cosine_and_credit_gives_a_support_within_the_bounds(reading, rules, semantic, data) -> None:  # type: ignore[no-untyped-def]
    credit = data.draw(st.floats(0.0, float(len(reading.missing_words)), allow_nan=False))
    closest = data.draw(st.integers(0, len(reading.flips) - 1))
    low, high = support_bounds(reading, rules)
    assert low <= combined_support(reading, rules, semantic, credit, reading.flips[closest]) <= high


def test_a_figure_the_context_does_not_state_fixes_the_support_without_embeddings() -> None:
    reading = ClaimReading("It pays 4.10% AER.", 0.8, (), 3, 0.8, 0.0, ("4.10%",), (), (False,))
    assert support_bounds(reading, "hybrid") == (0.0, 0.0)


@pytest.mark.parametrize(
    ("bounds", "threshold", "needed"),
    [
        ([(0.2, 0.4), (0.7, 0.9)], 0.5, [0]),  # the second can be neither the weakest nor ungrounded
        ([(0.2, 0.6), (0.5, 0.9)], 0.5, [0, 1]),  # both may be the weakest
        ([(0.1, 0.2), (0.4, 0.6)], 0.5, [0, 1]),  # the second straddles the threshold
        ([(0.1, 0.2), (0.4, 0.6)], None, [0]),  # no threshold, no count to settle
        ([], 0.5, []),
    ],
)
def test_deciding_claims(bounds: list[tuple[float, float]], threshold: float | None, needed: list[int]) -> None:
    assert deciding_claims(bounds, threshold) == needed


def _independent_cases(count: int) -> list[CaseContext]:
    rows = [json.loads(line) for line in (ROOT / "bench/data/groundedness_independent.jsonl").open()][:count]
    return [
        CaseContext.build(
            test_case_key=row["id"], question=row["question"], retrieved_context=row["context"],
            actual_output=row["answer"],
        )
        for row in rows
    ]  # fmt: skip


def test_fewer_embeddings_give_the_same_scores_and_verdicts(engine) -> None:  # type: ignore[no-untyped-def]
    """On 60 human-written RAG answers (bench/data/groundedness_independent.jsonl): "deciding" gives every score
    exactly, "verdict" every verdict, with its score or the range it lies in."""
    cases, services = _independent_cases(60), Services(embedder_factory=lambda: engine)
    scored = {}
    for mode in ("all", "deciding", "verdict"):
        evaluator = build_evaluator("groundedness", services, embed_claims=mode)
        evaluator.prepare(cases)
        scored[mode] = [evaluator.score(evaluator.in_scope(case)) for case in cases]
    threshold = build_evaluator("groundedness", services).threshold("groundedness")
    ranged = 0
    for exact, deciding, verdict in zip(scored["all"], scored["deciding"], scored["verdict"], strict=True):
        assert deciding.scores == pytest.approx(exact.scores, abs=1e-5)
        for metric, value in exact.scores.items():
            if verdict.scores[metric] is not None:
                assert verdict.scores[metric] == pytest.approx(value, abs=1e-5)
                continue
            ranged += metric == "groundedness"
            low, high = verdict.details["score_between"][metric]
            assert low - 1e-5 <= value <= high + 1e-5
        if verdict.scores["groundedness"] is None:
            low, high = verdict.details["score_between"]["groundedness"]
            assert (low >= threshold) == (high >= threshold) == (exact.scores["groundedness"] >= threshold)
    assert ranged >= 10  # 19 of these 60 settle as a range
    assert sum(s.details["embedded_claims"] for s in scored["verdict"]) < sum(
        s.details["embedded_claims"] for s in scored["all"]
    )
