"""Reports in the Prefect UI: a run's HTML report rendered from its export, and the run's Artifacts tab
summarising it (and saying where the file is, and the ``assay artifacts get`` command that fetches it)."""

import json
from pathlib import Path
from typing import Any

from assay.artifacts.publish import publish_documents
from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import read_folder
from assay.artifacts.report.summary_markdown import report_summary_markdown
from assay.tasks.control_room import prefect_key
from assay.tasks.timing import library_time
from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from assay.config import load_settings
from assay.escaping import for_markdown_text
from assay.models.artifacts import Producer
from assay.storage.factory import open_artifact_store

REPORT_FILE = "interpretation.html"


@task(name="render-report", cache_policy=NO_CACHE, persist_result=False)
def render_run_report(out_dir: str, prefix: str, run_id: str, flow: str) -> str:
    """Render the run's report from what it exported (every step's documents) and publish the HTML and
    ``interpretation.json`` beside them; returns the HTML's path."""
    with library_time():
        html, interpretation = render_report(read_folder(Path(out_dir)))
        publish_documents(
            {REPORT_FILE: html, "interpretation.json": interpretation},
            out_dir=Path(out_dir),
            artifact_store=open_artifact_store(load_settings()),
            prefix=prefix,
            producer=Producer(flow=flow, run_id=run_id),
        )
    return str(Path(out_dir) / REPORT_FILE)


@task(name="link-report", cache_policy=NO_CACHE, persist_result=False)
def link_report(title: str, report_path: str, store_name: str, run_id: str) -> None:
    """The report's summary as a Markdown artifact in the run's Artifacts tab: the problems by severity, the
    primary metrics that fail most, then where the HTML is and the command that fetches the stored, verified
    copy. No link: a browser refuses a file:// link from the Prefect UI, and a dead link reads as a bug."""
    path = Path(report_path).resolve()
    with library_time():
        interpretation = _interpretation(path.with_name("interpretation.json"))
    create_markdown_artifact(
        markdown=report_summary_markdown(title, run_id, str(path), store_name, interpretation),
        key=prefect_key("report", title, "where"),
        description=f"The report of run {for_markdown_text(run_id)}: its summary and where the HTML is",
        _sync=True,
    )


def _interpretation(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # the summary is a courtesy: the note still says where the report is
        return {}
