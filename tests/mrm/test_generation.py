"""MRM step 2: every offline generator on hand-made chunks (exact questions and answers), then the
whole suite on the bundled sample corpus, with one topic per document so no embedding model is needed."""

import random
import re
from dataclasses import dataclass

import pytest
from assay.evaluators.conditions import parse_condition

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.generation import (
    GeneratorSpec,
    QuestionGenerator,
    build_generator,
    generate_suite,
    generator_ids,
    registry,
)
from assay.generation.figures import alter, figures
from assay.generation.phrasing import as_question, lead_in, user_voice
from assay.models import Chunk, TestCase
from assay.models.mrm import Topic, TopicModel

GOLD = Chunk(
    doc_uri="gold-card.md",
    index=0,
    text="Gold Card: Product Sheet\nThe Gold Card is Acme Bank's premium credit card.\n## Key facts\n"
    "- Annual fee: £95.\n- Late payment fee: £12.\nCall our card team on 0800 123 4567.\n"
    "If you pay your balance in full, we will not charge interest on purchases.",
)
GOLD_TERMS = Chunk(
    doc_uri="gold-card.md",
    index=1,
    text="Gold Card: Product Sheet\n- Minimum age: 18.\n"
    "You can withdraw from the agreement within 14 days of receiving your card.",
)
GOLD_FEE = Chunk(doc_uri="gold-card.md", index=0, text="Gold Card: Product Sheet\n- Annual fee: £95.")
SILVER = Chunk(
    doc_uri="silver-card.md",
    index=0,
    text="Silver Card: Product Sheet\nThe Silver Card is Acme Bank's everyday credit card.\n- Annual fee: £45.",
)
PLUS = Chunk(doc_uri="plus-card.md", index=0, text="Plus Card: Product Sheet\n- Monthly fee: £12 per month.")
BLOCK = Chunk(
    doc_uri="block-a-card.md",
    index=0,
    text="How to Block a Card\n## Steps\n1. Open the app and tap Cards.\n2. Choose the card you want to block.\n"
    "3. Tap Block card.",
)


def run(generator_id: str, chunks: list[Chunk], count: int = 10, seed: int = 0) -> list[TestCase]:
    return build_generator(generator_id).generate(chunks, topic="cards", rng=random.Random(seed), count=count)


def test_simple_factual_asks_for_contacts_first_then_statements_then_figures() -> None:
    cases = run("simple_factual_questions", [GOLD])
    assert [(case.prompt, case.expected_output, case.output_condition) for case in cases] == [
        (
            "What number should I call to reach the card team?",
            "Call our card team on 0800 123 4567.",
            '"0800 123 4567"',
        ),
        ("What does Acme Bank say about the Gold Card?", "The Gold Card is Acme Bank's premium credit card.", ""),
        ("What is the annual fee for the Gold Card?", "The annual fee for the Gold Card is £95.", '"£95"'),
        ("What is the late payment fee for the Gold Card?", "The late payment fee for the Gold Card is £12.", '"£12"'),
    ]
    first = cases[0]
    assert first.key == "simple_factual_questions-0"
    assert first.categories == ["factual", "generated"]
    assert first.sources == ["gold-card.md#0"]
    assert first.expected_retrieved_doc_uris == ["gold-card.md"]
    assert (first.topic, first.generator) == ("cards", "simple_factual_questions")


def test_yes_no_states_a_wrong_figure_in_some_questions_and_corrects_it() -> None:
    cases = run("yes_or_no_questions", [GOLD_TERMS])
    assert [(case.prompt, case.expected_output) for case in cases] == [
        (
            "For the Gold Card, do I have 42 days to withdraw from the agreement?",
            "No, you can withdraw from the agreement within 14 days of receiving your card.",
        ),
        ("Is the minimum age for the Gold Card 18?", "Yes, the minimum age for the Gold Card is 18."),
    ]
    assert [case.output_condition for case in cases] == ['"14 days"', '"18"']


def test_numerical_works_out_a_yearly_total_from_a_monthly_charge() -> None:
    (case,) = run("numerical_questions", [PLUS], count=1)
    assert case.prompt == "How much does the monthly fee for the Plus Card come to over a full year?"
    assert (
        case.expected_output == "£144 a year: the monthly fee for the Plus Card is £12 per month, and 12 × £12 = £144."
    )
    assert case.output_condition == '"£144"'


def test_numerical_asks_for_stated_figures() -> None:
    cases = run("numerical_questions", [GOLD_TERMS])
    assert sorted(case.prompt for case in cases) == [
        "For the Gold Card, how long do I have to withdraw from the agreement?",
        "What is the minimum age for the Gold Card?",
    ]


def test_multi_hop_joins_facts_of_two_chunks() -> None:
    cases = run("multi_hop_questions", [GOLD_TERMS, SILVER], count=1, seed=1)
    (case,) = cases
    assert len(set(case.sources)) == 2
    assert case.prompt in {
        "What is the minimum age for the Gold Card, and what is the annual fee for the Silver Card?",
        "For the Gold Card, how long do I have to withdraw from the agreement, and what is the annual fee for the "
        "Silver Card?",
    }
    assert case.output_condition.endswith(' AND "£45"')


def test_multi_hop_asks_two_measures_of_one_product_with_its() -> None:
    (case,) = run(
        "multi_hop_questions",
        [GOLD_FEE, GOLD_TERMS.model_copy(update={"text": "Gold Card: Product Sheet\n- Minimum age: 18."})],
    )
    assert case.prompt == "What is the annual fee for the Gold Card, and what is its minimum age?"
    assert case.expected_output == "The annual fee for the Gold Card is £95. The minimum age for the Gold Card is 18."
    assert case.output_condition == '"£95" AND "18"'
    assert case.sources == ["gold-card.md#0", "gold-card.md#1"]


def test_comparison_names_the_higher_figure() -> None:
    cases = run("comparison_questions", [GOLD, SILVER])
    assert [(case.prompt, case.expected_output, case.output_condition) for case in cases] == [
        (
            "Which has the higher annual fee: the Gold Card or the Silver Card?",
            "The Gold Card has the higher annual fee: £95, compared with £45. The annual fee for the Gold Card is £95.",
            '"£95"',
        ),
        (
            "Which is higher for the Gold Card: the annual fee or the late payment fee?",
            "The annual fee is higher: £95, compared with £12 for the late payment fee.",
            '"£95"',
        ),
    ]


def test_inference_turns_a_conditional_rule_into_the_askers_situation() -> None:
    (case,) = run("inference_questions", [GOLD])
    assert case.prompt == "If I pay my balance in full, will Acme Bank charge interest on purchases?"
    assert case.expected_output == "No, if you pay your balance in full, we will not charge interest on purchases."
    assert case.categories == ["inference", "generated"]


def test_procedure_asks_first_step_all_steps_and_next_step() -> None:
    cases = run("procedure_questions", [BLOCK])
    assert {case.prompt: case.expected_output for case in cases} == {
        "What is the first step to block a card?": "The first step is to open the app and tap Cards.",
        "What are the steps to block a card?": "1. Open the app and tap Cards. 2. Choose the card you want to block. "
        "3. Tap Block card.",
        "After I open the app and tap Cards, what is the next step to block a card?": "The next step is to choose the "
        "card you want to block.",
        "After I choose the card I want to block, what is the next step to block a card?": "The next step is to tap "
        "Block card.",
    }


def test_ambiguity_asks_which_one_and_lists_the_options() -> None:
    cases = run("ambiguity_handling", [SILVER, GOLD_FEE])
    options = "the annual fee for the Silver Card is £45; the annual fee for the Gold Card is £95."
    assert sorted(case.prompt for case in cases) == ["How much is it?", "What is the annual fee?"]
    for case in cases:
        assert case.expected_output.endswith(f"The documents give: {options}")
        assert "which one do you mean?" in case.expected_output
        assert case.sources == ["silver-card.md#0", "gold-card.md#0"]


def test_out_of_scope_says_the_documents_do_not_cover_it() -> None:
    cases = run("out_of_scope_questions", [SILVER])
    assert sorted(case.prompt for case in cases) == [
        "How does the annual fee for the Silver Card compare with what other providers offer?",
        "How many customers currently have the Silver Card?",
        "What was the annual fee for the Silver Card in 2011?",
    ]
    for case in cases:
        assert case.expected_output.startswith("The documents do not contain this information")
        assert case.expected_retrieved_doc_uris == []
        assert case.sources == ["silver-card.md#0"]


def test_out_of_scope_skips_what_the_topic_does_cover() -> None:
    covered = SILVER.model_copy(update={"text": SILVER.text + "\nHow many customers have it? 1,000."})
    prompts = [case.prompt for case in run("out_of_scope_questions", [covered])]
    assert "How many customers currently have the Silver Card?" not in prompts


def test_misleading_premise_is_corrected_with_the_documented_figure() -> None:
    (case,) = run("misleading_premise_questions", [SILVER])
    assert case.prompt == "Why is the annual fee for the Silver Card £135?"
    assert (
        case.expected_output
        == "The premise is incorrect: it is £45, not £135. The annual fee for the Silver Card is £45."
    )
    assert case.output_condition == '"£45"'


def test_sentences_that_fit_no_template_give_no_question() -> None:
    plain = Chunk(doc_uri="note.md", index=0, text="Note\nThanks for reading.\nSee you soon!")
    assert all(run(generator_id, [plain]) == [] for generator_id in generator_ids())


def test_phrasing_turns_the_organisations_voice_into_the_customers() -> None:
    assert user_voice("we'll refund you if you tell us", "Acme Bank") == "Acme Bank will refund me if I tell Acme Bank"
    assert user_voice("we charge your account", "Acme Bank") == "Acme Bank charges my account"
    assert as_question("what is the fee.  ") == "What is the fee?"
    assert lead_in("No", "The fee is £5.") == "No, the fee is £5."
    assert lead_in("Yes", "Plus Current Account holders pay no fee") == "Yes, Plus Current Account holders pay no fee."


def test_figures_are_found_and_altered_in_kind() -> None:
    assert [(f.kind, f.text) for f in figures("Call 0800 555 0142: £2,500 at 39.9% within 14 days, age 18.")] == [
        ("money", "£2,500"),
        ("percent", "39.9%"),
        ("duration", "14 days"),
        ("count", "18"),
    ]
    rng = random.Random(3)
    assert [alter("£2,500", rng), alter("3-5 working days", rng), alter("one month", rng)] == [
        "£5,000",
        "4-8 working days",
        "2 months",
    ]


@dataclass
class _NeedsModel(QuestionGenerator):
    spec = GeneratorSpec(
        id="needs_model", display_name="Needs a model", description="test", question_type="x", needs_llm=True
    )

    def generate(self, chunks, *, topic, rng, count):  # type: ignore[no-untyped-def]
        assert self.llm is not None
        return [self.case(0, topic=topic, prompt=self.llm.complete("q") + "?", expected_output="a", sources=[])]


class _FakeLLM:
    def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str:
        return "What is asked"


def test_llm_backed_generators_slot_in_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._REGISTRY, "needs_model", _NeedsModel)
    with pytest.raises(ValueError, match="needs an LLM"):
        build_generator("needs_model")
    model = TopicModel(
        topics=[Topic(id=0, label="cards", keywords=[], chunk_refs=[GOLD.ref])], config={}, silhouette=None
    )
    suite = generate_suite(model, [GOLD], generators=["needs_model"], llm=_FakeLLM())
    assert [case.key for _, case in suite.cases()] == ["gen-0-needs_model-0"]
    assert "needs_model" not in generate_suite(model, [GOLD]).description  # default: offline generators only


def test_unknown_generator_and_foreign_chunks_are_refused() -> None:
    model = TopicModel(
        topics=[Topic(id=0, label="cards", keywords=[], chunk_refs=["other.md#0"])], config={}, silhouette=None
    )
    with pytest.raises(ValueError, match="unknown question generator 'nope'"):
        generate_suite(model, [GOLD], generators=["nope"])
    with pytest.raises(ValueError, match=r"topic 0 \('cards'\) names chunks .*other\.md#0"):
        generate_suite(model, [GOLD])


@pytest.fixture(scope="module")
def sample() -> tuple[TopicModel, list[Chunk]]:
    chunks = chunk_corpus(load_corpus(sample_data_path() / "corpus"))
    documents = sorted({chunk.doc_uri for chunk in chunks})
    topics = [
        Topic(id=index, label=uri, keywords=[], chunk_refs=[chunk.ref for chunk in chunks if chunk.doc_uri == uri])
        for index, uri in enumerate(documents)
    ]
    return TopicModel(topics=topics, config={"method": "one topic per document"}, silhouette=None), chunks


def test_suite_on_the_sample_corpus(sample: tuple[TopicModel, list[Chunk]]) -> None:
    model, chunks = sample
    suite = generate_suite(model, chunks, seed=0)
    cases = [case for _, case in suite.cases()]
    refs = {chunk.ref for chunk in chunks}
    assert len({case.key for case in cases}) == len(cases) > 100
    assert len({case.generator for case in cases}) >= 10
    assert [test.key for test in suite.tests] == [f"topic-{topic.id}" for topic in model.topics]
    for test, case in suite.cases():
        topic_id = int(test.key.removeprefix("topic-"))
        assert re.fullmatch(rf"gen-{topic_id}-{case.generator}-\d+", case.key)
        assert case.topic == test.name and "generated" in case.categories
        assert case.sources and set(case.sources) <= refs
        documents = {ref.rsplit("#", 1)[0] for ref in case.sources}
        if case.generator == "out_of_scope_questions":
            assert case.expected_retrieved_doc_uris == []
        else:
            assert set(case.expected_retrieved_doc_uris) == documents
        if case.output_condition:  # the expected answer itself must satisfy the condition
            assert parse_condition(case.output_condition).matches(case.expected_output), case


def test_generated_questions_read_naturally(sample: tuple[TopicModel, list[Chunk]]) -> None:
    model, chunks = sample
    for _, case in generate_suite(model, chunks, seed=0, per_topic=5).cases():
        prompt = case.prompt
        assert prompt.endswith("?") and prompt.count("?") == 1 + prompt.count('?"'), prompt
        assert prompt[0].isupper(), prompt
        assert "  " not in prompt and " ?" not in prompt and " ," not in prompt, prompt
        assert not re.search(r"\b(?:we|us|our|you|your)\b", prompt.split('"')[0], re.IGNORECASE), prompt
        answer = case.expected_output
        assert "  " not in answer and (answer[0].isupper() or answer[0].isdigit() or answer[0] == "£"), answer


def test_suite_is_deterministic_and_filters_topics(sample: tuple[TopicModel, list[Chunk]]) -> None:
    model, chunks = sample
    first = generate_suite(model, chunks, seed=3, per_topic=2)
    assert first == generate_suite(model, chunks, seed=3, per_topic=2)
    assert first != generate_suite(model, chunks, seed=4, per_topic=2)
    only = generate_suite(model, chunks, seed=3, per_topic=2, topic_ids={1, 2}, generators=["procedure_questions"])
    assert [test.key for test in only.tests] == ["topic-1", "topic-2"]
    assert {case.generator for _, case in only.cases()} <= {"procedure_questions"}
