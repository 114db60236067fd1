"""Evaluator registry: ``@register`` records a plugin under its spec id."""

from typing import Any

from assay.evaluators.base import Evaluator, Services

from assay.models.thresholds import METRIC_OVERRIDES
from assay.registry import Registry


def _check_shardable(cls: type[Evaluator]) -> None:
    if not isinstance(cls.shardable, bool):
        raise TypeError(f"evaluator {cls.spec.id!r}: 'shardable' must be True or False, got {cls.shardable!r}")


_EVALUATORS: Registry[Evaluator] = Registry("evaluator", lambda cls: cls.spec.id, _check_shardable)


def register(cls: type[Evaluator]) -> type[Evaluator]:
    return _EVALUATORS.register(cls)


def evaluator_ids() -> list[str]:
    return _EVALUATORS.ids()


def evaluator_class(evaluator_id: str) -> type[Evaluator]:
    return _EVALUATORS.get(evaluator_id)


def build_evaluator(evaluator_id: str, services: Services | None = None, **parameters: Any) -> Evaluator:
    cls = evaluator_class(evaluator_id)
    known = {meta.name for meta in cls.parameter_meta()}
    unknown = sorted(set(parameters) - known)
    if unknown:
        raise ValueError(
            f"evaluator {evaluator_id!r} has no parameter(s) {unknown}; it takes {sorted(known)}"
        )
    metrics = [metric.key for metric in cls.spec.metrics]
    unknown_metrics = sorted(set(parameters.get(METRIC_OVERRIDES) or {}) - set(metrics))
    if unknown_metrics:
        raise ValueError(
            f"evaluator {evaluator_id!r} parameter {METRIC_OVERRIDES!r} names no metric(s) {unknown_metrics}; "
            f"its metrics are {metrics}"
        )
    return cls(services=services or Services(), **parameters)
