"""What the four GPTScore evaluators share (seed 002, after the paper "GPTScore: Evaluate as You Desire").

GPTScore asks no question of the judge: it reads how likely the judge model finds a text after an
instruction. Each aspect (accuracy, fluency...) is one instruction template (``gptscore_<family>_<aspect>``,
data in ``assay/judges/templates``); the score is the average negative log-likelihood, in nats per token, of
the tokens after the instruction's cue ("In other words,", "Tl;dr", or the fixed "Answer: Yes"), so lower is
better. Where the manual evaluates an instruction both ways (reference then answer, answer then reference),
the two scores are averaged.

The prompt log-probabilities come from the judge's completions route (``assay.judges.logprobs``). A judge
endpoint without one (chat-only) makes every case unavailable with the reason, asked once per run; a case
whose log-probabilities cannot be read is unscored with the reason. No score is ever estimated.

Threshold: the manual's default threshold is +inf for every metric, primary included, so GPTScore ranks
models and reports no problem on its own. That is kept: NLL levels differ between judge models, so no one
value means "bad" everywhere. Set ``metric_threshold`` (a parameter the manual gives), calibrated on the
judge model you use, to have the primary metric report problems.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from assay.evaluators._judged import CaseJudge, JudgedEvaluator, JudgeFailed, judged_spec
from assay.evaluators.base import CaseContext, Scored, golden_pair, quantity_metric

from assay.judges.templates import template
from assay.models.evaluation import CaseInput, Domain, EvaluatorSpec, MetricMeta, Task
from assay.models.judges import JudgeCall

INFINITY = float("inf")
DEFAULT_THRESHOLD = INFINITY
"""The manual's default for every metric (nats per token): no value is a problem until one is calibrated."""
QA_TAIL = "Answer: Yes"
_SENTINEL = "\ue000"


@dataclass(frozen=True)
class Aspect:
    """One GPTScore aspect: its metric and the instruction template that measures it."""

    key: str
    display_name: str
    description: str
    template_suffix: str = ""

    def template_id(self, family: str) -> str:
        return f"gptscore_{family}_{self.template_suffix or self.key}"


@dataclass(frozen=True)
class Prompt:
    """One way of filling an instruction: its variables and the input whose tokens are scored (None: the
    template's fixed tail ``QA_TAIL``)."""

    direction: str
    variables: dict[str, str]
    scored_input: str | None


SEMANTIC_COVERAGE = Aspect(
    "semantic_coverage",
    "Semantic Coverage",
    "How many semantic content units from the reference text are covered by the generated text?",
)
FACTUALITY = Aspect(
    "factuality", "Factuality", "Does the generated text preserve the factual statements of the source text?"
)
INFORMATIVENESS = Aspect(
    "informativeness", "Informativeness", "How well does the generated text capture the key ideas of its source text?"
)
COHERENCE = Aspect("coherence", "Coherence", "How much does the generated text make sense?")
RELEVANCE = Aspect("relevance", "Relevance", "How well is the generated text relevant to its source text?")
FLUENCY = Aspect("fluency", "Fluency", "Is the generated text well-written and grammatical?")
"""The aspects (instructions) more than one family uses, worded as the manual words them."""


def gptscore_metrics(aspects: tuple[Aspect, ...]) -> list[MetricMeta]:
    """The manual's metrics: lower is better, range [0, inf]; the first aspect is primary."""
    return [
        quantity_metric(
            aspect.key,
            aspect.display_name,
            f"{aspect.description} Average negative log-likelihood (nats per token); lower is better.",
            ceiling=INFINITY,
            threshold=DEFAULT_THRESHOLD,
            primary=index == 0,
        )
        for index, aspect in enumerate(aspects)
    ]


def gptscore_spec(
    id: str,
    display_name: str,
    description: str,
    *,
    domain: Domain,
    required_inputs: Sequence[CaseInput],
    aspects: tuple[Aspect, ...],
    keywords: Sequence[str],
    tasks: Sequence[Task] = (),
) -> EvaluatorSpec:
    """One GPTScore evaluator's spec: what differs between the four is its row of arguments; compliance, the
    judge need (``judged_spec``) and the metrics (one per aspect, from ``gptscore_metrics``) are the same for all."""
    return judged_spec(
        id,
        display_name,
        description,
        gptscore_metrics(aspects),
        keywords,
        domain=domain,
        tasks=tasks,
        required_inputs=required_inputs,
    )


def summarization_spec(
    id: str,
    display_name: str,
    description: str,
    *,
    required_inputs: Sequence[CaseInput],
    aspects: tuple[Aspect, ...],
    keywords: Sequence[str],
) -> EvaluatorSpec:
    """The spec of a GPTScore evaluator of summaries (with or without a reference)."""
    return gptscore_spec(
        id,
        display_name,
        description,
        domain="summarization",
        tasks=["summarization"],
        required_inputs=required_inputs,
        aspects=aspects,
        keywords=keywords,
    )


def summarization_golden(good_summary: str, bad_summary: str, **shared: Any) -> dict[str, dict[str, Any]]:
    """The golden cases of a GPTScore evaluator of summaries: summarization cases differing in the summary."""
    return golden_pair(good_summary, bad_summary, categories=["summarization"], **shared)


def split_prompt(template_id: str, prompt: Prompt) -> tuple[str, str]:
    """(prefix, continuation) of the rendered instruction: the continuation is what gets scored. The prefix
    ends without trailing space, so the token carrying the space before the first scored word is scored."""
    instruction = template(template_id)
    text = instruction.render(prompt.variables)[-1]["content"]
    if prompt.scored_input is None:
        if not text.endswith(QA_TAIL):
            raise ValueError(f"judge template {template_id!r} must end with {QA_TAIL!r}")
        cut = len(text) - len(QA_TAIL)
    else:
        marked = instruction.render({**prompt.variables, prompt.scored_input: _SENTINEL})[-1]["content"]
        cut = marked.index(_SENTINEL)
    prefix = text[:cut].rstrip()
    return prefix, text[len(prefix) :]


@dataclass
class GPTScoreEvaluator(JudgedEvaluator):
    """Subclasses give the family (template ids' infix), the aspects and how a case fills the instructions."""

    family: ClassVar[str]
    aspects: ClassVar[tuple[Aspect, ...]]
    threshold_note: ClassVar[str] = (
        "In nats per token; the manual's default is +inf, so no value is a problem until you calibrate it on "
        "your judge model."
    )

    def prompts(self, case: CaseContext) -> list[Prompt]:
        raise NotImplementedError

    def unavailable_reason(self) -> str | None:
        reason = super().unavailable_reason()
        if reason is not None or self.services.judge is None:
            return reason
        from assay.judges.logprobs import logprobs_unavailable  # the openai client loads only when judging

        return logprobs_unavailable(self.services.judge)

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        prompts = self.prompts(case)
        jobs = [(aspect, prompt) for aspect in self.aspects for prompt in prompts]

        async def measure(aspect: Aspect, prompt: Prompt) -> JudgeCall:
            template_id = aspect.template_id(self.family)
            prefix, continuation = split_prompt(template_id, prompt)
            from assay.judges.logprobs import continuation_logprobs

            return await continuation_logprobs(
                ask.client, template(template_id), prefix, continuation,
                step=f"{aspect.key}: {prompt.direction}", repeat=ask.repeat,
            )  # fmt: skip

        calls = await asyncio.gather(*(measure(aspect, prompt) for aspect, prompt in jobs))
        ask.calls.extend(calls)
        failed = next((call for call in calls if call.error is not None or call.verdict is None), None)
        if failed is not None:
            raise JudgeFailed(failed)
        scores: dict[str, float | None] = {}
        details: dict[str, Any] = {}
        for aspect in self.aspects:
            measured = [(prompt, call) for (owner, prompt), call in zip(jobs, calls, strict=True) if owner is aspect]
            values = [-float(call.verdict["mean_logprob"]) for _, call in measured]  # type: ignore[index]
            scores[aspect.key] = max(sum(values) / len(values), 0.0)
            details[aspect.key] = [
                {"direction": prompt.direction, "nll": round(value, 6), "tokens": call.verdict["tokens"]}  # type: ignore[index]
                for (prompt, call), value in zip(measured, values, strict=True)
            ]
        return Scored(scores=scores, details={"gptscore": details})


def both_ways(reference: str, answer: str) -> list[Prompt]:
    """The manual's two fillings of a rewrite instruction: reference then answer, answer then reference."""
    return [
        Prompt("expected answer -> actual answer", {"ref_hypo": reference, "hypo_ref": answer}, "hypo_ref"),
        Prompt("actual answer -> expected answer", {"ref_hypo": answer, "hypo_ref": reference}, "hypo_ref"),
    ]


@dataclass
class RewriteGPTScoreEvaluator(GPTScoreEvaluator):
    """The families whose instructions rewrite the expected answer as the actual answer and the reverse."""

    def prompts(self, case: CaseContext) -> list[Prompt]:
        return both_ways(case.expected_output.strip(), (case.actual_output or "").strip())
