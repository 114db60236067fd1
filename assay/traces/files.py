"""A trace import written to disk: the lab, and its import report beside it (``<lab>.import.json``), as both
``assay traces import`` and the production re-validation flow write them.

A source is a file, a folder, or ``s3://BUCKET/PREFIX``: the ``.json``/``.jsonl`` objects under the prefix on
the S3 server of Assay's store settings (``ASSAY_STORE__ENDPOINT`` and its credentials), downloaded into a
temporary folder for the import and removed afterwards. The bucket must exist: reading never creates one.
"""

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from assay.atomic import write_all_atomic
from assay.config import Settings, load_settings
from assay.formats.errors import MAX_INPUT_BYTES
from assay.formats.native import native_text
from assay.traces.importer import TRACE_SUFFIXES, ImportOptions, import_traces, trace_files
from assay.traces.report import TraceImportReport

S3_SCHEME = "s3://"


def report_path(lab: Path) -> Path:
    return lab.with_name(f"{lab.stem}.import.json")


def import_to_file(sources: Sequence[str | Path], options: ImportOptions, out: Path) -> TraceImportReport:
    """Import the trace files, folders and S3 prefixes ``sources`` into the lab ``out``; the report is written
    beside it. The settings are loaded first, whatever the sources: loading registers their credentials (the
    store's keys, the judge's API key) for redaction, and a trace that echoes one must not carry it into the lab."""
    settings = load_settings()
    with local_sources(sources, settings) as paths:
        lab, report = import_traces(trace_files(paths), options)
    # Both files or neither: a kill while writing keeps the previous lab and its own report.
    write_all_atomic([(out, native_text(lab)), (report_path(out), report.model_dump_json(indent=2))])
    return report


@contextmanager
def local_sources(sources: Sequence[str | Path], settings: Settings | None = None) -> Iterator[list[Path]]:
    """The sources as local paths; S3 prefixes downloaded into a temporary folder for as long as this lasts."""
    with tempfile.TemporaryDirectory(prefix="assay-traces-") as scratch:
        paths = []
        for source in sources:
            text = str(source)
            if text.startswith(S3_SCHEME):
                paths.append(_download(text, settings or load_settings(), Path(scratch)))
            else:
                paths.append(Path(source))
        yield paths


def _download(url: str, settings: Settings, scratch: Path) -> Path:
    from assay.storage.s3 import S3ObjectStore  # minio costs a local run 0.2 s of imports

    bucket, _, prefix = url.removeprefix(S3_SCHEME).partition("/")
    if not bucket:
        raise ValueError(f"{url}: expected s3://BUCKET/PREFIX")
    store = settings.store
    if not store.endpoint:
        raise ValueError(
            f"{url}: reading traces from S3 needs the server: set ASSAY_STORE__ENDPOINT (and "
            "ASSAY_STORE__ACCESS_KEY / ASSAY_STORE__SECRET_KEY) to the S3 endpoint holding the traces"
        )
    objects = S3ObjectStore(
        store.endpoint,
        bucket,
        store.access_key.get_secret_value() if store.access_key else None,
        store.secret_key.get_secret_value() if store.secret_key else None,
        secure=store.secure,
        region=store.region,
        prefix=prefix.strip("/"),
        create_bucket=False,
    )
    folder = scratch / bucket / prefix.strip("/")
    folder.mkdir(parents=True, exist_ok=True)
    keys = [key for key in objects.list() if key.lower().endswith(TRACE_SUFFIXES)]
    if not keys:
        raise ValueError(f"{url}: no .json or .jsonl object under this prefix")
    for key in keys:
        target = folder / key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(objects.get(key, max_bytes=MAX_INPUT_BYTES))
    return folder
