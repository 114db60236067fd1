"""The report's headline: per evaluator, how many case x model rows its primary metric failed, against which
threshold. "242 of 242 rows failing any threshold" told a committee nothing (one strict secondary metric fails
every row); "groundedness: 12 of 242 below 0.50" says what failed and by how much. Pure, from the
interpretation's evaluators and case rows."""

import re
from typing import Any

from assay.artifacts.report.page import format_number

_WORD = re.compile(r"[a-z]+")
UNINFORMATIVE_SHARE = 0.95
"""A metric giving the same verdict on more than this share of its scored rows says nothing about which answers
are good on this suite (a reference n-gram metric against generated expected answers fails nearly all): it is
reported as not informative, never as a top risk."""


def informative(failing: int, scored: int) -> bool:
    return scored > 0 and max(failing, scored - failing) / scored <= UNINFORMATIVE_SHARE


def primary_metric_headline(evaluators: list[dict[str, Any]], cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per evaluator with a primary metric: failing, scored and unscored rows, worst share first."""
    lines = []
    for evaluator in evaluators:
        metric = next((m for m in evaluator["metrics"] if m["primary"]), None)
        if metric is None:
            continue
        verdicts = [
            found["verdict"]
            for case in cases
            for evaluation in case["evaluations"]
            if evaluation["evaluator"] == evaluator["id"]
            for found in evaluation["metrics"]
            if found["key"] == metric["key"]
        ]
        failing = verdicts.count("fail")
        scored = sum(verdict in ("pass", "fail") for verdict in verdicts)
        telling = informative(failing, scored) and metric.get("in_verdict", True)
        same = "fails" if failing * 2 > scored else "passes"
        share = max(failing, scored - failing) / scored if scored else 0.0
        note = "" if telling or not scored else f"not informative on this suite: {same} {share:.0%} of rows"
        if not metric.get("in_verdict", True):
            note = "marked not meaningful for this system by the reviewer: left out of the verdict"
        lines.append(
            {
                "evaluator": evaluator["id"],
                "metric": metric["key"],
                "display_name": metric["display_name"],
                "threshold": metric["threshold"],
                "higher_is_better": metric["higher_is_better"],
                "failing": failing,
                "scored": scored,
                "unscored": verdicts.count("unscored"),
                "text": headline_text(_named(evaluator, metric), failing, scored),
                "informative": telling,
                "note": note,
            }
        )
    lines.sort(key=_worst_informative_first)
    return lines


def _worst_informative_first(line: dict[str, Any]) -> tuple[bool, float, str]:
    failing_share = line["failing"] / line["scored"] if line["scored"] else -1.0
    return (not line["informative"], -failing_share, line["evaluator"])


def headline_text(metric: dict[str, Any], failing: int, scored: int) -> str:
    """Like "groundedness: 12 of 242 below 0.50"; "no threshold" or "nothing scored" when that is so."""
    name = metric["display_name"]
    if metric["threshold"] is None:
        return f"{name}: no threshold"
    if not scored:
        return f"{name}: nothing scored"
    side = "below" if metric["higher_is_better"] else "above"
    threshold = float(metric["threshold"])
    shown = format_number(threshold, 2) if abs(threshold) < 100 else f"{threshold:g}"
    return f"{name}: {failing} of {scored} {side} {shown}"


def _named(evaluator: dict[str, Any], metric: dict[str, Any]) -> dict[str, Any]:
    """A metric whose name does not say its evaluator ("Model passes" of text matching, "Edits" of step
    alignment) is named with it, so the headline says which check failed."""
    if set(_WORD.findall(metric["display_name"].lower())) & set(_WORD.findall(evaluator["display_name"].lower())):
        return metric
    return {**metric, "display_name": f"{evaluator['display_name']} {metric['display_name'].lower()}"}
