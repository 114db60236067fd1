"""Loading a guardrail configuration (``guardrails.json``) and checking it before any answer is judged by it.

A service that silently ignored a misspelt evaluator or metric would let through every answer that metric was
meant to stop, so every problem is an error naming the file and the field at fault. Two shapes load: the one
``artifacts.guardrails.build_guardrail_config`` writes (with ``threshold_details`` saying where each threshold
came from and which side is bad) and the manual's two-key shape (``calibrated_thresholds`` and
``evaluator_ids``), where the direction comes from the evaluator's own metadata and the source is "config".
A detail's ``validity`` (the measurement behind the threshold: reviewer labels, published figures or "not
measured") is checked for shape and kept as its one-line summary, so a verdict can be traced to how far its
threshold was ever checked against people; a configuration written before it existed says "not recorded".

Optional keys the service adds: ``actions`` (evaluator -> "block" | "flag", overriding the default of blocking
on privacy and security evaluators), ``parameters`` (evaluator -> build parameters), ``version`` and
``service`` (the request limits and CPU budget of ``ServiceLimits``; each has a default)."""

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from assay import evaluators
from assay.evaluators.registry import evaluator_class
from assay.jsonio import JSONInputError, strict_loads
from assay.models.evaluation import on_good_side
from assay.models.guardrail import Action
from assay.models.thresholds import NO_REVIEWER, ThresholdBook, ThresholdEntry

KNOWN_KEYS = (
    "calibrated_thresholds",
    "evaluator_ids",
    "thresholds_reviewed_by",
    "thresholds_labelled",
    "threshold_details",
    "actions",
    "parameters",
    "version",
    "service",
)
ACTIONS: tuple[Action, ...] = ("block", "flag")
VALIDITY_BASES = ("reviewer labels", "published", "not measured")
NOT_RECORDED = "not recorded in the configuration"
DEFAULT_EVALUATORS = ("groundedness", "pii_leakage", "sensitive_data_leakage", "toxicity")
"""The default configuration (``examples/guardrails.json``): toxicity is reported unavailable where its
weights are absent."""
Fail = Callable[[str, str], ValueError]


@dataclass(frozen=True)
class GuardedMetric:
    """One threshold the guardrail applies, with the side that passes and where the value came from."""

    metric: str
    threshold: float
    higher_is_better: bool
    source: str
    set_by: str
    validity: str = NOT_RECORDED

    def passes(self, value: float) -> bool:
        return on_good_side(value, self.threshold, self.higher_is_better)


@dataclass(frozen=True)
class ServiceLimits:
    """What one ``/check`` request may cost: an answer of any size is checked in full, so these bounds are what
    keeps one hostile body (100k context items, seconds of embedding) from taking the service's CPU."""

    max_context_items: int = 100
    """Retrieved chunks per request; a RAG system sends a handful. More: 422."""
    max_text_chars: int = 100_000
    """Characters of question, answer and context together (about 15k words). More: 422."""
    check_budget_s: float = 5.0
    """Wall-clock seconds one check may run; past it the check stops (between embedding batches and between
    evaluators) and the request gets 503 with the reason, never a verdict from a partial check."""
    concurrent_checks: int = 1
    """Checks one worker process runs at once; the others wait their turn (in arrival order). Checks are
    Python-bound: several at once share one interpreter lock and cost more each (bench/guardrail.py, 16 clients
    on 2 cores: see docs/how-to/guardrail.md); use ``serve --workers`` for more CPUs."""
    embedding_threads: int = 2
    """Threads the embedding model uses per call. Two: a check's few sentences are one small batch, which ONNX
    Runtime splits across both cores of this 2-core machine (p50 85 ms against 130-140 ms with one thread at 1
    client, bench/guardrail.py); under load the throughput is that of two single-thread workers (about 15
    requests/s either way). With torch, keep 1: its threads spin-wait on a shared CPU."""


@dataclass(frozen=True)
class GuardrailConfig:
    source: str
    sha256: str
    evaluators: dict[str, dict[str, GuardedMetric]]
    actions: dict[str, Action] = field(default_factory=dict)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: str | None = None
    reviewed_by: str | None = None
    labelled: str | None = None  # 'N labels by X, M changed' (the threshold book's statement)
    limits: ServiceLimits = field(default_factory=ServiceLimits)


def default_config_data(evaluator_ids: Sequence[str] = DEFAULT_EVALUATORS) -> dict[str, Any]:
    """A configuration with each evaluator's declared default thresholds, written by the same builder an MRM
    run uses (``build_guardrail_config``), so the example and a run's ``guardrails.json`` never diverge."""
    from assay.artifacts.guardrails import build_guardrail_config

    entries = [
        ThresholdEntry(
            evaluator_id=evaluator_id,
            metric=metric.key,
            threshold=metric.threshold,
            higher_is_better=metric.higher_is_better,
            source="default",
            set_by="evaluator default",
            default_threshold=metric.threshold,
        )
        for evaluator_id in evaluator_ids
        for metric in evaluator_class(evaluator_id).spec.metrics
    ]
    return build_guardrail_config(ThresholdBook(entries=entries, reviewer=NO_REVIEWER))


def load_config(path: str | Path) -> GuardrailConfig:
    """Read and check a configuration file; every error names the file and, where it applies, the field."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: guardrail configuration not found") from None
    except OSError as error:
        raise ValueError(f"{path}: cannot read the guardrail configuration ({error.strerror or error})") from None
    try:
        data = strict_loads(raw.decode(json.detect_encoding(raw)))
    except JSONInputError as error:
        raise ValueError(f"{path}: {error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    return parse_config(data, source=str(path), sha256=hashlib.sha256(raw).hexdigest())


def parse_config(data: Any, *, source: str, sha256: str | None = None) -> GuardrailConfig:
    """Check an already parsed configuration; ``source`` names it in errors (a file name or "<inline>")."""
    if sha256 is None:
        sha256 = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def fail(where: str, problem: str) -> ValueError:
        return ValueError(f"{source}: {where}: {problem}")

    if not isinstance(data, dict):
        raise fail("top level", f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(KNOWN_KEYS))
    if unknown:
        raise fail(unknown[0], f"unknown key; a guardrail configuration has {', '.join(KNOWN_KEYS)}")
    ids = _evaluator_ids(data.get("evaluator_ids"), fail)
    thresholds = data.get("calibrated_thresholds")
    if not isinstance(thresholds, dict):
        raise fail("calibrated_thresholds", "missing or not an object of evaluator -> metric -> threshold")
    for evaluator_id in thresholds:
        if evaluator_id not in ids:
            raise fail(f"calibrated_thresholds.{evaluator_id}", "not listed in evaluator_ids")
    details = data.get("threshold_details", {})
    if not isinstance(details, dict):
        raise fail("threshold_details", "expected an object of evaluator -> metric -> details")
    guarded = {
        evaluator_id: _metrics(evaluator_id, thresholds.get(evaluator_id), details.get(evaluator_id, {}), fail)
        for evaluator_id in ids
    }
    return GuardrailConfig(
        source=source,
        sha256=sha256,
        evaluators=guarded,
        actions=_actions(data.get("actions", {}), ids, fail),
        parameters=_parameters(data.get("parameters", {}), ids, fail),
        version=_optional_text(data, "version", fail),
        reviewed_by=_optional_text(data, "thresholds_reviewed_by", fail),
        labelled=_optional_text(data, "thresholds_labelled", fail),
        limits=_limits(data.get("service", {}), fail),
    )


def _evaluator_ids(value: Any, fail: Fail) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise fail("evaluator_ids", "expected a non-empty list of evaluator ids")
    known = evaluators.evaluator_ids()
    for index, evaluator_id in enumerate(value):
        if evaluator_id not in known:
            raise fail(f"evaluator_ids[{index}]", f"unknown evaluator {evaluator_id!r}; known: {', '.join(known)}")
        if evaluator_id in value[:index]:
            raise fail(f"evaluator_ids[{index}]", f"{evaluator_id!r} is listed twice")
    return list(value)


def _metrics(evaluator_id: str, thresholds: Any, details: Any, fail: Fail) -> dict[str, GuardedMetric]:
    where = f"calibrated_thresholds.{evaluator_id}"
    if thresholds is None:
        raise fail(where, "missing: an evaluator in evaluator_ids needs at least one metric threshold")
    if not isinstance(thresholds, dict) or not thresholds:
        raise fail(where, "expected a non-empty object of metric -> threshold")
    if not isinstance(details, dict):
        raise fail(f"threshold_details.{evaluator_id}", "expected an object of metric -> details")
    spec = evaluator_class(evaluator_id).spec
    declared = {metric.key: metric for metric in spec.metrics}
    guarded = {}
    for key, value in thresholds.items():
        if key not in declared:
            raise fail(f"{where}.{key}", f"{evaluator_id} has no such metric; it has {', '.join(declared)}")
        meta = declared[key]
        if value is None:
            raise fail(f"{where}.{key}", "missing threshold (null)")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise fail(f"{where}.{key}", f"expected a finite number, got {value!r}")
        low, high = meta.range
        if not low <= value <= high:
            raise fail(f"{where}.{key}", f"threshold {value} is outside the metric's range [{low}, {high}]")
        detail = details.get(key, {})
        detail_where = f"threshold_details.{evaluator_id}.{key}"
        if not isinstance(detail, dict):
            raise fail(detail_where, "expected an object")
        higher_is_better = detail.get("higher_is_better", meta.higher_is_better)
        if higher_is_better is not meta.higher_is_better:
            raise fail(
                f"{detail_where}.higher_is_better",
                f"{higher_is_better!r} contradicts the evaluator's declared direction ({meta.higher_is_better})",
            )
        if "threshold" in detail and detail["threshold"] != value:
            raise fail(f"{detail_where}.threshold", f"{detail['threshold']!r} differs from {where}.{key} ({value})")
        guarded[key] = GuardedMetric(
            metric=key,
            threshold=float(value),
            higher_is_better=meta.higher_is_better,
            source=str(detail.get("source", "config")),
            set_by=str(detail.get("set_by", "guardrail configuration (no threshold_details)")),
            validity=_validity(detail.get("validity"), f"{detail_where}.validity", fail),
        )
    unknown_details = sorted(set(details) - set(thresholds))
    if unknown_details:
        raise fail(f"threshold_details.{evaluator_id}.{unknown_details[0]}", f"no threshold in {where} for it")
    return guarded


def _validity(value: Any, where: str, fail: Fail) -> str:
    """The summary of a checked ``validity`` object (``assay.validity.figures.threshold_validity``'s shape)."""
    if value is None:
        return NOT_RECORDED
    if not isinstance(value, dict):
        raise fail(where, "expected an object with basis, figures and summary")
    basis, figures, summary = value.get("basis"), value.get("figures"), value.get("summary")
    if basis not in VALIDITY_BASES:
        raise fail(f"{where}.basis", f"expected one of {', '.join(VALIDITY_BASES)}, got {basis!r}")
    if not isinstance(figures, list) or not all(isinstance(figure, dict) for figure in figures):
        raise fail(f"{where}.figures", "expected a list of objects")
    if (basis == "not measured") != (not figures):
        raise fail(f"{where}.figures", f"basis {basis!r} with {len(figures)} figure(s)")
    for index, figure in enumerate(figures):
        for name in ("auc", "auc_low", "auc_high"):
            number = figure.get(name)
            if number is not None and (isinstance(number, bool) or not isinstance(number, int | float)):
                raise fail(f"{where}.figures[{index}].{name}", f"expected a number or null, got {number!r}")
            if number is not None and not 0 <= number <= 1:
                raise fail(f"{where}.figures[{index}].{name}", f"{number} is outside [0, 1]")
    if not isinstance(summary, str) or not summary.strip():
        raise fail(f"{where}.summary", "expected a non-empty string")
    return summary


def _actions(value: Any, ids: list[str], fail: Fail) -> dict[str, Action]:
    if not isinstance(value, dict):
        raise fail("actions", 'expected an object of evaluator -> "block" | "flag"')
    for evaluator_id, action in value.items():
        if evaluator_id not in ids:
            raise fail(f"actions.{evaluator_id}", "not listed in evaluator_ids")
        if action not in ACTIONS:
            raise fail(f"actions.{evaluator_id}", f'expected "block" or "flag", got {action!r}')
    return cast(dict[str, Literal["block", "flag"]], dict(value))


def _parameters(value: Any, ids: list[str], fail: Fail) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        raise fail("parameters", "expected an object of evaluator -> parameters")
    for evaluator_id, parameters in value.items():
        if evaluator_id not in ids:
            raise fail(f"parameters.{evaluator_id}", "not listed in evaluator_ids")
        if not isinstance(parameters, dict):
            raise fail(f"parameters.{evaluator_id}", "expected an object of parameter -> value")
        known = {meta.name for meta in evaluator_class(evaluator_id).parameter_meta()}
        for name in parameters:
            if name not in known:
                takes = ", ".join(sorted(known))
                raise fail(f"parameters.{evaluator_id}.{name}", f"no such parameter; it takes {takes}")
    return {evaluator_id: dict(parameters) for evaluator_id, parameters in value.items()}


def _limits(value: Any, fail: Fail) -> ServiceLimits:
    if not isinstance(value, dict):
        raise fail("service", "expected an object of limit -> value")
    defaults = ServiceLimits()
    known = {name: type(getattr(defaults, name)) for name in ServiceLimits.__dataclass_fields__}
    for name, number in value.items():
        if name not in known:
            raise fail(f"service.{name}", f"unknown setting; the service has {', '.join(known)}")
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number) or number <= 0:
            raise fail(f"service.{name}", f"expected a positive number, got {number!r}")
        if known[name] is int and number != int(number):
            raise fail(f"service.{name}", f"expected a whole number, got {number!r}")
    return ServiceLimits(**{name: known[name](number) for name, number in value.items()})


def _optional_text(data: dict[str, Any], key: str, fail: Fail) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise fail(key, f"expected a string, got {type(value).__name__}")
    return value
