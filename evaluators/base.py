"""The evaluator contract.

An evaluator is a small dataclass: configuration in fields, metadata in one ``spec`` class attribute, and
``score(case)`` returning one value per metric. Everything a case has travels in one ``CaseContext``, so
adding a field never breaks a plugin. Heavy shared work (embeddings) is injected through ``Services`` and
batched by the optional ``prepare`` hook, which sees every case before any is scored.
"""

import copy
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from assay.evaluators._tasks import task_mismatch

from assay.embeddings.engine import Embedder
from assay.models import Assertion, ConversationTurn, RetrievedChunk, TestLabRow, ToolCall
from assay.models.evaluation import CaseScores, EvaluatorSpec, MetricMeta, ParameterMeta
from assay.models.thresholds import METRIC_OVERRIDES, PRIMARY_OVERRIDE, overrides_in, resolve_threshold

if TYPE_CHECKING:
    from assay.embeddings.keyed_store import KeyedJsonStore
    from assay.judges.client import JudgeClient
    from assay.models.judges import JudgeRunOptions, JudgeSummary


class Unscored(Exception):
    """Raised by ``score`` when a case cannot be scored (missing input, parse failure, unavailable model).

    ``scores`` may still carry the metrics that *are* known, e.g. a parse-failure counter; ``details`` what a
    reviewer needs to see why (a judge's raw reply).
    """

    def __init__(
        self, reason: str, scores: dict[str, float | None] | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.scores = scores or {}
        self.details = details or {}


@dataclass
class Services:
    """Dependencies shared by all evaluators of a run; created lazily so rule-based runs load no model and
    runs without a judge import no client."""

    embedder_factory: Any = None
    judge_factory: "Callable[[], JudgeClient | None] | None" = None
    judge_options: "JudgeRunOptions | None" = None
    score_store_factory: "Callable[[], KeyedJsonStore] | None" = None
    _embedder: Embedder | None = None
    _score_store: "KeyedJsonStore | None" = None
    _judge: "JudgeClient | None" = None

    @property
    def judge(self) -> "JudgeClient | None":
        """The run's LLM judge client, or None when no judge endpoint is configured."""
        if self._judge is None and self.judge_factory is not None:
            self._judge = self.judge_factory()
        return self._judge

    @property
    def score_store(self) -> "KeyedJsonStore | None":
        """Where model-based evaluators keep scores that are deterministic in their inputs (BERTScore's pair
        scores) across runs; None when the run keeps nothing on disk (the live guardrail, a library caller)."""
        if self._score_store is None and self.score_store_factory is not None:
            self._score_store = self.score_store_factory()
        return self._score_store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if self.embedder_factory is None:
                raise Unscored("no embedding engine configured")
            self._embedder = self.embedder_factory()
        return self._embedder


@dataclass(frozen=True)
class CaseContext:
    """Everything one test-lab row offers an evaluator."""

    test_case_key: str
    model_key: str
    question: str
    expected_output: str
    actual_output: str | None
    retrieved_context: list[RetrievedChunk]
    output_condition: str
    expected_retrieved_doc_uris: list[str]
    categories: list[str]
    duration: float | None
    cost: float | None
    input_tokens: int | None
    output_tokens: int | None
    host_error: str | None
    constraints: list[str] = field(default_factory=list)
    guidelines: list[str] = field(default_factory=list)
    turns: list[ConversationTurn] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    tool_calls: list[ToolCall] = field(default_factory=list)
    assertions: list[Assertion] = field(default_factory=list)
    response_format: str = "text"
    case_weight: float = 1.0
    relationships: list[tuple[str, str]] = field(default_factory=list)
    answer_absent: str | None = None
    """Why a request that did not fail has no answer (its last model reply was a tool call): the reason an
    answer-level evaluator gives for leaving it unscored."""

    @classmethod
    def build(cls, **fields: Any) -> "CaseContext":
        """A context from just the fields a test needs; the rest take neutral defaults."""
        defaults: dict[str, Any] = {
            "test_case_key": "case",
            "model_key": "model",
            "question": "",
            "expected_output": "",
            "actual_output": None,
            "retrieved_context": [],
            "output_condition": "",
            "expected_retrieved_doc_uris": [],
            "categories": [],
            "duration": None,
            "cost": None,
            "input_tokens": None,
            "output_tokens": None,
            "host_error": None,
        }
        context = fields.pop("retrieved_context", None)
        if context is not None:
            defaults["retrieved_context"] = [
                chunk if isinstance(chunk, RetrievedChunk) else RetrievedChunk(text=chunk, rank=rank)
                for rank, chunk in enumerate(context)
            ]
        return cls(**(defaults | fields))

    @classmethod
    def from_row(cls, row: TestLabRow) -> "CaseContext":
        case = row.test_case
        return cls(
            test_case_key=case.key,
            model_key=row.model_key,
            question=case.prompt,
            expected_output=case.expected_output,
            actual_output=row.actual_output,
            retrieved_context=list(row.context),
            output_condition=case.output_condition,
            expected_retrieved_doc_uris=list(case.expected_retrieved_doc_uris),
            categories=list(case.categories),
            duration=row.actual_duration,
            cost=row.cost,
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            host_error=row.error,
            constraints=list(case.constraints),
            guidelines=list(case.guidelines),
            turns=list(case.turns),
            variables=dict(case.variables),
            tool_calls=list(row.tool_calls),
            assertions=list(case.assertions),
            response_format=case.response_format,
            case_weight=case.weight,
            relationships=[(link.type, link.target) for link in case.relationships],
            answer_absent=row.answer_absent,
        )

    def missing(self, inputs: Sequence[str]) -> list[str]:
        """Names of the required inputs this case lacks."""
        present = {
            "question": bool(self.question.strip()),
            "expected_output": bool(self.expected_output.strip()),
            "actual_output": self.actual_output is not None and bool(self.actual_output.strip()),
            "retrieved_context": bool(self.retrieved_context),
            "output_condition": bool(self.output_condition.strip()),
            "expected_retrieved_doc_uris": bool(self.expected_retrieved_doc_uris),
            "duration": self.duration is not None,
            "cost": self.cost is not None,
            "tokens": self.input_tokens is not None or self.output_tokens is not None,
            "assertions": bool(self.assertions),
            "conversation": bool(self.turns),
            "tool_calls": bool(self.tool_calls),
        }
        return [name for name in inputs if not present[name]]


def quantity_metric(
    key: str,
    display_name: str,
    description: str,
    *,
    ceiling: float,
    threshold: float | None,
    higher_is_better: bool = False,
    primary: bool = False,
    aggregate_name: str | None = None,
) -> MetricMeta:
    """A quantity from 0 up to ``ceiling`` (seconds, tokens, steps, nats per token; a score has ceiling 1), where
    less is better unless said; with no ``threshold`` the metric reports no problems. Every metric kind below
    is one of these."""
    return MetricMeta(
        key=key,
        display_name=display_name,
        description=description,
        higher_is_better=higher_is_better,
        threshold=threshold,
        range=(0.0, ceiling),
        is_primary=primary,
        aggregate_name=aggregate_name,
    )


def score_metric(
    key: str,
    display_name: str,
    description: str,
    *,
    primary: bool = False,
    higher_is_better: bool = True,
    threshold: float | None = 0.75,
    aggregate_name: str | None = None,
) -> MetricMeta:
    """A score in [0, 1], by default higher is better and passing from 0.75 (the most common kind of metric): a
    similarity, an overlap, a share of cases; or, with ``higher_is_better=False``, the probability of a harm."""
    return quantity_metric(
        key,
        display_name,
        description,
        ceiling=1.0,
        threshold=threshold,
        higher_is_better=higher_is_better,
        primary=primary,
        aggregate_name=aggregate_name,
    )


def failure_metric(key: str, display_name: str, description: str) -> MetricMeta:
    """A share of failing outputs (or of failures of one kind), lower is better, a problem from 0.5."""
    return score_metric(key, display_name, description, higher_is_better=False, threshold=0.5)


def verdict_metrics(rows: Sequence[tuple[str, str, str]]) -> list[MetricMeta]:
    """The metrics of a per-case pass/fail verdict, from (key, display name, description) rows: shares of cases
    with threshold 0.5, where ``model_passes`` is the primary metric and the only one where higher is better
    (the others, ``model_failures`` and the like, count failures of one kind)."""
    return [
        score_metric(
            key,
            display_name,
            description,
            primary=key == "model_passes",
            higher_is_better=key == "model_passes",
            threshold=0.5,
        )
        for key, display_name, description in rows
    ]


def golden_pair(good_answer: str, bad_answer: str, **shared: Any) -> dict[str, dict[str, Any]]:
    """An evaluator's ``golden`` cases (see ``Evaluator``) where they differ only in the actual answer:
    ``shared`` holds the other ``CaseContext.build`` fields, the same in both (each case gets its own copy)."""
    return _golden_cases("actual_output", good_answer, bad_answer, shared)


def golden_contexts(
    good_context: list[str] | list[RetrievedChunk], bad_context: list[str] | list[RetrievedChunk], **shared: Any
) -> dict[str, dict[str, Any]]:
    """The ``golden`` cases of an evaluator of retrieval, where they differ only in the retrieved context:
    ``shared`` as in ``golden_pair``."""
    return _golden_cases("retrieved_context", good_context, bad_context, shared)


def _golden_cases(differing: str, good: Any, bad: Any, shared: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        "good": {**copy.deepcopy(shared), differing: good},
        "bad": {**copy.deepcopy(shared), differing: bad},
    }


_SHARED_FIELDS = ("services", PRIMARY_OVERRIDE, METRIC_OVERRIDES)


@dataclass(frozen=True)
class Scored:
    """Scores plus per-case details for reviewers (which PII was found, unsupported sentences...)."""

    scores: dict[str, float | None]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Evaluator(ABC):
    """Subclasses declare ``spec`` and ``golden`` once; the conformance suite checks both.

    ``golden`` holds two ``CaseContext.build`` field sets, "good" and "bad", whose primary metric must land
    on the good and the bad side of the default threshold respectively.
    """

    spec: ClassVar[EvaluatorSpec]
    golden: ClassVar[dict[str, dict[str, Any]]]
    shardable: ClassVar[bool] = True
    """Whether a lab scored in shards of test cases gives exactly the scores of one run (``evaluators.shards``):
    true while ``score`` depends on its case alone and ``prepare`` only batches per-text work. Set it False when
    a case's score depends on the other cases (corpus-wide statistics built in ``prepare``)."""
    threshold_note: ClassVar[str] = ""
    """What a user should know when setting the primary metric's threshold (its unit, what to set it to)."""
    services: Services = field(default_factory=Services, repr=False, compare=False)
    # The threshold overrides every evaluator takes, declared here once and read only through
    # ``assay.models.thresholds`` (``threshold`` below, ``EvaluationResult.threshold``, the threshold book).
    metric_threshold: float | None = field(default=None, kw_only=True)
    thresholds: dict[str, float] = field(
        default_factory=dict,
        kw_only=True,
        metadata={"description": "Overrides the default thresholds of the metrics named, {metric: value}."},
    )

    @classmethod
    def parameter_fields(cls) -> list[dataclasses.Field]:
        """The dataclass fields that are parameters (bar ``services``): the evaluator's own first, then the
        threshold overrides every evaluator shares."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        own = [f for name, f in fields.items() if name not in _SHARED_FIELDS]
        return [*own, *(fields[name] for name in _SHARED_FIELDS[1:])]

    @classmethod
    def parameter_meta(cls) -> list[ParameterMeta]:
        """The parameters' metadata; their descriptions live in field metadata (the primary override's is
        written from the spec)."""
        return [
            ParameterMeta(
                name=f.name,
                description=cls._primary_override_help() if f.name == PRIMARY_OVERRIDE else f.metadata.get(
                    "description", ""
                ),
                type=getattr(f.type, "__name__", str(f.type)),
                default=None if f.default is dataclasses.MISSING else f.default,
            )
            for f in cls.parameter_fields()
        ]

    @classmethod
    def _primary_override_help(cls) -> str:
        primary = cls.spec.primary_metric
        said = f"Overrides the default threshold ({primary.threshold:g}) of the primary metric {primary.key}."
        return f"{said} {cls.threshold_note}" if cls.threshold_note else said

    @classmethod
    def full_spec(cls) -> EvaluatorSpec:
        return cls.spec.model_copy(update={"parameters": cls.parameter_meta()})

    def parameters(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in self.parameter_fields()}

    def threshold_overrides(self) -> dict[str, float]:
        """metric -> the threshold the user set for this run."""
        set_by_user = {PRIMARY_OVERRIDE: self.metric_threshold, METRIC_OVERRIDES: self.thresholds}
        return overrides_in(set_by_user, self.spec.primary_metric.key)

    def default_threshold(self, metric_key: str) -> float | None:
        """The threshold when nobody set one: the spec's, unless a parameter changes what the score means."""
        return self.spec.metric(metric_key).threshold

    def threshold(self, metric_key: str) -> float | None:
        """The threshold in force while scoring (no calibration yet): the user's override, else the default."""
        value, _ = resolve_threshold(metric_key, self.default_threshold(metric_key), self.threshold_overrides())
        return value

    def context_for(self, row: TestLabRow) -> CaseContext:
        """The case as this evaluator reads it: the row's, completed by run-level parameters (the assertions a
        run sets per category). Every run, shard merge and ``--evaluators all`` builds its cases here, so what a
        parameter adds counts for the required inputs too. Must not raise: parameters are checked when built."""
        return CaseContext.from_row(row)

    def unavailable_reason(self) -> str | None:
        """Why this evaluator cannot run here (model weights absent, no judge configured); None when it can.

        Checked once per run before scoring, so a missing model makes every case unscored with this reason
        instead of failing case by case.
        """
        return None

    def not_applicable(self, case: CaseContext) -> str | None:
        """Why this evaluator does not apply to ``case`` although its inputs are present (a classifier on
        a free-text answer, an encoding check on a case that is no encoding attack); None when it applies.
        Such cases are unscored with the reason, and ``--evaluators all`` skips an evaluator that applies to
        no case."""
        return None

    def inapplicable_reason(self, case: CaseContext) -> str | None:
        """Why this evaluator does not apply to ``case``: a task its spec declares (``spec.tasks``) that the
        case does not, else ``not_applicable``'s reason; None when it applies. Runs and ``--evaluators all``
        ask this, so a task declared once in the spec is kept everywhere."""
        reason = task_mismatch(self.spec.tasks, case.categories)
        return reason if reason is not None else self.not_applicable(case)

    def judge_summary(self) -> "JudgeSummary | None":
        """Who judged this run's cases and at what cost, for evaluators that ask an LLM judge; else None."""
        return None

    def prepare(self, cases: Sequence[CaseContext]) -> None:  # noqa: B027 - optional hook
        """Batch shared work for all cases before scoring; the default has nothing to batch."""

    def corpus_metrics(
        self, cases: Sequence[CaseContext], scores: Sequence[CaseScores]
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        """Run-level values for one model's cases, for metrics that are not a mean of per-case values
        (precision/recall/F1 over all cases, corpus BLEU), plus details (a confusion matrix). They replace
        the mean of those metrics in the aggregates. Default: none."""
        return {}, {}

    @abstractmethod
    def score(self, case: CaseContext) -> "dict[str, float | None] | Scored":
        """Metric key -> value for one case (or ``Scored`` to add details such as what was found);
        raise ``Unscored`` when the case cannot be scored."""


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two unit vectors, clipped into [0, 1] as similarity metrics report it."""
    return float(np.clip(np.dot(a, b), 0.0, 1.0))
