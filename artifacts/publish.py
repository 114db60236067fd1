"""Writes an evaluation's outputs twice: plain files under ``--out`` for people, and immutable versions in
the artifact store for compliance (each run adds a version; nothing is overwritten)."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from artifacts.evaluation_results import results_document, summary_document
from assay.models import TestLab
from assay.models.artifacts import Producer
from assay.models.evaluation import EvaluationResult
from assay.storage.artifacts import ArtifactStore


def _write_json(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


def publish_evaluation(
    lab: TestLab,
    results: Sequence[EvaluationResult],
    *,
    out_dir: Path,
    artifact_store: ArtifactStore | None,
    evaluation_name: str,
    run_id: str,
    flow: str = "evaluate",
) -> dict[str, Any]:
    """Write test lab, per-evaluator results and summary; returns the summary document."""
    documents: dict[str, Any] = {"test_lab.json": lab.model_dump(mode="json")}
    for result in results:
        documents[f"{result.evaluator.id}/results.json"] = results_document(lab, result)
    summary = summary_document(lab, results, run_id=run_id)
    documents["summary.json"] = summary
    producer = Producer(flow=flow, run_id=run_id)
    for relative, document in documents.items():
        _write_json(out_dir / relative, document)
        if artifact_store is not None:
            artifact_store.put_json(
                f"evaluations/{evaluation_name}/{relative}",
                document,
                filename=Path(relative).name,
                producer=producer,
            )
    return summary
