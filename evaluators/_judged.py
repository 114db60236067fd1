"""What every LLM-judged evaluator shares: asking the judge for all cases at once, evidence, repeats and
the offline-first cascade.

A judged evaluator only says how to judge one case: ``async judge(case, ask)``, where ``ask(template_id,
step=..., **inputs)`` returns the judge's parsed verdict (or raises, making the case unscored with the
reason). ``prepare`` runs every case concurrently under the judge's call policy; ``score`` hands back what
was decided. Every call made for a case, with its exact prompt and raw reply, is kept in the case's
``details["judge"]``, whether the case was scored or not.

Repeats (``JudgeRunOptions.repeats``): each case is judged N times (each a separate cache entry and seed);
when the primary metric's pass/fail verdict differs between repeats, the case is unscored as *flaky* with
every repeat's values, never averaged into a verdict nobody gave.

Cascade (``cascade``/``budget``): the offline evaluator named in ``cascade_proxy`` scores every case first;
only cases whose proxy score is within ``band`` of the proxy's threshold (and, with a budget, the most
uncertain first) go to the judge. The others are unscored by the judge, and their details carry the offline
verdict and which evaluator made it.
"""

import asyncio
import time
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored

from assay.judges import NOT_CONFIGURED
from assay.models.evaluation import CaseInput, Domain, EvaluatorSpec, MetricMeta, ModelType, Need, Task
from assay.models.judges import JudgeAccount, JudgeCall, JudgeRunOptions, JudgeSummary

if TYPE_CHECKING:
    from assay.judges.client import JudgeClient
    from assay.judges.templates import JudgeTemplate

MAX_CALLS_KEPT = 12
"""Evidence entries kept per case (a claim-by-claim judge can make many calls); the rest are counted."""


class JudgeFailed(Exception):
    """The judge gave no usable verdict for a call; the case is unscored with this reason."""

    def __init__(self, call: JudgeCall) -> None:
        super().__init__(f"judge failed ({call.error_kind}): {call.error}")
        self.call = call


class CaseJudge:
    """What ``judge`` is given for one case and one repeat: ask a template, get the verdict; calls are kept."""

    def __init__(self, client: "JudgeClient", repeat: int) -> None:
        self.client = client
        self.repeat = repeat
        self.calls: list[JudgeCall] = []

    async def __call__(self, template_ref: "str | JudgeTemplate", /, *, step: str = "", **inputs: Any) -> dict:
        from assay.judges.templates import template

        chosen = template(template_ref) if isinstance(template_ref, str) else template_ref
        call = await self.client.ask(chosen, inputs, step=step, repeat=self.repeat)
        self.calls.append(call)
        if call.error is not None or call.verdict is None:
            raise JudgeFailed(call)
        return call.verdict


JUDGE_COMPLIANCE = ("NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis")
"""What a judge of answers or retrieval is filed under unless its spec says otherwise."""

JUDGED_INPUTS: dict[str, dict[str, Any]] = {
    "actual_output": {"domain": "generation", "model_types": ["llm", "rag"]},
    "retrieved_context": {"domain": "retrieval", "model_types": ["rag"]},
}
"""What a judge of the actual answer or of the retrieved context (``judge_spec``'s ``judged``) is filed under."""


def judged_spec(
    id: str,
    display_name: str,
    description: str,
    metrics: list[MetricMeta],
    keywords: Sequence[str],
    *,
    domain: Domain,
    required_inputs: Sequence[CaseInput],
    tasks: Sequence[Task] = (),
    compliance: Sequence[str] = JUDGE_COMPLIANCE,
    model_types: Sequence[ModelType] | None = None,
    problem_type: str | None = None,
    also_needs: Sequence[Need] = (),
) -> EvaluatorSpec:
    """The spec of an evaluator that asks the LLM judge: what differs is its row of arguments; the judge need
    (then ``also_needs``, e.g. embeddings) is the same for all, the compliance the judges' unless given."""
    return EvaluatorSpec(
        id=id,
        display_name=display_name,
        description=description,
        domain=domain,
        **({"model_types": list(model_types)} if model_types is not None else {}),
        tasks=list(tasks),
        compliance=list(compliance),
        required_inputs=list(required_inputs),
        needs=["llm", *also_needs],
        metrics=metrics,
        keywords=list(keywords),
        problem_type=problem_type,
    )


def judge_spec(
    id: str,
    display_name: str,
    description: str,
    metrics: list[MetricMeta],
    keywords: Sequence[str],
    *,
    judged: Literal["actual_output", "retrieved_context"],
    problem_type: str | None = None,
    also_reads: Sequence[CaseInput] = (),
    compliance: Sequence[str] = JUDGE_COMPLIANCE,
    model_types: Sequence[ModelType] | None = None,
    also_needs: Sequence[Need] = (),
) -> EvaluatorSpec:
    """The spec of a judge of the actual answer or of the retrieved context for the question: what differs
    between such judges is its row of arguments; the judge need is the same for all (then ``also_needs``). The
    required inputs are the question, ``also_reads`` (e.g. the expected answer) and the judged text;
    ``model_types`` overrides the judged text's (a judge of the answer against the retrieved context is for RAG
    only)."""
    filed_under = JUDGED_INPUTS[judged]
    return judged_spec(
        id,
        display_name,
        description,
        metrics,
        keywords,
        domain=filed_under["domain"],
        required_inputs=["question", *also_reads, judged],
        compliance=compliance,
        model_types=filed_under["model_types"] if model_types is None else model_types,
        problem_type=problem_type,
        also_needs=also_needs,
    )


@dataclass
class JudgedEvaluator(Evaluator):
    """Base of the evaluators whose verdicts come from an LLM judge (``needs`` includes ``llm``)."""

    cascade_proxy: ClassVar[str | None] = None
    """An offline evaluator whose primary metric tracks this one's, for the cascade; None: no cascade."""

    @abstractmethod
    async def judge(self, case: CaseContext, ask: CaseJudge) -> "dict[str, float | None] | Scored":
        """Ask the judge about one case; raise ``Unscored`` when the case cannot be judged."""

    # -- the contract ----------------------------------------------------------------------------------------

    def unavailable_reason(self) -> str | None:
        client = self.services.judge
        return NOT_CONFIGURED if client is None else client.unavailable_reason()

    def judge_summary(self) -> JudgeSummary | None:
        return getattr(self, "_summary", None)

    def score(self, case: CaseContext) -> "dict[str, float | None] | Scored":
        outcome = getattr(self, "_outcomes", {}).get((case.test_case_key, case.model_key))
        if outcome is None:
            raise Unscored("not judged: the case was not prepared")
        if isinstance(outcome, Unscored):
            raise outcome
        return outcome

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        client = self.services.judge
        assert client is not None, "prepare runs only when unavailable_reason() is None"
        options = self.services.judge_options or JudgeRunOptions()
        started = time.perf_counter()
        self._outcomes: dict[tuple[str, str], Scored | Unscored] = {}
        to_judge, cascade = self._route(cases, options)
        accounts: list[JudgeAccount] = []
        used: dict[str, str] = {}

        async def judge_all() -> None:
            results = await asyncio.gather(*(self._judged_case(case, client, options.repeats) for case in to_judge))
            for case, (outcome, calls) in zip(to_judge, results, strict=True):
                self._outcomes[case.test_case_key, case.model_key] = outcome
                account = JudgeAccount()
                for call in calls:
                    account.add(call)
                    used[call.template] = call.template_version
                accounts.append(account)

        if to_judge:
            client.run(judge_all)
        total = JudgeAccount()
        for account in accounts:
            total = total.merged(account)
        total.wall_s = round(time.perf_counter() - started, 3)
        total.saved_by_cascade = (cascade or {}).get("decided_offline", 0)
        flaky = sum(1 for outcome in self._outcomes.values() if isinstance(outcome, Unscored)
                    and outcome.details.get("flaky"))  # fmt: skip
        self._summary = JudgeSummary(
            endpoint=client.endpoint,
            options=options,
            templates=dict(sorted(used.items())),
            account=total,
            cascade=cascade,
            flaky_cases=flaky,
        )

    # -- one case --------------------------------------------------------------------------------------------

    async def _judged_case(
        self, case: CaseContext, client: "JudgeClient", repeats: int
    ) -> "tuple[Scored | Unscored, list[JudgeCall]]":
        outcomes: list[Scored | Unscored] = []
        calls: list[JudgeCall] = []
        for repeat in range(repeats):
            ask = CaseJudge(client, repeat)
            outcomes.append(await self._one_repeat(case, ask))
            calls.extend(ask.calls)
        evidence = _evidence(calls)
        if repeats == 1:
            return _with_evidence(outcomes[0], evidence), calls
        return _with_evidence(self._combine(outcomes), evidence), calls

    async def _one_repeat(self, case: CaseContext, ask: CaseJudge) -> "Scored | Unscored":
        try:
            result = await self.judge(case, ask)
        except JudgeFailed as failed:
            unparseable = failed.call.error_kind == "unparseable" and self._has_parse_metric()
            scores = {"model_parse_failures": 1.0} if unparseable else None
            return Unscored(str(failed), scores=scores)
        except Unscored as unscored:
            return unscored
        except Exception as error:  # a plugin bug is recorded on the case, it never aborts the run
            return Unscored(f"evaluator error: {type(error).__name__}: {error}")
        return result if isinstance(result, Scored) else Scored(scores=dict(result))

    def _has_parse_metric(self) -> bool:
        return any(metric.key == "model_parse_failures" for metric in self.spec.metrics)

    def _combine(self, outcomes: "list[Scored | Unscored]") -> "Scored | Unscored":
        """One outcome from N repeats: the mean when every repeat gives the same pass/fail verdict on the primary
        metric, else unscored as flaky with every repeat's values (agreement = share of the majority verdict)."""
        primary = self.spec.primary_metric
        threshold = self.threshold(primary.key)
        scored = [outcome for outcome in outcomes if isinstance(outcome, Scored)]
        values = [outcome.scores.get(primary.key) for outcome in scored]
        repeats_detail: dict[str, Any] = {
            "repeats": len(outcomes),
            "values": values,
            "unscored": [outcome.reason for outcome in outcomes if isinstance(outcome, Unscored)],
        }
        if not scored or any(value is None for value in values):
            first_unscored = next((o for o in outcomes if isinstance(o, Unscored)), None)
            reason = first_unscored.reason if first_unscored else "no repeat scored the primary metric"
            return Unscored(reason, details={"judge_repeats": repeats_detail})
        verdicts = [primary.passes(value, threshold) for value in values]  # type: ignore[arg-type]
        majority = max(verdicts.count(True), verdicts.count(False))
        repeats_detail["verdicts"] = ["pass" if verdict else "fail" for verdict in verdicts]
        repeats_detail["agreement"] = round(majority / len(outcomes), 6)
        if len(scored) < len(outcomes) or len(set(verdicts)) > 1:
            passes = verdicts.count(True)
            return Unscored(
                f"flaky judge verdict: {passes} of {len(outcomes)} repeats pass, "
                f"{len(outcomes) - passes} fail or were unscored",
                details={"judge_repeats": repeats_detail, "flaky": True},
            )
        keys = {key for outcome in scored for key in outcome.scores}
        scores: dict[str, float | None] = {}
        for key in keys:
            known = [outcome.scores[key] for outcome in scored if outcome.scores.get(key) is not None]
            scores[key] = sum(known) / len(known) if known else None  # type: ignore[arg-type]
        details = {**scored[0].details, "judge_repeats": repeats_detail}
        return Scored(scores=scores, details=details)

    # -- the cascade -----------------------------------------------------------------------------------------

    def _route(
        self, cases: Sequence[CaseContext], options: JudgeRunOptions
    ) -> tuple[list[CaseContext], dict[str, Any] | None]:
        """The cases to send to the judge, and the cascade's counts (None when every case goes)."""
        if not (options.cascade or options.budget is not None):
            return list(cases), None
        from assay.evaluators.cascade import route_cases

        to_judge, decided, counts = route_cases(self, cases, options)
        for key, outcome in decided.items():
            self._outcomes[key] = outcome
        return to_judge, counts


def _evidence(calls: list[JudgeCall]) -> dict[str, Any]:
    kept = [call.model_dump(mode="json", exclude_none=True) for call in calls[:MAX_CALLS_KEPT]]
    evidence: dict[str, Any] = {"judge": kept}
    if len(calls) > MAX_CALLS_KEPT:
        evidence["judge_calls_omitted"] = len(calls) - MAX_CALLS_KEPT
    return evidence


def _with_evidence(outcome: "Scored | Unscored", evidence: dict[str, Any]) -> "Scored | Unscored":
    if isinstance(outcome, Scored):
        return Scored(scores=outcome.scores, details={**outcome.details, **evidence})
    return Unscored(outcome.reason, scores=outcome.scores, details={**outcome.details, **evidence})
