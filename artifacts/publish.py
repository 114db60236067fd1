"""Writes an evaluation's outputs twice: plain files under ``--out`` for people, and immutable versions in
the artifact store for compliance (each run adds a version; nothing is overwritten). Publishing is
idempotent per run: a run resumed after a kill republishes the same documents under the same run id, and
the store hands back the versions that run already wrote instead of adding duplicates."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.artifacts.evaluation_results import results_document, summary_document
from assay.artifacts.findings import find_insights, find_problems, leaderboard, leaderboard_markdown
from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import RunDocuments

from assay.atomic import write_atomic
from assay.jsonio import pretty_json
from assay.models import TestLab
from assay.models.artifacts import Producer
from assay.models.evaluation import EvaluationResult
from assay.models.findings import Findings
from assay.redaction import redact_data
from assay.storage.artifacts import ArtifactStore
from assay.storage.runs import RUN_FILE

_TEXT_TYPES = {".md": "text/markdown", ".html": "text/html"}


def _write_json(path: Path, document: Any) -> Path:
    write_atomic(path, pretty_json(document))
    return path


def publish_documents(
    documents: dict[str, Any],
    *,
    out_dir: Path,
    artifact_store: ArtifactStore | None,
    prefix: str,
    producer: Producer,
) -> list[str]:
    """Write each document (JSON-ready data, or text for .md/.txt names) under ``out_dir`` and as a new
    version of ``<prefix>/<relative name>`` in the artifact store (none when this ``producer.run_id`` already
    published the same content there last); returns the artifact names."""
    names = []
    # Secrets are redacted where they enter (host errors, logs); this is the last net before anything is written.
    for relative, document in redact_data(documents).items():
        path = out_dir / relative
        is_text = isinstance(document, str)
        if is_text:
            write_atomic(path, document)
        else:
            _write_json(path, document)
        name = f"{prefix}/{relative}"
        names.append(name)
        if artifact_store is None:
            continue
        if is_text:
            content_type = _TEXT_TYPES.get(Path(relative).suffix, "text/plain")
            artifact_store.put(
                name, document.encode(), filename=path.name, content_type=content_type, producer=producer
            )
        else:
            artifact_store.put_json(name, document, filename=path.name, producer=producer)
    return names


def publish_evaluation(
    lab: TestLab,
    results: Sequence[EvaluationResult],
    *,
    out_dir: Path,
    artifact_store: ArtifactStore | None,
    evaluation_name: str,
    run_id: str,
    skipped: dict[str, str] | None = None,
    flow: str = "evaluate",
) -> dict[str, Any]:
    """Write the test lab, per-evaluator results and leaderboards, problems, insights and the summary;
    returns the summary document."""
    documents: dict[str, Any] = {"test_lab.json": lab.model_dump(mode="json")}
    for result in results:
        documents[f"{result.evaluator.id}/results.json"] = results_document(lab, result)
        board = leaderboard(lab, result)
        documents[f"{result.evaluator.id}/leaderboard.json"] = board
        documents[f"{result.evaluator.id}/leaderboard.md"] = leaderboard_markdown(board)
    problems = find_problems(lab, results)
    insights = find_insights(lab, results)
    documents["problems/problems_and_actions.json"] = Findings(problems=problems).model_dump(
        mode="json", include={"schema_version", "problems"}
    )
    documents["insights/insights_and_actions.json"] = Findings(insights=insights).model_dump(
        mode="json", include={"schema_version", "insights"}
    )
    summary = summary_document(lab, results, run_id=run_id)
    summary["skipped_evaluators"] = skipped or {}
    summary["problems"] = {
        severity: sum(problem.severity == severity for problem in problems) for severity in ("high", "medium", "low")
    }
    summary["insights"] = len(insights)
    documents["summary.json"] = summary
    # run.json (written when the run started) gives the report its creation time; it is not republished
    run_file = out_dir / RUN_FILE
    known = {RUN_FILE: json.loads(run_file.read_text(encoding="utf-8"))} if run_file.is_file() else {}
    html, interpretation = render_report(RunDocuments(source=str(out_dir), documents={**documents, **known}))
    documents["interpretation.json"] = interpretation
    documents["interpretation.html"] = html
    publish_documents(
        documents,
        out_dir=out_dir,
        artifact_store=artifact_store,
        prefix=f"evaluations/{evaluation_name}",
        producer=Producer(flow=flow, run_id=run_id),
    )
    return summary
