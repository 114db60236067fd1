"""The calibration step's validity figures as short Markdown lines for the Prefect UI's step summary: per
metric, its agreement with the reviewer's labels (AUC and accuracy before -> after, with 95% intervals, on how
many labelled answers, whose). The same figures as the MRM report's "Evaluator validity" section
(``assay.validity.agreement`` says what they mean), cut to one line each; a run nobody labelled says so, and
a policy is never shown as a labeller. Names come from approvals files and forms: escaped for Markdown."""

from assay.escaping import for_markdown_text
from assay.models.mrm import Calibration, CalibrationValidity, ThresholdAgreement

NOT_MEASURED = "agreement with people: not measured (no reviewer labelled answers)"


def _interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "not computable (one class of labels)"
    return f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")


def _accuracy(at: ThresholdAgreement) -> str:
    return _interval(at.accuracy, at.accuracy_low, at.accuracy_high)


def validity_line(metric: str, validity: CalibrationValidity) -> str:
    """'text_matching / model_passes: AUC 0.875 [0.667, 1.000]; accuracy 0.714 [...] -> 0.857 [...] (in-sample);
    n 7 (3 acceptable); labels by Ana Lima' (``metric`` already escaped)."""
    refitted = " (in-sample)" if validity.refitted else ""
    names = ", ".join(validity.labelled_by) or "an unnamed reviewer"
    return (
        f"{metric}: AUC {_interval(validity.auc, validity.auc_low, validity.auc_high)}; "
        f"accuracy {_accuracy(validity.before)} -> {_accuracy(validity.after)}{refitted}; "
        f"n {validity.n} ({validity.acceptable} acceptable){_changed(validity)}; labels by {for_markdown_text(names)}"
    )


def _changed(validity: CalibrationValidity) -> str:
    if validity.changed is None:
        return ""
    if validity.changed == 0:
        return ", every label confirms the metric's verdict (no independent evidence)"
    return f", {validity.changed} changed from the metric's verdict"


def validity_facts(calibration: Calibration) -> list[str]:
    """One line per calibrated metric; metrics the reviewer left unlabelled are named as such."""
    if calibration.decided_by != "person":
        return [NOT_MEASURED]
    lines = []
    for item in calibration.metrics:
        metric = for_markdown_text(f"{item.evaluator_id} / {item.metric}")
        lines.append(f"{metric}: not labelled" if item.validity is None else validity_line(metric, item.validity))
    return lines
