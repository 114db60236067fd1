"""The guard: a guardrail configuration applied to one live answer at a time, with no web framework in sight.

Everything expensive happens once, when the guard is built and warmed up: each configured evaluator is built
once with its thresholds, asked once whether it can run here (model weights, judge), and the embedding model
is loaded once. A check then builds a one-case context and calls the runner's per-case path
(``skip_reason`` -> ``prepare`` -> ``score_case``), so "unscored" keeps the meaning it has in a validation run:
a recorded reason, never a zero, and an answer checked without context is not failed by groundedness.

Verdicts: a failed metric of a privacy or security evaluator (PII, sensitive data, contact information,
encoding guardrail) blocks the answer, since one leak is one too many; any other failed metric flags it for
review. A leak found only in the retrieved context flags rather than blocks: the user never sees the context,
but its owner should. The configuration's ``actions`` overrides the default per evaluator.
"""

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.budget import spend, time_budget
from assay.embeddings.engine import Embedder
from assay.evaluators.base import CaseContext, Evaluator, Services, Unscored
from assay.evaluators.registry import build_evaluator
from assay.evaluators.runner import score_case, skip_reason
from assay.guardrail.config import ACTIONS, GuardedMetric, GuardrailConfig, load_config
from assay.guardrail.embedding import BoundedEmbedder
from assay.models.guardrail import Action, CheckResult, ConfigIdentity, EvaluatorCheck, MetricCheck, Verdict
from assay.models.thresholds import METRIC_OVERRIDES

ZERO_TOLERANCE_DOMAINS = frozenset({"privacy"})
CONTEXT_ONLY_METRICS = frozenset({"model_retrieval_failures"})
WARM_UP_SENTENCES = tuple(
    f"Sample sentence {number} of the warm-up answer, as long as a real sentence." for number in range(12)
)
GUARD_PARAMETERS: dict[str, dict[str, Any]] = {
    # Live answers carry no test-case categories, and an attack need not be labelled: decode every answer.
    "encoding_guardrail": {"decode_only_encoding_categories": False},
    # A verdict needs each claim's side of the threshold, not its exact score: claims whose words, figures and
    # names settle that skip the embedding model, the check's main cost (evaluators/_claim_reading.py).
    "groundedness": {"embed_claims": "verdict"},
}


def _default_embedder(threads: int | None = None) -> Embedder:
    from assay.config import load_settings

    settings = load_settings()
    return BoundedEmbedder(
        settings.embedding_model,
        backend=settings.guardrail_embedding_backend,
        export_dir=settings.cache_path.resolve() / "onnx",
        threads=threads,
    )


@dataclass
class _Guarded:
    """One configured evaluator, built once, with what the configuration asks of it."""

    evaluator: Evaluator
    metrics: dict[str, GuardedMetric]
    action: Action
    configured_action: bool
    unavailable: str | None = None

    def metric_action(self, metric: str) -> Action:
        """The evaluator's action, except a context-only leak, which flags unless the action was configured."""
        if not self.configured_action and metric in CONTEXT_ONLY_METRICS:
            return "flag"
        return self.action


class Guard:
    """Build once (``Guard(config)``), ``warm_up()`` once, then ``check`` from any number of threads."""

    def __init__(self, config: GuardrailConfig, *, embedder_factory: Callable[[], Embedder] | None = None) -> None:
        self.config = config
        self.identity = ConfigIdentity(sha256=config.sha256, version=config.version, reviewed_by=config.reviewed_by)
        embedder: Embedder | None = None
        factory = embedder_factory or (lambda: _default_embedder(config.limits.embedding_threads))

        def shared_embedder() -> Embedder:
            nonlocal embedder
            if embedder is None:
                embedder = factory()
            return embedder

        self._services = Services(embedder_factory=shared_embedder)
        self._guarded = {evaluator_id: self._build(evaluator_id) for evaluator_id in config.evaluators}
        self._counter = itertools.count()
        self._ready = threading.Event()
        self._probe_lock = threading.Lock()
        self._probed = False

    @classmethod
    def from_path(cls, path: str | Path, **kwargs: Any) -> "Guard":
        return cls(load_config(path), **kwargs)

    def _build(self, evaluator_id: str) -> _Guarded:
        metrics = self.config.evaluators[evaluator_id]
        parameters = GUARD_PARAMETERS.get(evaluator_id, {}) | self.config.parameters.get(evaluator_id, {})
        # The configuration's thresholds are the evaluator's overrides, so what it derives while scoring
        # (groundedness' share of ungrounded sentences) uses the threshold the guard checks.
        checked = {metric: guarded.threshold for metric, guarded in metrics.items()}
        parameters[METRIC_OVERRIDES] = {**parameters.get(METRIC_OVERRIDES, {}), **checked}
        evaluator = build_evaluator(evaluator_id, self._services, **parameters)
        configured = self.config.actions.get(evaluator_id)
        action: Action = configured or ("block" if evaluator.spec.domain in ZERO_TOLERANCE_DOMAINS else "flag")
        return _Guarded(evaluator=evaluator, metrics=metrics, action=action, configured_action=configured is not None)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    @property
    def evaluator_ids(self) -> list[str]:
        return list(self._guarded)

    def warm_up(self) -> None:
        """Probe the evaluators and load the models, then check sample answers so lazily built pieces
        (sentence splitter, regex suites, the model's buffers for a batch of several sentences: 0.2-0.4 s on
        the first one) are ready before the first request."""
        self._probe()
        self.check("Is the guard ready?", "The guard is ready.", ["The guard is ready."])
        self.check("Is the guard ready?", " ".join(WARM_UP_SENTENCES), list(WARM_UP_SENTENCES[:2]))
        self._ready.set()

    def _probe(self) -> None:
        """Ask each evaluator once whether it can run here and load the embedding model, once per guard."""
        with self._probe_lock:
            if self._probed:
                return
            for guarded in self._guarded.values():
                guarded.unavailable = _unavailable_reason(guarded.evaluator)
            needs_embeddings = [g for g in self._guarded.values() if "embeddings" in g.evaluator.spec.needs]
            if any(g.unavailable is None for g in needs_embeddings):
                try:
                    self._services.embedder.embed(["The guardrail is warming up."])
                except Exception as error:  # weights missing here: those evaluators are unavailable, not failing
                    for guarded in needs_embeddings:
                        guarded.unavailable = guarded.unavailable or f"embedding model unavailable: {error}"
            self._probed = True

    def check(
        self, question: str, answer: str, context: Sequence[str] | None = None, *, time_budget_s: float | None = None
    ) -> CheckResult:
        """The verdict on one answer; with ``time_budget_s``, raises ``TimeBudgetExceeded`` rather than return
        a verdict some evaluator did not finish (see ``assay.budget``)."""
        started = time.perf_counter()
        if not self._probed:
            self._probe()
        with time_budget(time_budget_s):
            return self._check(question, answer, context, started)

    def _check(self, question: str, answer: str, context: Sequence[str] | None, started: float) -> CheckResult:
        case = CaseContext.build(
            test_case_key=f"live-{next(self._counter)}",
            model_key="live",
            question=question,
            actual_output=answer,
            retrieved_context=list(context or []),
        )
        checks = []
        for evaluator_id, guarded in self._guarded.items():
            spend()
            checks.append(self._check_one(evaluator_id, guarded, case))
        verdict, reasons = _verdict(checks)
        return CheckResult(
            verdict=verdict,
            reasons=reasons,
            evaluators=checks,
            elapsed_ms=_ms_since(started),
            config=self.identity,
        )

    def _check_one(self, evaluator_id: str, guarded: _Guarded, case: CaseContext) -> EvaluatorCheck:
        started = time.perf_counter()
        reason = guarded.unavailable
        status = "unavailable" if reason is not None else "unscored"
        scores: dict[str, float | None] = {}
        details: dict[str, Any] = {}
        if reason is None:
            reason = skip_reason(guarded.evaluator, case) or _prepare(guarded.evaluator, case)
        if reason is None:
            outcome = score_case(guarded.evaluator, case)
            reason, details = outcome.unscored_reason, outcome.details
            scores = outcome.scores if reason is None else {}
            status = "scored" if reason is None else "unscored"
        return EvaluatorCheck(
            evaluator_id=evaluator_id,
            status=status,
            reason=reason,
            action=guarded.action,
            metrics=[
                _metric_check(
                    metric,
                    scores.get(metric.metric),
                    guarded.metric_action(metric.metric),
                    details.get("score_between", {}).get(metric.metric) if reason is None else None,
                )
                for metric in guarded.metrics.values()
            ],
            details=details,
            elapsed_ms=_ms_since(started),
        )


def _unavailable_reason(evaluator: Evaluator) -> str | None:
    try:
        return evaluator.unavailable_reason()
    except Exception as error:  # a broken lookup makes the evaluator unavailable, it never stops the service
        return f"evaluator error: {type(error).__name__}: {error}"


def _prepare(evaluator: Evaluator, case: CaseContext) -> str | None:
    """The evaluator's batch hook on the one case (judges need it); a failure is the case's unscored reason."""
    try:
        evaluator.prepare([case])
    except Unscored as unscored:
        return unscored.reason
    except Exception as error:  # a failed model call marks this check unscored, it never fails the request
        return f"evaluator error: {type(error).__name__}: {error}"
    return None


def _metric_check(
    metric: GuardedMetric, score: float | None, action: Action, between: Sequence[float] | None = None
) -> MetricCheck:
    """A metric's check; a score known only as a range (``between``) passes or fails when the whole range does."""
    passed = None if score is None else metric.passes(score)
    if score is None and between is not None and metric.passes(between[0]) == metric.passes(between[1]):
        passed = metric.passes(between[0])
    return MetricCheck(
        metric=metric.metric,
        score=score,
        score_between=None if score is not None or between is None else (between[0], between[1]),
        threshold=metric.threshold,
        higher_is_better=metric.higher_is_better,
        passed=passed,
        source=metric.source,
        action=action,
    )


def _verdict(checks: Sequence[EvaluatorCheck]) -> tuple[Verdict, list[str]]:
    """Block when any failed metric blocks, flag when any fails; one reason per evaluator and action."""
    verdict: Verdict = "allow"
    reasons = []
    for check in checks:
        for action in ACTIONS:
            failed = [m for m in check.metrics if m.action == action and m.passed is False]
            if not failed:
                continue
            verdict = "block" if action == "block" or verdict == "block" else "flag"
            reasons.append(f"{action}: {check.evaluator_id} failed " + "; ".join(map(_failure, failed)))
    return verdict, reasons


def _failure(metric: MetricCheck) -> str:
    side = "below" if metric.higher_is_better else "above"
    if metric.score is not None:
        value = f"= {metric.score:.4g}"
    else:  # settled as a range: its nearer end to the threshold says by how much at least
        low, high = metric.score_between or (float("nan"), float("nan"))
        value = f"at most {high:.4g}" if metric.higher_is_better else f"at least {low:.4g}"
    return f"{metric.metric} {value} ({side} the {metric.source} threshold {metric.threshold:g})"


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
