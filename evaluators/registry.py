"""Evaluator registry: ``@register`` records a plugin under its spec id; other packages declare theirs as
entry points in the group "assay.evaluators" (see ``assay.registry``)."""

import inspect
from typing import Any

from assay.evaluators.base import Evaluator, Services
from pydantic import ValidationError

from assay.models.evaluation import EvaluatorSpec
from assay.models.plugins import PluginOrigin, UnavailablePlugin
from assay.models.thresholds import METRIC_OVERRIDES
from assay.registry import Registry, code_origin

ENTRY_POINT_GROUP = "assay.evaluators"


def _check_metadata(cls: type[Evaluator]) -> None:
    """What every run relies on, checked once at registration: a valid spec with one primary metric, golden
    cases for the conformance suite, ``score`` implemented and ``shardable`` a bool."""
    name = f"evaluator class {cls.__module__}.{cls.__qualname__}"
    spec = getattr(cls, "spec", None)
    if not isinstance(spec, EvaluatorSpec):
        raise ValueError(f"{name}: 'spec' must be an EvaluatorSpec, got {type(spec).__name__}")
    try:
        EvaluatorSpec.model_validate(dict(spec))  # a spec built with model_construct is checked too
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "spec"
        raise ValueError(f"{name}: invalid spec field {field!r}: {first['msg']}") from None
    primaries = [metric.key for metric in spec.metrics if metric.is_primary]
    if len(primaries) != 1:
        raise ValueError(f"{name}: spec.metrics must have exactly one primary metric, found {primaries or 'none'}")
    golden = getattr(cls, "golden", None)
    if not isinstance(golden, dict) or set(golden) != {"good", "bad"}:
        raise ValueError(f"{name}: 'golden' must give a 'good' and a 'bad' case (CaseContext.build fields)")
    if inspect.isabstract(cls):
        raise ValueError(f"{name}: does not implement score")
    if not isinstance(cls.shardable, bool):
        raise TypeError(f"evaluator {spec.id!r}: 'shardable' must be True or False, got {cls.shardable!r}")


_EVALUATORS: Registry[Evaluator] = Registry(
    "evaluator", lambda cls: cls.spec.id, _check_metadata, base=Evaluator, entry_point_group=ENTRY_POINT_GROUP
)


def register(cls: type[Evaluator]) -> type[Evaluator]:
    return _EVALUATORS.register(cls)


def evaluator_ids() -> list[str]:
    return _EVALUATORS.ids()


def evaluator_class(evaluator_id: str) -> type[Evaluator]:
    return _EVALUATORS.get(evaluator_id)


def evaluator_origin(evaluator_id: str) -> PluginOrigin:
    """The package the evaluator comes from: Assay, or the one whose entry point declared it."""
    return _EVALUATORS.origin(evaluator_id)


def origin_of(evaluator: Evaluator) -> PluginOrigin:
    """Where a running evaluator's code came from: its registered id's package, or, for an instance of a class
    that was never registered (a notebook's, a test double), the package of the class's module."""
    try:
        registered = _EVALUATORS.get(evaluator.spec.id)
    except ValueError:
        registered = None
    if registered is type(evaluator):
        return _EVALUATORS.origin(evaluator.spec.id)
    return code_origin(type(evaluator))


def unavailable_evaluators() -> list[UnavailablePlugin]:
    """Evaluators other packages declare that failed to import or to register, with the reason."""
    return _EVALUATORS.unavailable()


def build_evaluator(evaluator_id: str, services: Services | None = None, **parameters: Any) -> Evaluator:
    cls = evaluator_class(evaluator_id)
    known = {meta.name for meta in cls.parameter_meta()}
    unknown = sorted(set(parameters) - known)
    if unknown:
        raise ValueError(f"evaluator {evaluator_id!r} has no parameter(s) {unknown}; it takes {sorted(known)}")
    metrics = [metric.key for metric in cls.spec.metrics]
    unknown_metrics = sorted(set(parameters.get(METRIC_OVERRIDES) or {}) - set(metrics))
    if unknown_metrics:
        raise ValueError(
            f"evaluator {evaluator_id!r} parameter {METRIC_OVERRIDES!r} names no metric(s) {unknown_metrics}; "
            f"its metrics are {metrics}"
        )
    return cls(services=services or Services(), **parameters)
