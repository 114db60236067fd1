"""What the Databricks-style judges share (seeds 001 and 003): every judgement is a yes/no rating with a
rationale, reported per case under the seeds' column names (``response/llm_judged/<name>/rating``,
``.../rationale``, ``.../error_message``; per retrieved chunk ``retrieval/llm_judged/<name>/ratings``,
``.../rationales``, ``.../error_messages`` and ``.../precision``) and over the run under their aggregate names.

The columns go into ``details["columns"]``; the results file copies them into the case's entry, so a
reviewer used to those tables finds the same names. A yes counts 1.0 and a no 0.0, so the mean of a rating
is the seeds' ``rating/percentage`` and the mean of chunk precision their ``precision/average``.
"""

import asyncio
import hashlib
import re
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from assay.evaluators._judged import JUDGE_COMPLIANCE, CaseJudge, JudgedEvaluator, JudgeFailed
from assay.evaluators.base import CaseContext, Scored, Unscored, score_metric

from assay.models.evaluation import MetricMeta

if TYPE_CHECKING:
    from assay.judges.templates import JudgeTemplate

RATING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["rationale", "rating"],
    "additionalProperties": False,
    "properties": {"rationale": {"type": "string"}, "rating": {"type": "string", "enum": ["yes", "no"]}},
}
"""The reply of every Databricks-style template, built-in (TOML) or custom."""

COMPLIANCE = list(JUDGE_COMPLIANCE)


def rating_metric(
    key: str, display_name: str, description: str, aggregate_name: str, *, primary: bool = True
) -> MetricMeta:
    """A per-case yes (1.0) / no (0.0) metric; its mean over the cases is the share rated yes."""
    return score_metric(key, display_name, description, primary=primary, threshold=0.5, aggregate_name=aggregate_name)


def rating_value(verdict: dict[str, Any]) -> float:
    return 1.0 if verdict["rating"] == "yes" else 0.0


def rating_columns(prefix: str, verdict: dict[str, Any] | None, error: str | None = None) -> dict[str, Any]:
    """The seeds' three per-case columns of one rating; when the judge failed, rating and rationale are null."""
    return {
        f"{prefix}/rating": None if verdict is None else verdict["rating"],
        f"{prefix}/rationale": None if verdict is None else verdict.get("rationale", ""),
        f"{prefix}/error_message": error,
    }


def chunk_columns(prefix: str, outcomes: list[dict[str, Any] | JudgeFailed], precision: float | None) -> dict[str, Any]:
    """The seeds' per-chunk lists (a failed chunk has a null rating and rationale and its error) and precision."""
    return {
        f"{prefix}/ratings": [None if isinstance(o, JudgeFailed) else o["rating"] for o in outcomes],
        f"{prefix}/rationales": [None if isinstance(o, JudgeFailed) else o.get("rationale", "") for o in outcomes],
        f"{prefix}/error_messages": [str(o) if isinstance(o, JudgeFailed) else None for o in outcomes],
        f"{prefix}/precision": precision,
    }


def numbered_context(case: CaseContext) -> str:
    """The retrieved chunks as one text, each numbered so a rationale can point at one."""
    return "\n\n".join(f"[{index}] {chunk.text.strip()}" for index, chunk in enumerate(case.retrieved_context, 1))


async def ask_each(ask: CaseJudge, requests: list[tuple[str, "str | JudgeTemplate", dict[str, Any]]]) -> list[Any]:
    """Several judge calls at once; a failed call comes back as its ``JudgeFailed``, any other error is raised
    (a plugin bug must not pass for a judge failure)."""
    outcomes = await asyncio.gather(
        *(ask(template, step=step, **inputs) for step, template, inputs in requests), return_exceptions=True
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, JudgeFailed):
            raise outcome
    return list(outcomes)


@dataclass
class RatingJudge(JudgedEvaluator):
    """One yes/no rating per case (correctness, relevance, groundedness, safety, context sufficiency...)."""

    template_id: ClassVar[str]
    assessment: ClassVar[str]
    """The assessment's name in the columns: ``<scope>/llm_judged/<assessment>/...``."""
    scope: ClassVar[str] = "response"
    """``response`` or ``retrieval``: what the seeds file the assessment under."""

    @abstractmethod
    def inputs(self, case: CaseContext) -> dict[str, str]:
        """The template's inputs for ``case``; raise ``Unscored`` when one is missing."""

    def template(self) -> "str | JudgeTemplate":
        return self.template_id

    def column_name(self) -> str:
        return self.assessment

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        prefix = f"{self.scope}/llm_judged/{self.column_name()}"
        try:
            verdict = await ask(self.template(), step=self.column_name(), **self.inputs(case))
        except JudgeFailed as failed:
            raise Unscored(str(failed), details={"columns": rating_columns(prefix, None, str(failed))}) from None
        key = self.spec.primary_metric.key
        return Scored(scores={key: rating_value(verdict)}, details={"columns": rating_columns(prefix, verdict)})


@dataclass
class ChunkRatingJudge(JudgedEvaluator):
    """One yes/no rating per retrieved chunk; the case's value is the precision, yes / rated chunks. A chunk
    the judge could not rate is left out of the precision (and listed with its error); a case with no rated
    chunk is unscored."""

    template_id: ClassVar[str]
    assessment: ClassVar[str]

    @abstractmethod
    def chunk_inputs(self, case: CaseContext, chunk: str) -> dict[str, str]:
        """The template's inputs for judging one chunk of ``case``."""

    def template(self) -> "str | JudgeTemplate":
        return self.template_id

    def column_name(self) -> str:
        return self.assessment

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        prefix = f"retrieval/llm_judged/{self.column_name()}"
        requests = [(f"chunk {index}", self.template(), self.chunk_inputs(case, chunk.text))
                    for index, chunk in enumerate(case.retrieved_context, 1)]  # fmt: skip
        outcomes = await ask_each(ask, requests)
        rated = [outcome for outcome in outcomes if isinstance(outcome, dict)]
        if not rated:
            reason = f"no retrieved chunk could be rated: {outcomes[0]}"
            raise Unscored(reason, details={"columns": chunk_columns(prefix, outcomes, None)})
        precision = sum(rating_value(verdict) for verdict in rated) / len(rated)
        details = {
            "columns": chunk_columns(prefix, outcomes, precision),
            "chunks": {"retrieved": len(outcomes), "rated": len(rated)},
        }
        return Scored(scores={self.spec.primary_metric.key: precision}, details=details)


_ASSESSMENT_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PLAIN_REFERENCE = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
CUSTOM_SYSTEM = (
    "You are an assessor of an AI assistant. Its owner wrote the assessment below; the data it refers to is "
    'given between tags named after each variable. Rate "yes" when the data meets the assessment\'s criterion '
    'and "no" when it does not, and explain the rating in one or two sentences, quoting the data.'
)


def custom_template(
    *, template_id: str, evaluator_id: str, assessment_name: str, prompt: str, allowed: tuple[str, ...], needed: str
) -> "JudgeTemplate":
    """The judge template of a custom judge's ``prompt`` (seed 001, "Custom judge metrics").

    The prompt refers to the case through ``{{ variable }}`` (or ``{variable}``) among ``allowed``; it must use
    ``needed``, the thing it assesses. Each reference becomes a tagged block, as in the built-in templates. The
    version is a short hash of the prompt, so an edited prompt never reuses cached verdicts of the old one. A
    bad name or prompt is a ``ValueError`` naming the parameter.
    """
    from assay.judges.templates import JudgeTemplate, double_braces

    where = f"evaluator {evaluator_id!r}"
    if not _ASSESSMENT_NAME.match(assessment_name):
        raise ValueError(
            f"{where}: parameter 'assessment_name' is {assessment_name!r}; expected lower-case letters, digits and "
            "underscores, starting with a letter (it names the columns .../llm_judged/<assessment_name>/...)"
        )
    if not prompt.strip():
        raise ValueError(f"{where}: parameter 'prompt' is empty; write the assessment, using {{{{ {needed} }}}}")
    text = double_braces(prompt.strip())
    if "{{" in _PLAIN_REFERENCE.sub("", text) or "{%" in text or "{#" in text:
        raise ValueError(f"{where}: parameter 'prompt' may only refer to variables as {{{{ name }}}}, without "
                         "filters, expressions or statements")  # fmt: skip
    used = list(dict.fromkeys(_PLAIN_REFERENCE.findall(text)))
    unknown = [name for name in used if name not in allowed]
    if unknown:
        raise ValueError(f"{where}: parameter 'prompt' uses unknown variable(s) {unknown}; allowed: {list(allowed)}")
    if needed not in used:
        raise ValueError(f"{where}: parameter 'prompt' must use {{{{ {needed} }}}}, the text it assesses")
    user = _PLAIN_REFERENCE.sub(lambda match: f"\n<{match[1]}>\n{{{{ {match[1]} }}}}\n</{match[1]}>\n", text)
    user = re.sub(r"[ \t]+\n", "\n", user)
    try:
        return JudgeTemplate.build(
            id=template_id,
            version=hashlib.sha256(prompt.encode()).hexdigest()[:12],
            description=f"Custom judge {assessment_name!r}: {prompt.strip()[:200]}",
            system=CUSTOM_SYSTEM,
            user=user + "\n\nRate yes or no.",
            inputs=used,
            schema=RATING_SCHEMA,
            source=f"parameter 'prompt' of evaluator {evaluator_id!r}",
        )
    except ValueError as error:
        raise ValueError(f"{where}: parameter 'prompt' is not a usable template: {error}") from None


CUSTOM_VARIABLES = ("request", "response", "expected_response", "retrieved_context")


def assessment_name_parameter(default: str, scope: str) -> Any:
    """A custom judge's ``assessment_name`` parameter: it names the columns ``<scope>/llm_judged/<name>/...``."""
    return field(
        default=default,
        metadata={"description": f"Name of the assessment in the columns: {scope}/llm_judged/<assessment_name>/..."},
    )


def prompt_parameter(default: str, description: str) -> Any:
    """A custom judge's ``prompt`` parameter: the assessment, a yes/no question; ``description`` says which
    variables it may (and must) use. It becomes the judge template when the evaluator is built."""
    return field(default=default, metadata={"description": description})


class CustomPromptJudge:
    """What both custom judges share: the user's ``prompt`` becomes a template once, when the evaluator is built
    (a bad prompt fails there, naming the parameter), its columns are named after ``assessment_name``, and each
    optional variable the prompt uses is filled from the case, or the case is unscored naming what it lacks."""

    template_id: ClassVar[str]
    needed_variable: ClassVar[str]
    """The variable every prompt of this judge must use."""
    assessment_name: str
    prompt: str
    spec: ClassVar[Any]

    def __post_init__(self) -> None:
        self._template = custom_template(
            template_id=self.template_id,
            evaluator_id=self.spec.id,
            assessment_name=self.assessment_name,
            prompt=self.prompt,
            allowed=CUSTOM_VARIABLES,
            needed=self.needed_variable,
        )

    def template(self) -> "JudgeTemplate":
        return self._template

    def column_name(self) -> str:
        return self.assessment_name

    def prompt_values(self, case: CaseContext, values: dict[str, str]) -> dict[str, str]:
        """``values`` completed with the other variables the prompt uses, restricted to those it uses."""
        used = self._template.inputs
        if "response" in used and "response" not in values:
            if case.actual_output is None or not case.actual_output.strip():
                raise Unscored("missing input: actual_output (the prompt uses {{ response }})")
            values["response"] = case.actual_output
        if "expected_response" in used and "expected_response" not in values:
            if not case.expected_output.strip():
                raise Unscored("missing input: expected_output (the prompt uses {{ expected_response }})")
            values["expected_response"] = case.expected_output
        if "retrieved_context" in used and "retrieved_context" not in values:
            if not case.retrieved_context:
                raise Unscored("missing input: retrieved_context (the prompt uses {{ retrieved_context }})")
            values["retrieved_context"] = numbered_context(case)
        return {name: value for name, value in values.items() if name in used}
