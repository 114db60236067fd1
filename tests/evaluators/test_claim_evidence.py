"""What each claim is checked against: the premise the entailment model reads, tool outputs as evidence, and
records as statements."""

from assay.evaluators import CaseContext
from assay.evaluators._claim_entailment import entailment_pairs, premise_for
from assay.evaluators.groundedness import evidence_texts, with_tool_outputs

from assay.models import ToolCall

SENTENCES = [
    "The branch opens at 9 AM.",
    "Parking is free for customers.",
    "The branch closes at 5 PM on weekdays.",
    "Mortgage advisers are available by appointment.",
]


def test_the_premise_is_the_sentences_sharing_most_words_in_context_order() -> None:
    assert premise_for("When does the branch close on weekdays?", SENTENCES, budget=14) == (
        "The branch opens at 9 AM. The branch closes at 5 PM on weekdays."
    )
    assert premise_for("Parking", SENTENCES, budget=1) == "Parking is free for customers."  # the best, however long
    assert entailment_pairs(["Parking is free."], SENTENCES[:2]) == [
        ("The branch opens at 9 AM. Parking is free for customers.", "Parking is free.")
    ]


def test_tool_outputs_are_evidence_once_and_failed_calls_are_not() -> None:
    calls = [
        ToolCall(name="weather", output='{"temperature_c": 18}'),
        ToolCall(name="rates", output="timeout", error="timed out after 5 s"),
        ToolCall(name="noop", output=None),
    ]
    case = CaseContext.build(retrieved_context=["Paris is in France."], actual_output="It is 18 degrees.",
                             tool_calls=calls)  # fmt: skip
    with_tools = with_tool_outputs(case)
    assert [(chunk.doc_uri, chunk.text) for chunk in with_tools.retrieved_context] == [
        ("", "Paris is in France."), ("tool:weather", '{"temperature_c": 18}')
    ]  # fmt: skip
    assert with_tool_outputs(with_tools) == with_tools
    assert evidence_texts(with_tools) == ["Paris is in France.", "temperature c: 18"]
