"""Validate evaluators against answers people labelled: score every labelled answer with each evaluator (built
and run exactly as a run does: ``build_evaluator``, ``Services``, ``run_evaluator``) and with the one-line
baselines, then measure how well each metric separates label 1 from label 0 (``assay.validity.metric_figures``).

Nothing here aborts on one bad row or one broken evaluator: a row an evaluator cannot score is unscored with
the reason, an evaluator that cannot run here (no weights, no judge, an error) is listed as unavailable."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from assay.evaluators.base import Evaluator, Services
from assay.evaluators.registry import build_evaluator
from assay.evaluators.runner import run_evaluator
from assay.evaluators.selection import run_parameters, select_evaluators
from assay.models.evaluation import CaseScores, MetricMeta
from assay.models.thresholds import ThresholdBook, override_origin
from assay.models.validity import MetricValidity, ThresholdInForce, ValidityReport
from assay.validity.baselines import BASELINES, score_baselines
from assay.validity.labels import LabelledSet
from assay.validity.metric_figures import LabelledScores, metric_validity
from assay.validity.metrics import BOOTSTRAP_RESAMPLES, CONFIDENCE

NO_BASELINE_THRESHOLD = ThresholdInForce(value=None, source="none", set_by="a baseline has no threshold")


@dataclass(frozen=True)
class Validation:
    """``report`` is validity.json; ``rows`` the per-row scores (rows.jsonl), in the labels' order."""

    report: ValidityReport
    rows: list[dict[str, Any]]


def threshold_in_force(
    evaluator: Evaluator, metric: MetricMeta, book: ThresholdBook | None = None, book_name: str = "thresholds file"
) -> ThresholdInForce:
    """The threshold a verdict is taken at and who set it: the user's override (``metric_threshold``,
    ``thresholds``), else the threshold book's entry (an MRM run's ``thresholds.json``: calibrated ones were
    set by a person), else the evaluator's declared default."""
    in_run = evaluator.threshold(metric.key)
    if metric.key in evaluator.threshold_overrides():
        origin = override_origin(evaluator.parameters(), metric.key, evaluator.spec.primary_metric.key)
        set_by = f"{origin.removeprefix('run ')} (--param or --evaluators-config)"
        return ThresholdInForce(value=in_run, source="user", set_by=set_by)
    entry = book.entry(evaluator.spec.id, metric.key) if book is not None else None
    if entry is not None and entry.threshold is not None:
        return ThresholdInForce(value=entry.threshold, source=entry.source, set_by=f"{entry.set_by} ({book_name})")
    if in_run is None:
        return ThresholdInForce(value=None, source="none", set_by="the metric declares no threshold")
    return ThresholdInForce(value=in_run, source="default", set_by="evaluator default")


def validate_labelled_set(
    labelled: LabelledSet,
    evaluator_ids: Sequence[str],
    services: Services,
    *,
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
    thresholds: ThresholdBook | None = None,
    thresholds_name: str = "thresholds file",
    baselines: Sequence[str] = tuple(BASELINES),
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> Validation:
    """Score ``labelled`` with ``evaluator_ids`` (or ``["all"]``: every evaluator whose inputs the answers have
    and that is available here) and ``baselines``; ``parameters``: evaluator id -> parameters."""
    lab = labelled.lab()
    ids = [row.id for row in labelled.rows]
    labels = [row.label for row in labelled.rows]
    groups = [row.group for row in labelled.rows]
    user_parameters = parameters or {}
    selected, unavailable = select_evaluators(lab, evaluator_ids, services)
    figures: dict[str, dict[str, MetricValidity]] = {}
    per_row: list[dict[str, Any]] = [
        {"id": row.id, "label": row.label, "group": row.group, "evaluators": {}, "baselines": {}}
        for row in labelled.rows
    ]
    for evaluator_id in selected:
        try:
            values = run_parameters(evaluator_ids, evaluator_id, dict(user_parameters.get(evaluator_id, {})))
            evaluator = build_evaluator(evaluator_id, services, **values)
            reason = evaluator.unavailable_reason()
            result = None if reason is not None else run_evaluator(evaluator, lab).rows
        except Exception as error:  # one broken evaluator is reported, it never aborts the validation
            reason, result = f"evaluator error: {type(error).__name__}: {error}", None
        if result is None:
            unavailable[evaluator_id] = str(reason)
            continue
        _add_rows(per_row, evaluator_id, result)
        figures[evaluator_id] = {
            metric.key: metric_validity(
                LabelledScores(
                    evaluator_id,
                    metric.key,
                    metric.display_name,
                    metric.higher_is_better,
                    [row.scores.get(metric.key) for row in result],
                    [row.unscored_reason for row in result],
                ),
                ids,
                labels,
                groups,
                threshold_in_force(evaluator, metric, thresholds, thresholds_name),
                resamples=resamples,
                seed=seed,
            )
            for metric in evaluator.spec.metrics
        }
    baseline_figures = _baselines(labelled, services, baselines, per_row, unavailable, resamples, seed)
    report = ValidityReport(
        labels_file=str(labelled.path),
        labels_sha256=labelled.sha256,
        labels_source=labelled.source,
        rows=len(labelled.rows),
        acceptable=labelled.acceptable,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        evaluators=figures,
        baselines=baseline_figures,
        unavailable=unavailable,
        notes=list(labelled.notes),
        bootstrap={"resamples": resamples, "seed": seed, "confidence": CONFIDENCE},
    )
    return Validation(report, per_row)


def _add_rows(per_row: list[dict[str, Any]], evaluator_id: str, result: Sequence[CaseScores]) -> None:
    for record, scored in zip(per_row, result, strict=True):
        entry: dict[str, Any] = {"scores": dict(scored.scores), "unscored_reason": scored.unscored_reason}
        backend = scored.details.get("backend")
        if backend is not None:
            entry["backend"] = backend
        record["evaluators"][evaluator_id] = entry


def _baselines(
    labelled: LabelledSet,
    services: Services,
    chosen: Sequence[str],
    per_row: list[dict[str, Any]],
    unavailable: dict[str, str],
    resamples: int,
    seed: int,
) -> dict[str, dict[str, MetricValidity]]:
    answers = [row.row.actual_output or "" for row in labelled.rows]
    contexts = [[chunk.text for chunk in row.row.context] for row in labelled.rows]
    scores = score_baselines(answers, contexts, lambda: services.embedder, chosen)
    unavailable.update({f"baseline {name}": reason for name, reason in scores.unavailable.items()})
    ids, labels, groups = (
        [row.id for row in labelled.rows],
        [row.label for row in labelled.rows],
        [row.group for row in labelled.rows],
    )
    figures = {}
    for name, values in scores.values.items():
        reasons = scores.reasons[name]
        for record, value, reason in zip(per_row, values, reasons, strict=True):
            record["baselines"][name] = {"score": value, "unscored_reason": reason}
        baseline = BASELINES[name]
        labelled_scores = LabelledScores(name, name, baseline.display_name, baseline.higher_is_better, values, reasons)
        figures[name] = {
            name: metric_validity(
                labelled_scores, ids, labels, groups, NO_BASELINE_THRESHOLD, resamples=resamples, seed=seed
            )
        }
    return figures
