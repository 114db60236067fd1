"""Validity figures in the one plain shape that ``guardrails.json`` records and the reports show: each figure
says what kind of measurement it is, who or what made it, on how many labelled answers, and its ROC-AUC with
the 95% interval, so a reader of either can tell a threshold measured against people from one nobody checked.

``threshold_validity`` picks what stands behind one threshold: this run's reviewer labels when the reviewer
labelled that metric (for a calibrated threshold, only those), else the published benchmark figures, else an
explicit "not measured". Pure, no I/O: published figures are passed in. (``assay evaluators validate`` keeps
its own figures in ``metric_figures``.)"""

from collections.abc import Sequence
from typing import Any, Literal

from assay.models.mrm import CalibrationValidity
from assay.validity.published import PublishedFigure

Basis = Literal["reviewer labels", "published", "not measured"]
NOT_MEASURED = "not measured against human labels"
REVIEW_STEP = "MRM step 5"


def reviewer_by(validity: CalibrationValidity, run_id: str = "") -> str:
    """'reviewer labels (Ana Lima), MRM step 5, run <id>': the people, as the approvals name them."""
    names = ", ".join(validity.labelled_by) or "unnamed reviewer"
    return f"reviewer labels ({names}), {REVIEW_STEP}" + (f", run {run_id}" if run_id else "")


def reviewer_figure(validity: CalibrationValidity, run_id: str = "") -> dict[str, Any]:
    """The reviewer's figure at the threshold in force after calibration (in-sample when it was refitted)."""
    after = validity.after
    figure = {
        "kind": "reviewer labels",
        "by": reviewer_by(validity, run_id),
        "n": validity.n,
        "auc": validity.auc,
        "auc_low": validity.auc_low,
        "auc_high": validity.auc_high,
        "threshold": after.threshold,
        "accuracy": after.accuracy,
        "accuracy_low": after.accuracy_low,
        "accuracy_high": after.accuracy_high,
        "in_sample": validity.refitted,
    }
    return {**figure, "summary": summary(figure)}


def published_by(figure: PublishedFigure) -> str:
    """Credits the data: '<source> (<licence>), set <set>, <split> split; bench/validity.py, <date>'."""
    made = ", ".join(part for part in (figure.measured_by, figure.measured_on) if part)
    return f"{figure.source} ({figure.licence}), set {figure.set}, {figure.split} split" + (f"; {made}" if made else "")


def published_figure(figure: PublishedFigure) -> dict[str, Any]:
    data = {"kind": "published", "by": published_by(figure), **figure.model_dump(mode="json")}
    return {**data, "summary": summary(data)}


def summary(figure: dict[str, Any]) -> str:
    """One line: 'AUC 0.910 [0.850, 0.960], n 24; <by>' (AUC "not computable" with one class of labels)."""
    auc = figure.get("auc")
    text = "AUC not computable (one class of labels)" if auc is None else f"AUC {auc:.3f}"
    if auc is not None and figure.get("auc_low") is not None:
        text += f" [{figure['auc_low']:.3f}, {figure['auc_high']:.3f}]"
    return f"{text}, n {figure['n']}; {figure['by']}"


def threshold_validity(
    validity: CalibrationValidity | None,
    calibrated: bool,
    published: Sequence[PublishedFigure],
    run_id: str = "",
) -> dict[str, Any]:
    """``{"basis", "figures", "summary"}`` for one threshold. ``validity``: this run's reviewer figures for
    the metric (None: not labelled); ``calibrated``: the threshold was refitted on them."""
    figures = [reviewer_figure(validity, run_id)] if validity is not None else []
    if not calibrated:
        figures += [published_figure(figure) for figure in published]
    basis: Basis = figures[0]["kind"] if figures else "not measured"
    return {
        "basis": basis,
        "figures": figures,
        "summary": " | ".join(figure["summary"] for figure in figures) or NOT_MEASURED,
    }
