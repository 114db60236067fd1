"""LLM-written test cases: the offline generator picks what to ask (the chunk, the fact, the step, the wrong
figure) and drafts a case; a language model rewrites it from the source chunks as a customer would ask it.

The seed's generators write every question with an LLM agent. Keeping the offline pick and draft keeps what
makes each question type testable (sources, in-scope or not, a wrong premise), and gives each case a
fallback: a reply that is not valid JSON for the type's template, or that breaks the type's condition (a
yes/no answer that starts with neither, a number question with no figure...), leaves the offline case in
place. Every case says who wrote it in its categories: ``written_by:llm:<model>`` or ``written_by:offline``
(plus ``llm_fallback`` when the model was asked and failed). Prompts are data: one judge template per
question type, ``assay/judges/templates/generate_<question type>.toml``.
"""

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from assay.generation.base import LanguageModel, requires
from assay.models import Chunk, TestCase

WRITTEN_BY = "written_by:"
OFFLINE = f"{WRITTEN_BY}offline"
LLM_FALLBACK = "llm_fallback"
_DIGIT = re.compile(r"\d")
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
log = logging.getLogger(__name__)


def model_name(llm: LanguageModel) -> str:
    """The model's name when it has one (``JudgeLanguageModel.name``), else its class name."""
    name = getattr(llm, "name", None)
    return name if isinstance(name, str) and name else type(llm).__name__


def written_by_llm(llm: LanguageModel) -> str:
    return f"{WRITTEN_BY}llm:{model_name(llm)}"


def marked(case: TestCase, *categories: str) -> TestCase:
    return case.model_copy(update={"categories": [*case.categories, *categories]})


def complete_all(llm: LanguageModel, prompts: Sequence[str], system: str) -> list[str | Exception]:
    """One reply (or the exception that stood in for it) per prompt: batched and concurrent when the model
    offers ``complete_many``, one by one otherwise."""
    many = getattr(llm, "complete_many", None)
    if callable(many):
        return list(many(list(prompts), system=system))
    replies: list[str | Exception] = []
    for prompt in prompts:
        try:
            replies.append(llm.complete(prompt, system=system))
        except Exception as error:  # any model host: its failure only means this case stays offline
            replies.append(error)
    return replies


def json_prompt(template_id: str, variables: dict[str, Any]) -> tuple[str, str]:
    """(system, user) of a judge template, the user text ending with the reply's JSON schema (its title is
    the template id, which tells a rule-based test model which template it answers)."""
    from assay.judges.templates import template

    chosen = template(template_id)
    messages = chosen.render(variables)
    system = next((message["content"] for message in messages if message["role"] == "system"), "")
    schema = json.dumps(chosen.schema, ensure_ascii=False)
    instruction = f"Reply with only a JSON object that matches this JSON schema:\n{schema}"
    return system, f"{messages[-1]['content']}\n\n{instruction}"


def read_json(reply: str | Exception, template_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """(reply, None) when the reply is one JSON object valid for the template's schema, else (None, why)."""
    if isinstance(reply, Exception):
        return None, f"the model gave no reply: {reply}"
    from assay.judges.client import parse_verdict
    from assay.judges.templates import template

    return parse_verdict(reply, template(template_id))


def write_cases(
    cases: Sequence[TestCase], chunks: Sequence[Chunk], llm: LanguageModel, question_type: str, speaker: str
) -> list[TestCase]:
    """The offline ``cases`` rewritten by ``llm`` from their source chunks, each marked with who wrote it;
    cases of a question type with no ``generate_<type>`` template stay offline."""
    from assay.judges.templates import builtin_templates

    template_id = f"generate_{question_type}"
    if template_id not in builtin_templates():  # a question type with no writing prompt: offline as it was
        return [marked(case, OFFLINE) for case in cases]
    if not cases:
        return []
    by_ref = {chunk.ref: chunk for chunk in chunks}
    asked = [json_prompt(template_id, _variables(case, by_ref, speaker)) for case in cases]
    system = asked[0][0]
    replies = complete_all(llm, [user for _, user in asked], system)
    written: list[TestCase] = []
    for case, reply in zip(cases, replies, strict=True):
        rewritten, problem = rewrite(case, reply, template_id, question_type)
        if rewritten is not None and any(rewritten.prompt == other.prompt for other in written):
            rewritten, problem = None, f"the model wrote the same question twice: {rewritten.prompt!r}"
        if rewritten is None:
            log.info("case %s stays offline: %s", case.key, problem)
            written.append(marked(case, OFFLINE, LLM_FALLBACK))
        else:
            written.append(marked(rewritten, written_by_llm(llm)))
    return written


def rewrite(
    case: TestCase, reply: str | Exception, template_id: str, question_type: str
) -> tuple[TestCase | None, str | None]:
    """The case with the model's question, expected answer and condition, or (None, why the reply is not
    usable for this question type)."""
    data, problem = read_json(reply, template_id)
    if data is None:
        return None, problem
    question, answer = " ".join(data["question"].split()), " ".join(data["expected_answer"].split())
    facts = [" ".join(fact.split()) for fact in data.get("required_facts", []) if fact.strip()]
    problem = _type_problem(question, answer, facts, data, question_type)
    if problem is not None:
        return None, problem
    if not question.endswith("?"):
        question = question.rstrip(".!") + "?"
    return case.model_copy(
        update={"prompt": question, "expected_output": answer, "output_condition": requires(*facts)}
    ), None


def _type_problem(question: str, answer: str, facts: list[str], data: dict[str, Any], question_type: str) -> str | None:
    """What makes the reply unusable as a case of ``question_type``; None when it will do."""
    if len(question.split()) < 3:
        return f"the question is too short: {question!r}"
    if not answer:
        return "the expected answer is empty"
    missing = [fact for fact in facts if fact.lower() not in answer.lower()]
    if missing:
        return f"the expected answer does not state its required facts {missing}"
    if question_type == "yes_no":
        said = _YES_NO.match(answer)
        if said is None or said.group(1).lower() != data.get("answer_is"):
            return f"the expected answer must start with {data.get('answer_is')!r}: {answer[:80]!r}"
    if question_type in ("numerical", "misleading_premise") and not any(_DIGIT.search(fact) for fact in facts):
        return "no required fact states a figure"
    if question_type == "out_of_scope" and facts:
        return "an out-of-scope question cannot require facts from the documents"
    return None


def _variables(case: TestCase, by_ref: dict[str, Chunk], speaker: str) -> dict[str, str]:
    passages = "\n\n".join(
        f"[{number}] {ref}\n{by_ref[ref].text.strip()}"
        for number, ref in enumerate((ref for ref in case.sources if ref in by_ref), start=1)
    )
    return {
        "topic": case.topic or "",
        "organisation": speaker,
        "passages": passages,
        "draft_question": case.prompt,
        "draft_answer": case.expected_output,
    }
