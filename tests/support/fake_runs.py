"""Small run exports built in memory, in the layout ``assay evaluate`` writes (for gates and comparisons)."""

import json
from pathlib import Path
from typing import Any

from assay.artifacts.report.run_documents import RunDocuments

Scores = dict[str, float | None]


def fake_run(
    run_id: str,
    scores: dict[str, Scores],
    *,
    evaluator: str = "groundedness",
    metric: str = "groundedness",
    threshold: float | None = 0.75,
    higher_is_better: bool = True,
    problems: list[dict[str, Any]] | None = None,
    questions: dict[str, str] | None = None,
) -> RunDocuments:
    """``scores``: model key -> test case key -> value (None: unscored) of one evaluator's primary metric."""
    rows = [
        {"test_case_key": case, "key": case, "model_key": model, "input": (questions or {}).get(case, f"q {case}"),
         metric: value, "unscored_reason": None if value is not None else "no context"}
        for model, cases in scores.items()
        for case, value in cases.items()
    ]  # fmt: skip
    meta = {"key": metric, "higher_is_better": higher_is_better, "threshold": threshold, "is_primary": True}
    results = {"results": rows, "evaluator": {"id": evaluator, "metrics_meta": [meta], "parameters": []}}
    summary = {
        "run_id": run_id,
        "models": [{"key": model, "name": model} for model in scores],
        "evaluators": [evaluator],
        "metrics": {model: {evaluator: {metric: {**meta, "mean": None, "scored": 0, "unscored": 0, "passed": 0}}}
                    for model in scores},
    }  # fmt: skip
    documents = {
        "summary.json": summary,
        f"{evaluator}/results.json": results,
        "problems/problems_and_actions.json": {"problems": problems or []},
    }
    return RunDocuments(source=f"memory:{run_id}", documents=documents)


def problem(severity: str, *, evaluator: str = "groundedness", model: str = "rag", case: str = "") -> dict[str, Any]:
    attributes = {"evaluator": evaluator, "model_key": model, "metric": "groundedness"}
    if case:
        attributes["test_case_key"] = case
    return {"description": f"{severity} problem", "severity": severity, "problem_type": "accuracy",
            "problem_code": "AVID / P0204 / Accuracy", "attributes": attributes, "actions": []}  # fmt: skip


def write_run(run: RunDocuments, folder: Path) -> Path:
    """The run as an export folder, for commands that read run folders (``assay compare``)."""
    for name, document in run.documents.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document) if name.endswith(".json") else str(document), encoding="utf-8")
    return folder
