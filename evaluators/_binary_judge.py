"""The judges whose per-case result is a boolean (sexism, stereotypes, contact information...): the manual
gives them the leakage evaluators' five metrics (pass, fail, retrieval failures, generation failures,
parsing failures). The judge reads the actual answer and, for a RAG case, each retrieved chunk on its own."""

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar

from evaluators._judged import CaseJudge, JudgedEvaluator, JudgeFailed
from evaluators.base import CaseContext, Scored


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
            flagged = [index for index, verdict in enumerate(chunks)
                       if isinstance(verdict, dict) and verdict.get(self.failure_field)]  # fmt: skip
            unjudged = [index for index, verdict in enumerate(chunks) if isinstance(verdict, BaseException)]
            if flagged:
                retrieval = 1.0
            elif not unjudged:
                retrieval = 0.0
            details["retrieved_context"] = {"flagged_chunks": flagged, "unjudged_chunks": unjudged}
            failure = next((verdict for verdict in chunks if isinstance(verdict, JudgeFailed)), None)
            if failure is not None and retrieval is None:
                details["retrieved_context"]["reason"] = str(failure)
        scores = {
            "model_passes": 1.0 - failed,
            "model_failures": failed,
            "model_retrieval_failures": retrieval,
            "model_generation_failures": failed,
            "model_parse_failures": 0.0,
        }
        return Scored(scores=scores, details=details)
