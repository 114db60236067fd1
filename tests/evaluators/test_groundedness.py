"""Groundedness: exact behaviour on hand-made cases, figure normalisation and the labelled benchmark set."""

import importlib.util
import json
from pathlib import Path

import pytest
from assay.evaluators import CaseContext, Services, Unscored, build_evaluator
from assay.evaluators._grounding import figures, names
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine

ROOT = Path(__file__).resolve().parents[2]
LABELLED = ROOT / "bench" / "data" / "groundedness_labelled.jsonl"
THRESHOLD = 0.55

SAVER = (
    "Easy Access Saver: Product Sheet\n## Interest rates\n"
    "- £1 to £9,999: 3.00% AER (2.96% gross p.a.)\n"
    "- £10,000 to £49,999: 3.25% AER (3.20% gross p.a.)\n"
    "Interest is calculated daily and paid monthly, on the first working day of each month."
)
CARD = (
    "How to Report a Lost or Stolen Card\n## Steps\n"
    "4. A replacement card will be sent by standard delivery and should arrive within 3-5 working days, free of "
    "charge. If you need it sooner, express delivery (next working day) costs £10."
)


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def _score(services: Services, method: str = "hybrid", **fields: object) -> dict[str, float | None]:
    evaluator = build_evaluator("groundedness", services, method=method)
    case = CaseContext.build(**fields)
    evaluator.prepare([case])
    return evaluator.score(case).scores


def test_terse_correct_answer_beats_a_rich_paraphrase_with_a_wrong_number(services: Services) -> None:
    terse = {"retrieved_context": [SAVER], "actual_output": "3.25% AER."}
    wrong = {
        "retrieved_context": [SAVER],
        "actual_output": "Balances from £10,000 to £49,999 earn 3.50% AER (3.45% gross p.a.), with interest "
        "calculated daily and paid monthly.",
    }
    assert _score(services, **terse)["groundedness"] >= 0.75
    assert _score(services, **wrong)["groundedness"] == 0.0
    # The seed's embedding-only method ranks them the wrong way round: the reason the hybrid exists.
    assert _score(services, "semantic", **wrong)["groundedness"] > 0.75 > _score(services, "semantic", **terse)[
        "groundedness"
    ]


def test_an_unsupported_figure_zeroes_its_sentence_and_is_reported(services: Services) -> None:
    evaluator = build_evaluator("groundedness", services)
    case = CaseContext.build(
        retrieved_context=[CARD],
        actual_output="Standard delivery is free and takes 3-5 working days. Express delivery costs £15.",
    )
    evaluator.prepare([case])
    first, second = evaluator.explain(case)
    assert first.unsupported_figures == () and first.support >= 0.75
    assert second.unsupported_figures == ("£15",) and second.support == 0.0
    assert second.closest_context == "If you need it sooner, express delivery (next working day) costs £10."
    scored = evaluator.score(case)
    assert scored.scores == {"groundedness": 0.0, "ungrounded_sentences": 0.5}
    assert scored.details["least_grounded_sentence"] == "Express delivery costs £15."
    assert scored.details["unsupported_figures"] == ["£15"]


@pytest.mark.parametrize(
    ("stated", "context"),
    [
        ("£5,000", "5000"),
        ("3.25 %", "3.25%"),
        ("4.10%", "4.1 per cent"),
        ("9am", "9:00am"),
        ("1pm", "13:00"),
        ("+44 20 7946 0142", "020 7946 0142"),
        ("five hundred", "£500"),
        ("a thousand", "£1,000"),
        ("twenty-five", "25"),
        ("20p", "£0.20"),
        ("£2 million", "£2,000,000"),
        ("£10k", "£10,000"),
    ],
)
def test_figures_are_normalised_before_comparison(stated: str, context: str) -> None:
    assert [figure.key for figure in figures(stated)] == [figure.key for figure in figures(context)]


def test_codes_and_list_numbers_are_not_figures() -> None:
    assert figures("Harbourline House, Portmere PM1 4QX; bring your P60.\n3. Log in.") == []
    assert [figure.key for figure in figures("no one but one month", bare_one=False)] == []
    assert [figure.key for figure in figures("no one but one month")] == ["1", "1"]


def test_amounts_written_differently_are_supported(services: Services) -> None:
    evaluator = build_evaluator("groundedness", services)
    case = CaseContext.build(
        retrieved_context=["Cash deposits of £10,000 or more need evidence of the source of funds."],
        actual_output="Deposits of 10000 pounds or more need evidence of the source of funds.",
    )
    evaluator.prepare([case])
    (support,) = evaluator.explain(case)
    assert support.unsupported_figures == ()
    assert support.support >= 0.75


def test_an_unknown_name_halves_the_support(services: Services) -> None:
    evaluator = build_evaluator("groundedness", services)
    case = CaseContext.build(retrieved_context=[SAVER], actual_output="The Regular Saver pays 3.25% AER.")
    evaluator.prepare([case])
    (support,) = evaluator.explain(case)
    assert names(support.sentence) == ["Regular", "Saver", "AER"]
    assert support.unsupported_names == ("Regular",)
    assert support.support == pytest.approx((support.semantic + support.lexical + support.local) / 3 * 0.5, abs=1e-5)


def test_figures_from_the_question_are_framing_not_hallucination(services: Services) -> None:
    answer = {"retrieved_context": [SAVER], "actual_output": "A £20,000 balance earns 3.25% AER."}
    assert _score(services, **answer)["groundedness"] == 0.0
    framed = _score(services, question="What do I earn on £20,000?", **answer)["groundedness"]
    assert framed is not None and framed >= THRESHOLD


def test_sentences_without_a_claim_are_left_out_except_by_the_seed_method(services: Services) -> None:
    answer = {"retrieved_context": [SAVER], "actual_output": "Yes. 3.25% AER."}
    claim_only = _score(services, retrieved_context=[SAVER], actual_output="3.25% AER.")
    assert _score(services, **answer) == claim_only and claim_only["ungrounded_sentences"] == 0.0
    seed = _score(services, "semantic", **answer)
    assert seed["groundedness"] < 0.5 and seed["ungrounded_sentences"] == 1.0


def test_no_retrieved_context_leaves_the_case_unscored(services: Services) -> None:
    evaluator = build_evaluator("groundedness", services)
    outcome = score_case(evaluator, CaseContext.build(actual_output="3.25% AER."))
    assert outcome.unscored_reason == "missing input: retrieved_context" and outcome.scores == {}
    with pytest.raises(Unscored, match="test case blank: the retrieved context is empty"):
        evaluator.score(CaseContext.build(test_case_key="blank", retrieved_context=["  \n"], actual_output="Yes."))


def test_an_answer_without_sentences_is_unscored(services: Services) -> None:
    evaluator = build_evaluator("groundedness", services)
    with pytest.raises(Unscored, match="test case dots: the actual answer has no sentence"):
        evaluator.score(CaseContext.build(test_case_key="dots", retrieved_context=[SAVER], actual_output=" - "))


def test_the_lexical_method_needs_no_embedding_engine() -> None:
    case = {"retrieved_context": [CARD], "actual_output": "Express delivery costs £10."}
    assert _score(Services(), "lexical", **case) == {"groundedness": 1.0, "ungrounded_sentences": 0.0}
    with pytest.raises(Unscored, match="no embedding engine"):
        _score(Services(), "hybrid", **case)


def test_an_unknown_method_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"method .nli. is not one of learned, hybrid, semantic"):
        build_evaluator("groundedness", method="nli")


def test_the_labelled_set_is_large_balanced_enough_and_matches_its_generator() -> None:
    items = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    assert len(items) >= 120
    assert {item["label"] for item in items} == {"supported", "unsupported"}
    assert {item["split"] for item in items} == {"dev", "test"}
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        assert 1 <= len(item["context"]) <= 3 and item["answer"].strip() and item["question"].strip()
    spec = importlib.util.spec_from_file_location("make_groundedness_set", ROOT / "bench" / "make_groundedness_set.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.build_items(ROOT / "assay" / "data" / "sample_bank" / "corpus") == items
