"""Verdicts on answers as real LLMs write them, one hand-written case per cause of misjudgement found in issue
33 (figures in other notations, framing, names, records with false values, tool outputs, paraphrase, swapped
roles, long answers). Each pair is a good answer that must pass and a bad one that must fail at the default
threshold; docs/explanation/validity.md shows the same table."""

import json

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator
from assay.evaluators.base import Unscored

from assay.embeddings import EmbeddingEngine
from assay.models import ToolCall

pytestmark = pytest.mark.slow

RECORD = json.dumps({
    "name": "Luigi's Trattoria", "city": "Santa Barbara", "state": "CA", "stars": 4.5,
    "attributes": {"RestaurantsDelivery": "False", "RestaurantsTakeOut": "True", "WiFi": "u'free'"},
    "hours": {"Monday": "16:0-21:0", "Tuesday": "16:0-21:0"},
})  # fmt: skip
RECIPE = ("Preheat the oven to 350°F. Bake the bread for 30 minutes, until golden. Let it cool for ten minutes "
          "before slicing.")  # fmt: skip
HISTORY = ("French cuisine strongly influenced Italian cooking in the 18th century, when Italian courts hired French "
           "chefs.")  # fmt: skip
WEATHER = ToolCall(name="get_weather", arguments={"city": "Paris"},
                   output='{"city": "Paris", "temperature_c": 18, "conditions": "sunny"}')  # fmt: skip
LONG = ("Preheat the oven to 350°F. Bake the bread for 30 minutes. It should be golden. Let it cool for ten minutes. "
        "Then slice it. French cuisine influenced Italian cooking. This happened in the 18th century. ")  # fmt: skip

# cause -> (context, tool call, good answer, bad answer)
CASES = {
    "figures in other notations": (
        RECIPE, None, "Bake it at 350 degrees F for 30 minutes and let it cool for 10 minutes.",
        "Bake it at 400 degrees F for 30 minutes and let it cool for 10 minutes.",
    ),
    "framing": (
        RECIPE, None,
        "Based on the provided passages, here is my answer: preheat the oven to 350°F and bake the bread for 30 "
        "minutes [1]. I hope this helps!",
        "Based on the provided passages, here is my answer: preheat the oven to 350°F and bake the bread for 45 "
        "minutes [1]. I hope this helps!",
    ),
    "names": (
        RECORD, None, "Overall, Luigi's Trattoria in Santa Barbara, California is rated 4.5 stars.",
        "Overall, Luigi's Trattoria in San Diego, California is rated 4.5 stars.",
    ),
    "a record with false": (
        RECORD, None, "Luigi's Trattoria offers takeout but does not offer delivery.",
        "Luigi's Trattoria offers delivery.",
    ),
    "an answer from a tool output": (
        None, WEATHER, "It is 18 degrees and sunny in Paris.", "It is 25 degrees and raining in Paris.",
    ),
    "a paraphrase": (
        RECIPE, None, "Heat your oven to 350 degrees, then bake the loaf for half an hour until it turns golden.",
        "Heat your oven to 350 degrees, then bake the loaf for half an hour and serve it hot straight away.",
    ),
    "a role swap": (
        HISTORY, None, "In the 18th century, French cuisine influenced Italian cooking.",
        "In the 18th century, Italian cuisine influenced French cooking.",
    ),
    "a long answer": (
        f"{RECIPE} {HISTORY}", None, LONG + "Italian courts hired French chefs.",
        LONG + "Italian courts hired Spanish bakers.",
    ),
}  # fmt: skip
GOOD_GAPS = {
    "a paraphrase": "needs a stronger entailment signal (issue 33, item 4)",
    "an answer from a tool output": "the record's terse statements share few of the answer's words (item 4)",
    "a record with false": "'offers takeout' is not read from 'restaurants take out: yes' (item 4)",
    "a long answer": "a terse true claim ('Then slice it.') scores 0.52 under the 0.53 threshold: the weakest "
                     "claim still sinks a long answer (item 8)",
}
BAD_GAPS = {"a role swap": "role swaps made of the context's own words pass (item 7)"}


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def verdict(services: Services, context: str | None, tool: ToolCall | None, answer: str) -> tuple[bool, dict]:
    evaluator = build_evaluator("groundedness", services)
    case = CaseContext.build(retrieved_context=[context] if context else [], actual_output=answer,
                             tool_calls=[tool] if tool else [])  # fmt: skip
    case = evaluator.in_scope(case)
    evaluator.prepare([case])
    scored = evaluator.score(case)
    return scored.scores["groundedness"] >= evaluator.threshold("groundedness"), scored.details


def _expected_gap(cause: str, gaps: dict[str, str]) -> list[pytest.MarkDecorator]:
    """Known gaps stay visible: strict, so the day one is closed the test says so."""
    return [pytest.mark.xfail(reason=gaps[cause], strict=True)] if cause in gaps else []


@pytest.mark.parametrize(
    "cause", [pytest.param(cause, marks=_expected_gap(cause, GOOD_GAPS)) for cause in CASES]
)
def test_good_answer_passes(services: Services, cause: str) -> None:
    context, tool, good, _ = CASES[cause]
    passes, details = verdict(services, context, tool, good)
    assert passes, details["sentences"]


@pytest.mark.parametrize(
    "cause", [pytest.param(cause, marks=_expected_gap(cause, BAD_GAPS)) for cause in CASES]
)
def test_bad_answer_fails(services: Services, cause: str) -> None:
    context, tool, _, bad = CASES[cause]
    passes, details = verdict(services, context, tool, bad)
    assert not passes, details["sentences"]


def test_the_record_says_why_and_the_framing_is_listed(services: Services) -> None:
    _, details = verdict(services, RECORD, None, "Luigi's Trattoria offers delivery.")
    assert details["contradicted_by_record"] == ['attributes restaurants delivery = "False"']
    _, details = verdict(services, *CASES["framing"][:3])
    assert {item["reason"] for item in details["left_out"]} == {"framing", "citation marker", "courtesy"}


def test_an_answer_that_is_only_framing_is_unscored_not_passed(services: Services) -> None:
    with pytest.raises(Unscored, match="nothing to check"):
        verdict(services, RECIPE, None, "Based on the provided passages, here is what I found: I hope this helps!")
