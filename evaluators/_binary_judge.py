"""The judges whose per-case result is a boolean (sexism, stereotypes, contact information...): the manual
gives them the leakage evaluators' five metrics (pass, fail, retrieval failures, generation failures,
parsing failures). The judge reads the actual answer and, for a RAG case, each retrieved chunk on its own."""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judged_spec
from assay.evaluators._leakage import LeakageNames, leakage_metrics
from assay.evaluators.base import CaseContext, Scored, verdict_metrics

from assay.models.evaluation import CaseInput, Domain, EvaluatorSpec, MetricMeta, Task


@dataclass
class BinaryJudgeEvaluator(JudgedEvaluator):
    template_id: ClassVar[str]
    failure_field: ClassVar[str]
    """The verdict's boolean field that is true when the text fails the check (e.g. ``sexist``)."""
    judge_context: ClassVar[bool] = True

    def inputs(self, case: CaseContext, text: str) -> dict[str, Any]:
        """The template's inputs for judging ``text`` (the answer or one retrieved chunk) of ``case``."""
        return {"question": case.question, "text": text}

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        answer = await ask(self.template_id, step="answer", **self.inputs(case, case.actual_output or ""))
        failed = float(bool(answer[self.failure_field]))
        details: dict[str, Any] = {"verdict": {"failed": bool(failed), "rationale": answer.get("rationale", "")}}
        retrieval: float | None = None
        if self.judge_context and case.retrieved_context:
            chunks = await asyncio.gather(
                *(ask(self.template_id, step=f"context {index}", **self.inputs(case, chunk.text))
                  for index, chunk in enumerate(case.retrieved_context)),
                return_exceptions=True,
            )  # fmt: skip
            outcomes = [bool(v.get(self.failure_field)) if isinstance(v, dict) else v for v in chunks]
            retrieval, details["retrieved_context"] = retrieval_verdict(outcomes)
        return Scored(scores=binary_scores(failed, retrieval), details=details)


def fairness_judge_spec(
    id: str, display_name: str, description: str, names: LeakageNames, keywords: Sequence[str]
) -> EvaluatorSpec:
    """The spec of a fairness judge (sexism, stereotypes): what differs is its row of arguments; the domain,
    compliance, inputs and the five boolean-judge metrics are the same for all."""
    return judged_spec(
        id,
        display_name,
        description,
        leakage_metrics(names),
        keywords,
        domain="fairness",
        required_inputs=["actual_output"],
        compliance=["NIST: Fair", "EU AI Act: Non-discrimination", "SR 11-7: Outcomes Analysis"],
        problem_type="fairness",
    )


def binary_judge_metrics(names: Sequence[str], check: str) -> list[MetricMeta]:
    """The manual's five metrics of a binary judge (pass, fail, retrieval, generation and parse failures),
    with their display ``names`` in that order; ``check`` names what is checked, for the descriptions."""
    passes, failures, retrieval, generation, parsing = names
    return verdict_metrics(
        [
            ("model_passes", passes, f"Share of actual answers that pass {check}."),
            ("model_failures", failures, f"Share of actual answers that fail {check}."),
            ("model_retrieval_failures", retrieval, f"Share of RAG retrieved contexts that fail {check}."),
            (
                "model_generation_failures",
                generation,
                f"Share of answers generated from the retrieved context that fail {check} (equal to the failures).",
            ),
            ("model_parse_failures", parsing, f"Share of cases whose judge reply could not be parsed for {check}."),
        ]
    )


def binary_judge_spec(
    id: str,
    display_name: str,
    description: str,
    names: Sequence[str],
    check: str,
    keywords: Sequence[str],
    *,
    domain: Domain,
    required_inputs: Sequence[CaseInput],
    tasks: Sequence[Task] = (),
) -> EvaluatorSpec:
    """The spec of a judge of one pass/fail check (the user's own prompt, a good summary): what differs is its
    row of arguments; the judges' compliance and need (``judged_spec``) and the five metrics
    (``binary_judge_metrics`` of ``names`` and ``check``) are the same for all."""
    return judged_spec(
        id,
        display_name,
        description,
        binary_judge_metrics(names, check),
        keywords,
        domain=domain,
        tasks=tasks,
        required_inputs=required_inputs,
    )


def retrieval_verdict(outcomes: Sequence[bool | BaseException | None]) -> tuple[float | None, dict[str, Any]]:
    """The retrieval failure of a case from its chunks' outcomes (True: the chunk fails the check; an
    exception or None: not judged): 1.0 when a chunk fails, 0.0 when every chunk was judged and passed, else
    unknown (None), with which chunks failed or were not judged and why."""
    flagged = [index for index, outcome in enumerate(outcomes) if outcome is True]
    unjudged = [index for index, outcome in enumerate(outcomes) if not isinstance(outcome, bool)]
    retrieval = 1.0 if flagged else (None if unjudged else 0.0)
    detail: dict[str, Any] = {"flagged_chunks": flagged, "unjudged_chunks": unjudged}
    failure = next((outcome for outcome in outcomes if isinstance(outcome, BaseException)), None)
    if failure is not None and retrieval is None:
        detail["reason"] = str(failure)
    return retrieval, detail


def binary_scores(failed: float, retrieval: float | None) -> dict[str, float | None]:
    """The five metrics of a boolean judge for one judged case (parsing failures 0: the verdict parsed)."""
    return {
        "model_passes": 1.0 - failed,
        "model_failures": failed,
        "model_retrieval_failures": retrieval,
        "model_generation_failures": failed,
        "model_parse_failures": 0.0,
    }
