"""The manual's ZIP archive of a run (seed 002 "Download a ZIP archive with evaluation results") and the
results as CSV, for people who post-process in a spreadsheet or archive a run as one file.

ZIP layout (root): ``interpretation.html``, ``interpretation.json`` and one directory per evaluator,
``explainer_assay_evaluators_<evaluator id>_<run id>/``, holding its scores per case (JSON and CSV), its
leaderboard (JSON and Markdown), its HTML fragment, its problems and insights, and ``result_descriptor.json``
listing what the directory holds."""

import csv
import io
import zipfile
from pathlib import Path
from typing import Any

from assay.artifacts.evaluation_results import LAB_FILE, with_context
from assay.artifacts.report.evaluation_sections import leaderboard_section
from assay.artifacts.report.interpretation import build_interpretation
from assay.artifacts.report.page import render
from assay.artifacts.report.run_documents import RunDocuments

from assay.atomic import write_atomic
from assay.jsonio import pretty_json

CSV_COLUMNS = [
    "evaluator",
    "metric",
    "model",
    "test_case_key",
    "question",
    "score",
    "threshold",
    "threshold_source",
    "verdict",
    "unscored_reason",
]
_VERDICTS = {"pass": "passed", "fail": "failed"}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
"""Entries carry a fixed timestamp so the same run always gives the same archive bytes."""


def _cell(text: Any) -> str:
    """A text cell a spreadsheet will not run: a leading formula character is quoted with an apostrophe
    (questions and reasons come from the run and are hostile input)."""
    value = "" if text is None else str(text)
    return "'" + value if value.startswith(_FORMULA_START) else value


def _csv_rows(interpretation: dict[str, Any], evaluator_id: str | None = None) -> list[list[Any]]:
    rows = []
    for case in interpretation["cases"]:
        for evaluation in case["evaluations"]:
            if evaluator_id is not None and evaluation["evaluator"] != evaluator_id:
                continue
            for metric in evaluation["metrics"]:
                rows.append(
                    [
                        evaluation["evaluator"],
                        metric["key"],
                        case["model_key"],
                        _cell(case["test_case_key"]),
                        _cell(case["question"]),
                        "" if metric["score"] is None else metric["score"],
                        "" if metric["threshold"] is None else metric["threshold"],
                        metric["threshold_source"] or "",
                        _VERDICTS.get(metric["verdict"], metric["verdict"]),
                        _cell(evaluation["unscored_reason"]) if metric["score"] is None else "",
                    ]
                )
    return rows


def interpretation_csv(interpretation: dict[str, Any], evaluator_id: str | None = None) -> str:
    """One row per case x model x metric; an unscored score is an empty cell with its reason, never 0."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(_csv_rows(interpretation, evaluator_id))
    return buffer.getvalue()


def results_csv(run: RunDocuments) -> str:
    """The run's results as CSV (see ``interpretation_csv``)."""
    return interpretation_csv(build_interpretation(run))


def evaluator_directory(evaluator_id: str, run_id: str | None) -> str:
    return f"explainer_assay_evaluators_{evaluator_id}_{run_id or 'unknown-run'}"


def _leaderboard_markdown(evaluator: dict[str, Any]) -> str:
    """A leaderboard table in Markdown, for runs whose published documents lack ``leaderboard.md``."""
    metrics = evaluator["metrics"]
    lines = [
        f"# Leaderboard: {evaluator['id']}",
        "",
        "| rank | model | " + " | ".join(m["key"] for m in metrics) + " | scored | unscored |",
        "|---|---|" + "---|" * (len(metrics) + 2),
    ]
    primary = evaluator["primary_metric"]
    for row in evaluator["leaderboard"]:
        means = [(row["metrics"].get(m["key"]) or {}).get("mean") for m in metrics]
        counts = row["metrics"].get(primary) or {}
        cells = ["unscored" if mean is None else f"{mean:.3f}" for mean in means]
        name = row["model_name"].replace("|", "\\|")
        counted = f"{counts.get('scored', 0)} | {counts.get('unscored', 0)}"
        lines.append(f"| {row['rank']} | {name} | {' | '.join(cells)} | {counted} |")
    return "\n".join(lines) + "\n"


def _full_results(evaluation: RunDocuments, evaluator_id: str) -> dict[str, Any] | None:
    results = evaluation.get(f"{evaluator_id}/results.json")
    return None if results is None else with_context(results, evaluation.get(LAB_FILE) or {})


def _evaluator_files(
    evaluation: RunDocuments, evaluator: dict[str, Any], interpretation: dict[str, Any]
) -> dict[str, str]:
    """Relative path inside the evaluator's directory -> text content."""
    evaluator_id = evaluator["id"]
    board = evaluation.get(f"{evaluator_id}/leaderboard.json") or {
        "evaluator": evaluator_id,
        "primary_metric": evaluator["primary_metric"],
        "metrics": evaluator["metrics"],
        "table": evaluator["leaderboard"],
    }
    section = leaderboard_section(evaluator, interpretation["cases"])
    files = {
        # seed 002's full rows: the export stands alone, so each row's context is put back from the lab
        "global_llm_eval_results/application_json/explanation.json": _json(_full_results(evaluation, evaluator_id)),
        "global_llm_eval_results/text_csv/explanation.csv": interpretation_csv(interpretation, evaluator_id),
        "global_llm_heatmap_leaderboard/application_json/explanation.json": _json(board),
        "global_llm_heatmap_leaderboard/text_markdown/explanation.md": evaluation.get(f"{evaluator_id}/leaderboard.md")
        or _leaderboard_markdown(evaluator),
        "global_html_fragment/text_html/explanation.html": render(
            "evaluation/fragment.html.j2", section=section, evaluator=evaluator
        ),
        "insights/insights_and_actions.json": _json({"schema_version": 1, "insights": evaluator["insights"]}),
        "problems/problems_and_actions.json": _json({"schema_version": 1, "problems": evaluator["problems"]}),
    }
    descriptor = {
        "schema_version": 1,
        "evaluator": evaluator_id,
        "display_name": evaluator["display_name"],
        "run_id": interpretation["overview"]["run_id"],
        "created": interpretation["overview"]["created"],
        "metrics": [metric["key"] for metric in evaluator["metrics"]],
        "primary_metric": evaluator["primary_metric"],
        "files": sorted(files),
    }
    files["result_descriptor.json"] = _json(descriptor)
    return files


def _json(document: Any) -> str:
    return pretty_json(document, default=str)


def write_zip(run: RunDocuments, html: str, interpretation: dict[str, Any], path: Path) -> Path:
    """The run's archive in the manual's layout, written atomically (a half-written ZIP never appears)."""
    evaluation = run.evaluation()
    entries: dict[str, str] = {"interpretation.html": html, "interpretation.json": _json(interpretation)}
    for evaluator in interpretation["evaluators"]:
        directory = evaluator_directory(evaluator["id"], interpretation["overview"]["run_id"])
        for relative, text in _evaluator_files(evaluation, evaluator, interpretation).items():
            entries[f"{directory}/{relative}"] = text
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in entries.items():
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text.encode("utf-8"))
    write_atomic(path, buffer.getvalue())
    return path
