"""Build a run's threshold book (``assay.models.thresholds``): each metric's declared default, replaced by a
user's override where the run set one (``metric_threshold``, ``thresholds``), replaced by a calibrated value only
where a person (in the Prefect UI or through an approvals file) labelled enough answers for it to be refitted.

Nothing is called calibrated without a person: an unattended run keeps defaults and overrides, marked
"no reviewer"."""

from collections.abc import Sequence

from assay.models.evaluation import EvaluationResult
from assay.models.mrm import NOT_MEANINGFUL, Calibration
from assay.models.thresholds import (
    DEFAULT_SET_BY,
    NO_REVIEWER,
    ThresholdBook,
    ThresholdEntry,
    override_origin,
    resolve_threshold,
)


def threshold_book(
    results: Sequence[EvaluationResult], calibration: Calibration | None = None, reviewer: str = NO_REVIEWER
) -> ThresholdBook:
    """``reviewer`` names who labelled the calibration sample and how (e.g. "ana (prefect-ui)"); calibrated
    values are taken only when the calibration was decided by a person."""
    fitted = {}
    if calibration is not None and calibration.decided_by == "person":
        fitted = {(item.evaluator_id, item.metric): item for item in calibration.metrics}
    entries = []
    for result in results:
        overrides, primary = result.threshold_overrides(), result.evaluator.primary_metric.key
        for metric in result.evaluator.metrics:
            in_run, source = resolve_threshold(metric.key, metric.threshold, overrides)
            entry = ThresholdEntry(
                evaluator_id=result.evaluator.id,
                metric=metric.key,
                threshold=in_run,
                higher_is_better=metric.higher_is_better,
                source=source,
                set_by=DEFAULT_SET_BY
                if source == "default"
                else override_origin(result.parameters, metric.key, primary),
                default_threshold=metric.threshold,
            )
            item = fitted.get((result.evaluator.id, metric.key))
            if item is not None and item.calibrated_threshold is not None:
                entry = entry.model_copy(
                    update={
                        "threshold": item.calibrated_threshold,
                        "source": "calibrated",
                        "set_by": f"calibrated on {item.labels} labels by {reviewer}{_changed(item.labels_changed)}",
                        "calibration": item.method,
                        "outcome": item.outcome,
                    }
                )
            elif item is not None:
                entry = entry.model_copy(
                    update={
                        "calibration": f"labelled by {reviewer}: {item.method}",
                        "outcome": item.outcome,
                        "in_verdict": item.outcome != NOT_MEANINGFUL,
                    }
                )
            elif metric.is_primary and in_run is not None:
                entry = entry.model_copy(update={"calibration": NO_REVIEWER if not fitted else "not sampled"})
            entries.append(entry)
    changed = [item.labels_changed for item in fitted.values()]
    return ThresholdBook(
        entries=entries,
        reviewer=reviewer if fitted else NO_REVIEWER,
        labels=sum(item.labels for item in fitted.values()),
        labels_changed=None if None in changed else sum(changed),  # type: ignore[arg-type]
    )


def _changed(count: int | None) -> str:
    return "" if count is None else f" ({count} changed from the metric's verdict)"
