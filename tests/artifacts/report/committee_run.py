"""An MRM run as a committee's report is rendered from it: the MRM steps' documents of ``mrm_export`` with a
real automated evaluation (``report_lab``) in its automated-evaluation/ folder."""

from pathlib import Path
from typing import Any

from assay.artifacts.report.run_documents import MRM_EVALUATION, RunDocuments, read_folder

from tests.artifacts.report.mrm_export import mrm_export
from tests.artifacts.report.report_lab import build_run


def committee_run(folder: Path, *, status: str = "complete", reviewed: bool = True) -> RunDocuments:
    documents: dict[str, Any] = {
        name: document
        for name, document in mrm_export(reviewed=reviewed).items()
        if not name.startswith(f"{MRM_EVALUATION}/")
    }
    evaluation = read_folder(build_run(folder / MRM_EVALUATION))
    documents |= {f"{MRM_EVALUATION}/{name}": document for name, document in evaluation.documents.items()}
    documents["run.json"] = {**documents["run.json"], "status": status}
    if status == "complete":
        documents["run.json"]["finished_at"] = "2026-11-23T09:30:00Z"
    return RunDocuments(source=str(folder), documents=documents)
