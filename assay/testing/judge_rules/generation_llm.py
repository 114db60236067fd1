"""Rules for the LLM writing templates (test generation, contextual misinformation): a crude but
deterministic "model" that writes from the request, so the tests can tell an LLM-written case from the
offline draft and check that the right passages reached the prompt.

Generation rules take the passages' statement closest to the draft answer (one with a figure where the type
needs one) and ask about its opening words; the misinformation rule doubles the question's first figure. A passage
without a figure makes the numerical rule reply with no required figure, which the generator must reject.
"""

import re

from assay.testing.judge_rules import Verdict, coverage, rule, sentences

_HEADER = re.compile(r"^\[\d+\]\s+\S+#\d+$")
_FIGURE = re.compile(r"£?\d[\d,]*(?:\.\d+)?%?")
_SUBJECT_WORDS = 6
GENERAL_TYPES = ("factual", "procedure", "multi_hop", "comparison", "inference")


def statements(passages: str) -> list[str]:
    """The sentences of the passages, without their '[n] ref' headers, title lines or list bullets."""
    found = []
    for line in passages.splitlines():
        line = line.strip().lstrip("-#0123456789. ").strip()
        if not line or _HEADER.match(line) or (":" in line[:40] and not line.endswith(".")):
            continue
        found += [sentence for sentence in sentences(line) if len(sentence.split()) >= 3]
    return found


def _statement(inputs: dict[str, str], *, figure: bool = False) -> str:
    """The statement the draft answer rests on most (first of equals), one with a figure where asked."""
    found = statements(inputs.get("passages", ""))
    with_figure = [sentence for sentence in found if _FIGURE.search(sentence)]
    chosen = (with_figure if figure and with_figure else found) or [inputs.get("draft_answer", "")]
    draft = inputs.get("draft_answer", "")
    return max(chosen, key=lambda sentence: coverage(sentence, draft))


def _subject(statement: str) -> str:
    return " ".join(statement.rstrip(".!").split()[:_SUBJECT_WORDS]).lower()


def _figures(statement: str) -> list[str]:
    return [match.group(0).rstrip(",.") for match in _FIGURE.finditer(statement)]


def _written(question: str, answer: str, facts: list[str], **extra: object) -> Verdict:
    return {"rationale": "Rests on passage 1.", "question": question, "expected_answer": answer,
            "required_facts": facts, **extra}  # fmt: skip


@rule(*(f"generate_{kind}" for kind in GENERAL_TYPES))
def general(inputs: dict[str, str]) -> Verdict:
    statement = _statement(inputs)
    return _written(f"What do your documents say about {_subject(statement)}?", statement, _figures(statement))


@rule("generate_yes_no")
def yes_no(inputs: dict[str, str]) -> Verdict:
    statement = _statement(inputs, figure=True)
    claim = statement.rstrip(".!")
    return _written(f"Is it right that {claim[:1].lower()}{claim[1:]}?", f"Yes. {statement}", _figures(statement),
                    answer_is="yes")  # fmt: skip


@rule("generate_numerical")
def numerical(inputs: dict[str, str]) -> Verdict:
    statement = _statement(inputs, figure=True)
    return _written(f"Which figure do you give for {_subject(statement)}?", statement, _figures(statement))


@rule("generate_ambiguous")
def ambiguous(inputs: dict[str, str]) -> Verdict:
    found = statements(inputs.get("passages", "")) or [inputs.get("draft_answer", "")]
    readings = (found * 2)[:2]
    answer = f"Which one do you mean? The documents say: {' '.join(readings)}"
    return _written(f"What about {inputs.get('topic', 'this')}?", answer, [], readings=readings)


@rule("generate_out_of_scope")
def out_of_scope(inputs: dict[str, str]) -> Verdict:
    draft = inputs.get("draft_question", "").rstrip("?")
    return _written(f"Do you know {draft[:1].lower()}{draft[1:]}?",
                    "The documents do not contain this information, so I cannot say.", [],
                    missing_information="customer numbers")  # fmt: skip


@rule("generate_misleading_premise")
def misleading_premise(inputs: dict[str, str]) -> Verdict:
    statement = _statement(inputs, figure=True)
    figures = _figures(statement)
    right = figures[0] if figures else "the documented figure"
    wrong = _doubled(right)
    question = f"Why is it {wrong} for {_subject(statement)}?"
    return _written(question, f"The premise is wrong: it is {right}, not {wrong}. {statement}", figures[:1],
                    false_premise=f"It is {wrong}.")  # fmt: skip


@rule("misinformation_premise")
def misinformation_premise(inputs: dict[str, str]) -> Verdict:
    question = inputs.get("question", "")
    count = int(inputs.get("count", "1") or 1)
    figures = _figures(question)
    subject = " ".join(question.rstrip("?").split()[1 : _SUBJECT_WORDS + 1]).lower() or "this"  # no "Is"/"How"
    made = []
    if figures:
        made.append(f"Your customer notice says the {figures[0]} was changed to {_doubled(figures[0])} last month")
    made += [f"I was told that {subject} was withdrawn in 2019", f"My branch said {subject} is set by the regulator"]
    if count > 1:
        made[0] += ", as your annual report confirms"
    return {"rationale": "Plausible changes to the same product.", "statements": made[:count]}


def _doubled(figure: str) -> str:
    """'£95' -> '£190': a different figure written the same way."""
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", figure)
    if digits is None:
        return figure
    value = float(digits.group(0).replace(",", "")) * 2
    shown = f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"
    return figure[: digits.start()] + shown + figure[digits.end() :]
