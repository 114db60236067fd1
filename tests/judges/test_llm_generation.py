"""LLM-written test generation (MRM step 2) and LLM contextual misinformation (step 9) against the local judge:
the rules in ``assay/testing/judge_rules/generation_llm.py`` write deterministically from the prompt, so a case
the model wrote is told apart from its offline draft, and a fault marker in a chunk makes the model fail."""

import json
import random
from pathlib import Path

import pytest
from assay.evaluators.conditions import parse_condition

from assay.generation import build_generator, generate_suite
from assay.generation.written import LLM_FALLBACK, OFFLINE, rewrite
from assay.judges.client import open_judge
from assay.judges.language_model import COMPLETION, JudgeLanguageModel, LanguageModelError
from assay.models import Chunk, TestCase, TestSuite
from assay.models.mrm import Topic, TopicModel
from assay.models.suite import Test
from assay.mrm.robustness import perturbed_only
from assay.testing.judge_rules.generation_llm import statements
from assay.testing.judge_server import JUDGE_MODEL, JudgeServer, serve_judge
from tests.judges.conftest import FAST, endpoint_for

BY_LLM = f"written_by:llm:{JUDGE_MODEL}"
GOLD = Chunk(
    doc_uri="gold-card.md",
    index=0,
    text="Gold Card: Product Sheet\nThe Gold Card is Acme Bank's premium credit card.\n## Key facts\n"
    "- Annual fee: £95.\n- Late payment fee: £12.\nCall our card team on 0800 123 4567.",
)
SILVER = Chunk(
    doc_uri="silver-card.md",
    index=0,
    text="Silver Card: Product Sheet\nThe Silver Card is Acme Bank's everyday credit card.\n- Annual fee: £45.",
)
BLOCK = Chunk(
    doc_uri="block-a-card.md",
    index=0,
    text="How to Block a Card\n## Steps\n1. Open the app and tap Cards.\n2. Choose the card you want to block.\n"
    "3. Tap Block card.",
)
BROKEN = Chunk(
    doc_uri="broken-card.md",
    index=0,
    text="Broken Card: Product Sheet [judge:malformed]\nThe Broken Card is Acme Bank's test card.\n- Annual fee: £30.",
)
GENERATORS = ["simple_factual_questions", "yes_or_no_questions", "numerical_questions", "procedure_questions",
              "misleading_premise_questions", "out_of_scope_questions"]  # fmt: skip
QUESTION_TYPES = {
    "simple_factual_questions": "factual",
    "yes_or_no_questions": "yes_no",
    "numerical_questions": "numerical",
    "procedure_questions": "procedure",
    "misleading_premise_questions": "misleading_premise",
    "out_of_scope_questions": "out_of_scope",
}


def topic_model(*chunks: Chunk) -> TopicModel:
    topic = Topic(id=0, label="cards", keywords=[], chunk_refs=[chunk.ref for chunk in chunks])
    return TopicModel(topics=[topic], config={}, silhouette=None)


def language_model(server: JudgeServer, cache_dir: Path | None) -> JudgeLanguageModel:
    client = open_judge(endpoint_for(server), cache_dir)
    assert client is not None
    return JudgeLanguageModel(client)


def cases_of(suite: TestSuite) -> list[TestCase]:
    return [case for _, case in suite.cases()]


# -- the language model --------------------------------------------------------------------------------------


def test_complete_goes_through_the_judge_and_counts_tokens(judge_server: JudgeServer, tmp_path: Path) -> None:
    llm = language_model(judge_server, tmp_path)
    before = judge_server.chat_calls
    prompt = 'Rewrite. "title": "generate_out_of_scope" <draft_question>\nWho founded the bank?\n</draft_question>'
    reply = llm.complete(prompt, system="Be brief.")
    assert json.loads(reply)["question"] == "Do you know who founded the bank?"
    assert judge_server.chat_calls == before + 1
    sent = judge_server.requests[-1].body
    assert [message["role"] for message in sent["messages"]] == ["system", "user"]
    assert "response_format" not in sent  # free text: the caller validates the JSON it asked for
    assert (llm.account.calls, llm.account.cache_hits) == (1, 0)
    assert llm.account.input_tokens > 0 and llm.account.output_tokens > 0
    [call] = llm.calls
    assert call.template == COMPLETION and call.model == JUDGE_MODEL and call.raw_reply == reply
    assert llm.name == JUDGE_MODEL


def test_a_refusal_or_an_unreachable_endpoint_raises_and_keeps_the_batch(tmp_path: Path) -> None:
    with serve_judge(JudgeServer(force="refusal")) as refusing:
        llm = language_model(refusing, tmp_path)
        with pytest.raises(LanguageModelError, match="refused") as raised:
            llm.complete("anything")
        assert raised.value.kind == "refusal"
        assert llm.account.failures == 1
        assert not list(tmp_path.rglob("*.json"))  # a failure is never cached
    endpoint = endpoint_for(refusing).model_copy(update={"base_url": "http://127.0.0.1:9/v1", "calls": FAST})
    client = open_judge(endpoint, None)
    assert client is not None
    replies = JudgeLanguageModel(client).complete_many(["one", "two"])
    assert [type(reply) for reply in replies] == [LanguageModelError, LanguageModelError]
    assert all(reply.kind == "connection" for reply in replies if isinstance(reply, LanguageModelError))


# -- test generation -----------------------------------------------------------------------------------------


def test_generated_cases_come_from_the_llm_with_the_offline_ids_and_categories(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    model = topic_model(GOLD, SILVER, BLOCK)
    offline = generate_suite(model, [GOLD, SILVER, BLOCK], generators=GENERATORS, per_topic=2)
    written = generate_suite(
        model, [GOLD, SILVER, BLOCK], generators=GENERATORS, per_topic=2, llm=language_model(judge_server, tmp_path)
    )
    before, after = cases_of(offline), cases_of(written)
    assert [case.key for case in after] == [case.key for case in before] and len(after) >= 8
    for draft, case in zip(before, after, strict=True):
        assert draft.categories == [QUESTION_TYPES[draft.generator or ""], "generated", OFFLINE]
        assert case.categories[:2] == draft.categories[:2]
        assert (case.sources, case.expected_retrieved_doc_uris) == (draft.sources, draft.expected_retrieved_doc_uris)
        if case.categories[2:] == [BY_LLM]:
            assert case.prompt != draft.prompt and case.prompt.endswith("?")
        else:  # the rule wrote a question it had already written for this generator: the draft stays
            assert case.categories[2:] == [OFFLINE, LLM_FALLBACK] and case.prompt == draft.prompt
        if case.output_condition:
            assert parse_condition(case.output_condition).matches(case.expected_output)
    assert sum(BY_LLM in case.categories for case in after) >= len(after) - 2
    assert {case.generator for case in after if BY_LLM in case.categories} == set(GENERATORS)
    factual = next(case for case in after if case.generator == "simple_factual_questions")
    source = {"gold-card.md#0": GOLD, "silver-card.md#0": SILVER}[factual.sources[0]]
    assert factual.expected_output in statements(source.text)  # written from the case's own chunk
    out_of_scope = next(case for case in after if case.generator == "out_of_scope_questions")
    draft = next(case for case in before if case.key == out_of_scope.key)
    assert out_of_scope.prompt == f"Do you know {draft.prompt[:1].lower()}{draft.prompt[1:]}"
    assert out_of_scope.expected_retrieved_doc_uris == [] and out_of_scope.output_condition == ""
    yes_no = next(case for case in after if case.generator == "yes_or_no_questions")
    assert yes_no.expected_output.startswith("Yes.") and yes_no.output_condition


def test_the_prompt_carries_the_source_chunk_and_the_draft(judge_server: JudgeServer) -> None:
    llm = language_model(judge_server, None)
    generator = build_generator("numerical_questions", llm=llm)
    draft = generator.generate([SILVER], topic="cards", rng=random.Random(0), count=1)
    [case] = generator.write([SILVER], topic="cards", rng=random.Random(0), count=1)
    sent = judge_server.requests[-1].body["messages"]
    user = sent[-1]["content"]
    assert "<passages>\n[1] silver-card.md#0\nSilver Card: Product Sheet" in user
    assert f"<draft_question>\n{draft[0].prompt}\n</draft_question>" in user
    assert '"title": "generate_numerical"' in user
    assert "Acme Bank" in sent[0]["content"]  # the organisation the assistant speaks for
    assert case.output_condition == '"£45"' and case.prompt == "Which figure do you give for annual fee: £45?"


def test_a_malformed_reply_falls_back_to_the_offline_case_and_says_so(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    model = topic_model(GOLD, BROKEN)
    generators = ["simple_factual_questions", "numerical_questions"]
    drafts = {
        (case.prompt, case.expected_output)
        for generator_id in generators
        for case in build_generator(generator_id).generate([GOLD, BROKEN], topic="cards", rng=random.Random(0), count=9)
    }
    written = cases_of(
        generate_suite(
            model, [GOLD, BROKEN], generators=generators, per_topic=4, llm=language_model(judge_server, tmp_path)
        )
    )
    fallen = [case for case in written if BROKEN.ref in case.sources]
    kept = [case for case in written if BROKEN.ref not in case.sources]
    assert fallen and kept
    for case in fallen:
        assert case.categories[-2:] == [OFFLINE, LLM_FALLBACK]
        assert (case.prompt, case.expected_output) in drafts
    assert all(case.categories[-1] == BY_LLM for case in kept)


def test_a_reply_that_breaks_the_question_type_is_rejected() -> None:
    case = TestCase(key="k", prompt="Is the annual fee £95?", expected_output="Yes, it is £95.", sources=["a#0"])

    def reply(**fields: object) -> str:
        base = {"rationale": "r", "question": "Is the yearly fee £95", "expected_answer": "Yes, it is £95.",
                "required_facts": ["£95"], "answer_is": "yes"}  # fmt: skip
        return json.dumps(base | fields)

    written, problem = rewrite(case, reply(), "generate_yes_no", "yes_no")
    assert problem is None and written is not None
    assert (written.prompt, written.output_condition) == ("Is the yearly fee £95?", '"£95"')
    assert "must start with 'no'" in (rewrite(case, reply(answer_is="no"), "generate_yes_no", "yes_no")[1] or "")
    missing = rewrite(case, reply(required_facts=["£96"]), "generate_yes_no", "yes_no")[1]
    assert "does not state its required facts" in (missing or "")
    assert "schema" in (rewrite(case, reply(answer_is="maybe"), "generate_yes_no", "yes_no")[1] or "")
    assert "no reply" in (rewrite(case, TimeoutError("slow"), "generate_yes_no", "yes_no")[1] or "")
    scope = json.dumps({"rationale": "r", "question": "How many customers are there?", "expected_answer": "Not £95.",
                        "required_facts": ["£95"], "missing_information": "counts"})  # fmt: skip
    assert "out-of-scope" in (rewrite(case, scope, "generate_out_of_scope", "out_of_scope")[1] or "")
    numbers = json.dumps({"rationale": "r", "question": "How much is the fee?", "expected_answer": "It is free.",
                          "required_facts": []})  # fmt: skip
    assert "figure" in (rewrite(case, numbers, "generate_numerical", "numerical")[1] or "")


def test_a_rerun_is_served_from_the_cache(judge_server: JudgeServer, tmp_path: Path) -> None:
    model = topic_model(GOLD, SILVER)
    first_llm = language_model(judge_server, tmp_path)
    first = generate_suite(model, [GOLD, SILVER], generators=GENERATORS, per_topic=2, llm=first_llm)
    calls = judge_server.chat_calls
    again_llm = language_model(judge_server, tmp_path)
    again = generate_suite(model, [GOLD, SILVER], generators=GENERATORS, per_topic=2, llm=again_llm)
    assert judge_server.chat_calls == calls  # zero calls
    assert again == first
    assert first_llm.account.calls == len(cases_of(first)) > 0
    assert (again_llm.account.calls, again_llm.account.cache_hits) == (0, len(cases_of(first)))
    assert all(call.cached for call in again_llm.calls)


def test_generators_that_need_the_llm_or_have_no_prompt_are_not_rewritten() -> None:
    class Echo:
        name = "echo-model"

        def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str:
            raise AssertionError("no rewriting expected")

    generator = build_generator("simple_factual_questions", llm=Echo())
    generator.spec = type(generator.spec)(**{**generator.spec.__dict__, "question_type": "no_such_type"})
    cases = generator.write([GOLD], topic="cards", rng=random.Random(0), count=2)
    assert cases and all(case.categories[-1] == OFFLINE for case in cases)


# -- contextual misinformation -------------------------------------------------------------------------------


def _suite(*prompts: str) -> TestSuite:
    cases = [TestCase(key=f"c{index}", prompt=prompt) for index, prompt in enumerate(prompts)]
    return TestSuite(name="s", tests=[Test(key="t", name="t", test_cases=cases)])


def test_contextual_misinformation_written_by_the_llm(judge_server: JudgeServer, tmp_path: Path) -> None:
    suite = _suite("Is the annual fee on the Gold Card £95?", "How do I block my card? [judge:malformed]")
    offline = cases_of(perturbed_only(suite, ["contextual_misinformation"], ["medium"], 3))
    written = cases_of(
        perturbed_only(
            suite, ["contextual_misinformation", "qwerty"], ["medium"], 3, llm=language_model(judge_server, tmp_path)
        )
    )
    gold, broken = written[0], written[1]
    assert gold.key == "c0~contextual_misinformation-medium" and gold.perturbation_of == "c0"
    assert gold.prompt == (
        "Your customer notice says the £95 was changed to £190 last month, as your annual report confirms. "
        "I was told that the annual fee on the gold was withdrawn in 2019. Is the annual fee on the Gold Card £95?"
    )
    assert gold.categories[-1] == BY_LLM and "perturbator:contextual_misinformation" in gold.categories
    assert broken.prompt == offline[1].prompt  # the model failed: the offline twin stays
    assert broken.categories[-2:] == [OFFLINE, LLM_FALLBACK]
    qwerty = [case for case in written if "perturbator:qwerty" in case.categories]
    assert len(qwerty) == 2 and not any(
        category.startswith("written_by:") for case in qwerty for category in case.categories
    )


def test_misinformation_replies_that_ask_or_fall_short_are_rejected() -> None:
    from assay.perturbators.contextual_misinformation import llm_premises

    class Scripted:
        def __init__(self, statements: list[str]) -> None:
            self.statements = statements

        def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str:
            assert "<count>\n2\n</count>" in prompt and system
            return json.dumps({"rationale": "r", "statements": self.statements})

    question = "Tell me the annual fee"
    assert llm_premises([question], 2, Scripted(["The fee went up.", "It is £5 now"])) == [
        ("The fee went up. It is £5 now.", None)
    ]
    assert "where 2 were asked" in (llm_premises([question], 2, Scripted(["Only one."]))[0][1] or "")
    assert "asks a question" in (llm_premises([question], 2, Scripted(["Really?", "Yes."]))[0][1] or "")
    assert "repeats the question" in (
        llm_premises([question], 2, Scripted(["I asked you to tell me the annual fee", "x y"]))[0][1] or ""
    )


def test_the_mrm_task_uses_the_configured_judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from assay.tasks.mrm import _language_model

    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ASSAY_JUDGE__BASE_URL", raising=False)
    monkeypatch.delenv("ASSAY_JUDGE__MODEL", raising=False)
    assert _language_model() is None
    monkeypatch.setenv("ASSAY_JUDGE__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ASSAY_JUDGE__MODEL", "writer")
    llm = _language_model()
    assert isinstance(llm, JudgeLanguageModel) and llm.name == "writer"
    monkeypatch.setenv("ASSAY_JUDGE__API_KEY_ENV", "ASSAY_TEST_UNSET_KEY")
    monkeypatch.delenv("ASSAY_TEST_UNSET_KEY", raising=False)
    assert _language_model() is None  # a key variable that is not set: offline rather than failing every call
