"""Reports in the Prefect UI: a run's HTML report rendered from its export, and the run's Artifacts tab
linking it (where the file is, and the ``assay artifacts get`` command that fetches it from the store)."""

from pathlib import Path

from assay.artifacts.publish import publish_documents
from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import read_folder
from assay.tasks.control_room import prefect_key
from assay.tasks.timing import library_time
from prefect import task
from prefect.artifacts import create_link_artifact, create_markdown_artifact
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
    """A link and a Markdown note in the run's Artifacts tab. Browsers do not open file:// links from a web
    page, so the note also gives the path and the command that fetches the stored, verified copy."""
    path = Path(report_path).resolve()
    create_link_artifact(link=path.as_uri(), link_text=f"{title} (HTML)", key=prefect_key("report", title), _sync=True)
    create_markdown_artifact(
        markdown=(
            f"# {for_markdown_text(title)}\n\n"
            f"- Run: `{for_markdown_text(run_id)}`\n"
            f"- Report (self-contained HTML, opens offline): `{for_markdown_text(str(path))}`\n"
            f"- From the artifact store, hash-checked: `assay artifacts get {for_markdown_text(store_name)} "
            f"--out report.html`\n"
        ),
        key=prefect_key("report", title, "where"),
        description=f"Where the HTML report of run {for_markdown_text(run_id)} is",
        _sync=True,
    )
