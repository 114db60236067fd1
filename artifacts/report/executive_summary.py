"""The first screen of an MRM report: what a model-risk committee needs before any chart. The overall verdict,
each step's outcome, every decision with who took it (a named person and where, or the step's policy), the
top risks in words and whether the evaluators' own validity is known. Built from the interpretation only, so
it agrees with the sections it summarises; each line links to the section that holds the detail."""

from typing import Any

from assay.artifacts.report.evaluation_sections import semaphore
from assay.artifacts.report.mrm_steps import NOT_RUN
from assay.artifacts.report.page import run_status

TOP_RISKS = 5
_VERDICTS = {
    "high": "Not fit for use as tested: {high} high-severity problem(s).",
    "medium": "Fit with conditions: {medium} medium-severity problem(s) to review before use.",
    "low": "No high- or medium-severity problem found.",
}


def executive_summary(interpretation: dict[str, Any]) -> dict[str, Any]:
    """Verdict, steps, decisions, top risks and evaluator validity of an MRM run, as plain data."""
    mrm = interpretation["mrm"]
    overview = mrm["overview"]
    counts = interpretation["problem_counts"]
    light = semaphore(counts)
    steps = [
        {"title": step["title"], "status": step["status"], "outcome": _outcome(step["counts"])}
        for step in overview["steps"]
    ]
    unfinished = [step["title"] for step in steps if step["status"] == NOT_RUN]
    return {
        "light": light,
        "verdict": _VERDICTS[light].format(**counts),
        "status": run_status(overview.get("status")),
        "finished_at": overview.get("finished_at") or "",
        "unfinished": unfinished,
        "steps": steps,
        "decisions": overview["decisions"],
        "people": sorted({d["reviewer"] for d in overview["decisions"] if d["decided_by"] == "person"}),
        "risks": _risks(interpretation),
        "uninformative": [
            f"{line['text']} ({line['note']})" for line in interpretation.get("headline", []) if line.get("note")
        ],
        "validity": _validity(mrm["validity"]),
    }


def _outcome(counts: dict[str, Any]) -> str:
    """A step's counts in a few words ("chunks 129, topics 21"); lists and maps by their length."""
    shown = []
    for key, value in counts.items():
        if isinstance(value, list | dict):
            value = len(value)
        elif isinstance(value, float):
            value = f"{value:.2f}"
        shown.append(f"{key.replace('_', ' ')} {value}")
    return ", ".join(shown)


def _risks(interpretation: dict[str, Any]) -> list[dict[str, str]]:
    """The worst primary metrics, the weakest group of the worst one, and how often a small change in the
    question flipped a verdict; each with the section that explains it."""
    risks = [
        {"text": line["text"], "where": f"#leaderboard-{line['evaluator']}"}
        for line in interpretation.get("headline", [])
        if line["failing"] and line.get("informative", True)
    ][:TOP_RISKS]
    mrm = interpretation["mrm"]
    weakest = next((m["weakest"][0] for m in mrm["weaknesses"].get("metrics", []) if m.get("weakest")), None)
    if weakest:
        risks.append({"text": f"weakest group: {weakest}", "where": "#mrm-weaknesses"})
    variations = mrm["robustness"].get("input_variations") or {}
    if variations.get("available") and variations.get("cases"):
        flips, cases = variations["flips"], variations["cases"]
        text = f"input variations flipped {flips} of {cases} verdicts ({flips / cases:.0%})"
        risks.append({"text": text, "where": "#mrm-robustness-variations"})
    return risks


def _validity(validity: dict[str, Any]) -> dict[str, Any]:
    """Whether people measured the evaluators in this run, and how many have published validity figures."""
    reviewer = validity.get("reviewer") or {}
    published = (validity.get("published") or {}).get("evaluators") or []
    return {
        "statement": reviewer.get("statement") or reviewer.get("message") or "",
        "measured_here": len(reviewer.get("metrics") or []),
        "published": sum(bool(evaluator.get("figures")) for evaluator in published),
        "evaluators": len(published),
    }
