"""Parameterizable BYOP (bring your own prompt): the user's prompt, sent to the LLM judge, decides whether
each answer passes (seed 002). Binary only: the judge must say true (pass) or false (fail).

The prompt may use ``question``, ``expected_answer``, ``retrieved_context`` and ``actual_answer``, written as
Jinja2 (``{{ actual_answer }}``) or in the manual's single braces (``{actual_answer}``). It becomes a judge
template at build time (``JudgeTemplate.build``, id ``byop``, version = a short hash of the prompt), so a bad
prompt fails when the evaluator is built, naming the parameter, and the evidence of every case records which
prompt judged it. For a RAG case whose prompt judges the actual answer but not the retrieved context, each
retrieved chunk is also judged in the answer's place (the manual's retrieval failures).
"""

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jinja2
import jinja2.meta
from assay.evaluators._binary_judge import binary_judge_spec, binary_scores, retrieval_verdict
from assay.evaluators._judged import CaseJudge, JudgedEvaluator
from assay.evaluators.base import CaseContext, Scored, golden_pair
from assay.evaluators.registry import register

if TYPE_CHECKING:
    from assay.judges.templates import JudgeTemplate

VARIABLES = {
    "question": "question",
    "expected_answer": "expected_output",
    "retrieved_context": "retrieved_context",
    "actual_answer": "actual_output",
}
"""Prompt variable -> the case input it reads."""
DEFAULT_PROMPT = """Decide whether the actual answer responds to the question helpfully and on topic.

<question>
{{ question }}
</question>

<actual_answer>
{{ actual_answer }}
</actual_answer>

Say true when the actual answer addresses what the question asks, false when it ignores, evades or drifts \
away from it."""
_SYSTEM = (
    "You are an LLM judge checking the output of a bank's AI assistant against the reviewer's instructions "
    "below. The result is binary: set passed to true when the output passes the check the instructions "
    "describe, false when it fails it. Give a one- or two-sentence rationale citing the text that decided it."
)
_SCHEMA = {
    "type": "object",
    "required": ["rationale", "passed"],
    "additionalProperties": False,
    "properties": {"rationale": {"type": "string"}, "passed": {"type": "boolean"}},
}


def prompt_template(prompt: str) -> "JudgeTemplate":
    """The judge template for a user's prompt; ``ValueError`` naming the ``prompt`` parameter when unusable."""
    from assay.judges.templates import JudgeTemplate, TemplateError, double_braces, single_brace_names

    if not prompt.strip():
        raise ValueError("byop parameter 'prompt' is empty: give the instructions the judge should follow")
    unknown = sorted({name for name in single_brace_names(prompt) if name not in VARIABLES})
    text = double_braces(prompt)
    try:
        used = jinja2.meta.find_undeclared_variables(jinja2.Environment().parse(text))
    except jinja2.TemplateSyntaxError as error:
        raise ValueError(f"byop parameter 'prompt': template syntax error at line {error.lineno}: {error}") from None
    unknown = sorted(set(unknown) | {name for name in used if name not in VARIABLES})
    if unknown:
        raise ValueError(
            f"byop parameter 'prompt': unknown variable(s) {unknown}; the prompt may use {sorted(VARIABLES)}"
        )
    version = hashlib.sha256(prompt.encode()).hexdigest()[:12]
    try:
        return JudgeTemplate.build(
            id="byop",
            version=version,
            description="Bring your own prompt: the user's binary check (true passes, false fails).",
            system=_SYSTEM,
            user=text,
            inputs=sorted(used),
            schema=_SCHEMA,
            source="parameter 'prompt'",
        )
    except TemplateError as error:
        raise ValueError(f"byop parameter 'prompt': {error}") from None


@register
@dataclass
class BringYourOwnPrompt(JudgedEvaluator):
    spec = binary_judge_spec(
        "byop",
        "BYOP: Bring your own prompt",
        "Sends the user's own prompt (which may use the question, expected answer, retrieved context and "
        "actual answer) to the LLM judge for every case; the judge decides true (pass) or false (fail). "
        "Models are compared on the share of cases that pass. The prompt's hash is recorded as the template "
        "version in every case's evidence.",
        (
            "Model passes",
            "Model failures",
            "Model retrieval failures",
            "Model generation failures",
            "Model parse failures",
        ),
        "the evaluator check",
        keywords=["byop", "custom prompt", "llm-judge", "binary"],
        domain="generation",
        required_inputs=["actual_output"],
    )
    golden = golden_pair(
        "The daily ATM withdrawal limit is 500 dollars per card.",
        "I enjoy hiking in the mountains on sunny weekends.",
        question="What is the daily ATM withdrawal limit?",
    )
    prompt: str = field(
        default=DEFAULT_PROMPT,
        metadata={
            "description": (
                "The judge's instructions; may use {{ question }}, {{ expected_answer }}, {{ retrieved_context }} "
                "and {{ actual_answer }} (or single braces). It must lead the judge to a true/false verdict."
            )
        },
    )

    def __post_init__(self) -> None:
        self._template = prompt_template(self.prompt)

    def _variables(self, case: CaseContext, answer: str) -> dict[str, Any]:
        values = {
            "question": case.question,
            "expected_answer": case.expected_output,
            "retrieved_context": "\n\n".join(f"[{index + 1}] {chunk.text}" for index, chunk in
                                             enumerate(case.retrieved_context)),
            "actual_answer": answer,
        }  # fmt: skip
        return {name: values[name] for name in self._template.inputs}

    def not_applicable(self, case: CaseContext) -> str | None:
        missing = case.missing([VARIABLES[name] for name in self._template.inputs])
        return f"the prompt uses {', '.join(missing)}, which this case lacks" if missing else None

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        answer = await ask(self._template, step="answer", **self._variables(case, case.actual_output or ""))
        failed = float(not answer["passed"])
        details: dict[str, Any] = {"verdict": {"passed": not failed, "rationale": answer.get("rationale", "")}}
        retrieval: float | None = None
        inputs = self._template.inputs
        if case.retrieved_context and "actual_answer" in inputs and "retrieved_context" not in inputs:
            chunks = await asyncio.gather(
                *(ask(self._template, step=f"context {index}", **self._variables(case, chunk.text))
                  for index, chunk in enumerate(case.retrieved_context)),
                return_exceptions=True,
            )  # fmt: skip
            outcomes = [not v.get("passed") if isinstance(v, dict) else v for v in chunks]
            retrieval, details["retrieved_context"] = retrieval_verdict(outcomes)
        return Scored(scores=binary_scores(failed, retrieval), details=details)
