"""Groundedness cues beyond word and figure presence: units, figure attachment, derived figures, polarity and
single-passage coverage, each on small hand-made cases."""

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator
from assay.evaluators._attachment import clauses, local_coverage, misattributed
from assay.evaluators._grounding import Evidence, figures
from assay.evaluators._polarity import polarity_flipped

from assay.embeddings import EmbeddingEngine

EXCESSES = "Motor excesses\n- Compulsory excess: £250\n- Additional excess for drivers under 25: £400"
REVIEWS = "High-risk relationships are reviewed every 12 months; medium every 24 months; low every 36 months."


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


@pytest.mark.parametrize(
    ("text", "unit"),
    [("£350", "money"), ("350 days", "day"), ("3-5 working days", "day"), ("a 14-day wait", "day"),
     ("2.60% AER", "percent"), ("12 months", "month"), ("45p", "money"), ("350", "")],
)  # fmt: skip
def test_figures_carry_the_unit_they_count(text: str, unit: str) -> None:
    assert figures(text)[0].unit == unit


def test_a_value_in_another_unit_is_not_support() -> None:
    evidence = Evidence(["The valuation fee is £350."])
    assert evidence.check("You have 350 days to complete.").unsupported_figures == ("350",)
    assert evidence.check("The valuation fee is 350 pounds.").unsupported_figures == ()
    assert evidence.check("It costs 350.").unsupported_figures == ()


def test_a_figure_attached_to_something_else_in_the_context_is_misattributed() -> None:
    context = clauses([EXCESSES])
    question = "What is the compulsory excess?"
    wrong = figures("The compulsory excess is £400.")
    right = figures("The compulsory excess is £250.")
    assert misattributed("The compulsory excess is £400.", wrong, context, question) == wrong
    assert misattributed("The compulsory excess is £250.", right, context, question) == []


def test_an_elliptic_row_keeps_the_figure_it_alone_names() -> None:
    context = clauses([REVIEWS])
    medium = figures("Every 24 months.")
    assert misattributed("Every 24 months.", medium, context, "How often are medium-risk relationships reviewed?") == []
    low = figures("Every 36 months.")
    assert misattributed("Every 36 months.", low, context, "How often are high-risk relationships reviewed?") == low


def test_a_sum_or_difference_of_stated_figures_is_derived_not_missing() -> None:
    evidence = Evidence(["Up to 60% LTV: 4.09%. Pay the fee to reduce the rate by 0.30 percentage points."])
    assert evidence.derives(figures("3.79%")[0]) and not evidence.states(figures("3.79%")[0])
    assert evidence.check("The rate is 3.79%.").unsupported_figures == ()
    assert evidence.check("The rate is 3.65%.").unsupported_figures == ("3.65%",)
    assert not evidence.derives(figures("4.09%")[0])


def test_derived_figures_are_the_sums_and_differences_of_two_different_stated_ones_even_in_a_long_context() -> None:
    """The same answers as every pair's sum and difference written out, and linear in the context's figures: a
    context of 2,000 figures (4 million pairs, 16 s written out) answers at once, inside a guardrail's budget."""
    import itertools
    import time
    from decimal import Decimal

    context = ["Rates: 1.5%, 2%, 3.25% and 10%. Fees: £4, £7 and £10; a year is 12 months."]
    evidence = Evidence(context)
    checked = 0
    for text in ("3.5%", "0.5%", "1.75%", "8.5%", "4%", "20%", "1.25%", "11.5%", "13.25%", "0%", "6.75%", "£3", "£17"):
        figure = figures(text)[0]
        stated = {Decimal(f.key) for f in evidence.figures if not f.unit or not figure.unit or f.unit == figure.unit}
        both_ways = [(a + b, abs(a - b)) for a, b in itertools.permutations(stated, 2)]
        expected = not evidence.states(figure) and any(Decimal(figure.key) in pair for pair in both_ways)
        assert evidence.derives(figure) is expected, text
        checked += expected
    assert checked >= 5

    long = [" ".join(f"Chunk {c} sentence {n} says the rate is {c}.{n}% AER." for n in range(10)) for c in range(100)]
    evidence = Evidence(long)
    started = time.monotonic()
    assert evidence.derives(figures("150.5%")[0]) and not evidence.derives(figures("250.5%")[0])
    assert time.monotonic() - started < 1.0


def test_polarity_follows_negation_and_the_lead_in_of_a_list() -> None:
    exclusions = "We will not pay for: (a) wear and tear; (b) damage caused by pets."
    assert polarity_flipped("Yes, damage caused by pets is covered.", "(b) damage caused by pets.", exclusions)
    assert not polarity_flipped("No, damage by pets isn't covered.", "(b) damage caused by pets.", exclusions)
    assert not polarity_flipped("Yes, it is free.", "SARs are free of charge.", "SARs are free of charge.")


def test_local_coverage_is_the_share_one_passage_holds() -> None:
    passages = [{"windscreen", "claim", "affect", "discount"}, {"courtesy", "car", "provid"}]
    assert local_coverage("Windscreen claims do not affect your discount.", passages) == 1.0
    assert local_coverage("Courtesy car claims do not affect your discount.", passages) == pytest.approx(0.6)


def test_misattributed_and_flipped_answers_score_below_the_faithful_one(services: Services) -> None:
    evaluator = build_evaluator("groundedness", services)
    threshold = evaluator.threshold("groundedness")

    def score(answer: str, context: str, question: str) -> float:
        case = CaseContext.build(question=question, retrieved_context=[context], actual_output=answer)
        evaluator.prepare([case])
        return evaluator.score(case).scores["groundedness"]

    question = "What is the compulsory excess?"
    assert score("The compulsory excess is £250.", EXCESSES, question) >= threshold
    assert score("The compulsory excess is £400.", EXCESSES, question) < threshold
    cover = "We do not cover routine treatment such as vaccinations or neutering."
    faithful = score("Neutering is not covered.", cover, "Is neutering covered?")
    flipped = score("Neutering is covered.", cover, "Is neutering covered?")
    assert flipped < faithful
