"""Tasks of the production re-validation flow: a sample of the newest production traces imported as a lab,
with the import report in the run's Artifacts tab."""

from datetime import UTC, datetime, timedelta
from typing import Any

from assay.tasks.control_room import prefect_key
from assay.tasks.timing import library_time
from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from assay.config import load_settings
from assay.traces import ImportOptions, SampleSize
from assay.traces.files import import_to_file
from assay.traces.report import report_markdown
from assay.traces.sampling import StratumKey


@task(name="import-production-traces", cache_policy=NO_CACHE, persist_result=False)
def import_production_traces(
    name: str,
    traces: str,
    format: str,
    lookback_days: float | None,
    sample: str | None,
    seed: int,
    stratify_by: StratumKey,
    mask_pii: bool,
) -> dict[str, Any]:
    """The traces of the last ``lookback_days`` under ``traces`` (a file, folder or s3://BUCKET/PREFIX), sampled
    and masked, as a lab under ``<assay home>/production/<name>/<UTC time>/lab.json``; fails when no request is
    left to evaluate."""
    with library_time():
        now = datetime.now(UTC)
        options = ImportOptions(
            format=format,
            name=f"{name} {now:%Y-%m-%d}",
            sample=SampleSize.parse(sample) if sample else None,
            seed=seed,
            since=now - timedelta(days=lookback_days) if lookback_days else None,
            stratify_by=stratify_by,
            mask_pii=mask_pii,
        )
        lab = load_settings().home / "production" / name / f"{now:%Y%m%dT%H%M%SZ}" / "lab.json"
        report = import_to_file([traces], options, lab)
    create_markdown_artifact(
        markdown=report_markdown(report),
        key=prefect_key("traces", name),
        description=f"{name}: {report.cases} production requests imported",
        _sync=True,
    )
    if not report.cases:
        raise ValueError(
            f"no production request to re-validate under {traces} since {options.since:%Y-%m-%d %H:%M} UTC "
            f"({report.traces} traces read; the import report lists what was left out and why)"
            if options.since else f"no production request to re-validate under {traces}"
        )
    return {"lab": str(lab), "cases": report.cases, "traces": report.traces}
