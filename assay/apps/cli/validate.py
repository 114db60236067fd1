"""``assay evaluators validate``: how well each evaluator's scores agree with answers people labelled, next to
one-line baselines. Heavy imports (evaluators, numpy, the report) happen inside the command, never at CLI start."""

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from assay.apps.cli import inputs
from assay.apps.cli.common import console, user_errors
from assay.escaping import for_terminal

if TYPE_CHECKING:
    from assay.models.thresholds import ThresholdBook
    from assay.models.validity import MetricValidity, ValidityReport
    from assay.validity.run import Validation

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
FILES = ("validity.json", "validity.html", "rows.jsonl")


def validate(
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            help="Labelled answers: .jsonl/.json/.csv (question, context, answer, label 1/0 [, id, expected_answer, "
            "group]), a test lab whose test cases carry a 'label:1'/'label:0' category, or the MRM calibration "
            "labels (a run's export folder, its calibration/labels.json, or an approvals file).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for validity.json, validity.html and rows.jsonl.")],
    evaluators: Annotated[
        str, typer.Option(help="Comma-separated evaluator ids, or 'all' (every one whose inputs the answers have).")
    ] = "all",
    judge: Annotated[
        Path | None,
        typer.Option(help="LLM judge endpoint file (.json or .toml); default: ASSAY_JUDGE__* settings, if any."),
    ] = None,
    lab: Annotated[
        Path | None,
        typer.Option(help="The test lab that calibration labels refer to (default: the run export's own)."),
    ] = None,
    thresholds: Annotated[
        Path | None,
        typer.Option(help="A threshold book (an MRM run's calibration/thresholds.json): the thresholds in force."),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param", help="Evaluator parameter EVALUATOR.PARAMETER=VALUE, e.g. groundedness.metric_threshold=0.6."
        ),
    ] = None,
    evaluators_config: Annotated[
        Path | None,
        typer.Option("--evaluators-config", help="Evaluator parameters as JSON or TOML; --param overrides it."),
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="Name in the artifact store: validity/NAME/ (default: the labels file's name).")
    ] = None,
) -> None:
    """Validate evaluators against your own labelled answers: per evaluator metric ROC-AUC with a 95% bootstrap
    interval, accuracy/precision/recall/F1 at the threshold in force and at the best threshold, per group, beside
    one-line baselines (token overlap, answer length, MiniLM cosine).

    Exit codes: 0 validated; 1 unexpected error; 2 bad input (the file, line and field are named)."""
    with user_errors():
        labels_path = labels if labels.is_dir() else inputs.input_file(labels, "--labels")
        evaluator_ids = inputs.evaluator_ids(evaluators)
        parameters = inputs.evaluator_parameters(evaluators_config, param or [], evaluator_ids)
        inputs.output_folder(out)
        judge_endpoint = inputs.judge_file(judge) if judge is not None else None
        book = _threshold_book(inputs.input_file(thresholds, "--thresholds")) if thresholds is not None else None
        from assay.validity.labels import load_labelled_set

        labelled = load_labelled_set(labels_path, lab=inputs.input_file(lab, "--lab") if lab is not None else None)
        validation = _validate(labelled, evaluator_ids, parameters, judge_endpoint, book, str(thresholds))
        stored = _publish(validation, out, _UNSAFE.sub("-", name or labelled.path.stem).strip("-.") or "labels")
    print_table(validation.report)
    for evaluator_id, reason in validation.report.unavailable.items():
        console.print(f"[yellow]not scored[/] {for_terminal(evaluator_id)}: {for_terminal(reason)}", highlight=False)
    folder = for_terminal(out)
    console.print(f"validity: {folder}/validity.json, {folder}/validity.html, {folder}/rows.jsonl", highlight=False)
    console.print(f"stored: {for_terminal(stored)} (assay artifacts list validity/)", highlight=False, soft_wrap=True)


def _threshold_book(path: Path) -> "ThresholdBook":
    from assay.formats.errors import load_json, validate
    from assay.models.thresholds import ThresholdBook

    return validate(ThresholdBook, load_json(path), path)


def _validate(
    labelled: Any,
    evaluator_ids: list[str],
    parameters: dict[str, dict[str, Any]],
    judge: dict[str, Any] | None,
    book: "ThresholdBook | None",
    book_name: str,
) -> "Validation":
    from assay.config import load_settings
    from assay.evaluators.run_services import run_services
    from assay.validity.run import validate_labelled_set

    endpoint = judge if judge is not None else load_settings().judge.model_dump(mode="json")
    configured = endpoint if endpoint.get("base_url") and endpoint.get("model") else None
    services = run_services(configured, None)
    return validate_labelled_set(
        labelled, evaluator_ids, services, parameters=parameters, thresholds=book, thresholds_name=book_name
    )


def _publish(validation: "Validation", out: Path, name: str) -> str:
    """The three files under ``out`` and as new versions of ``validity/<name>/...`` in the artifact store."""
    import json
    import uuid

    from assay.artifacts.publish import publish_documents
    from assay.artifacts.validity_report import validity_html
    from assay.config import load_settings
    from assay.models.artifacts import Producer
    from assay.storage.factory import open_artifact_store

    documents = {
        "validity.json": validation.report.model_dump(mode="json"),
        "validity.html": validity_html(validation.report),
        "rows.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in validation.rows),
    }
    store = open_artifact_store(load_settings())
    producer = Producer(flow="evaluators-validate", run_id=f"validate-{uuid.uuid4().hex[:12]}")
    prefix = f"validity/{name}"
    publish_documents(documents, out_dir=out, artifact_store=store, prefix=prefix, producer=producer)
    versions = {manifest.name: manifest.version for manifest in store.list(f"{prefix}/")}
    listed = ", ".join(f"{file} v{versions.get(f'{prefix}/{file}', '?')}" for file in FILES)
    return f"{store.describe()}: {prefix}/ ({listed})"


def _auc(figure: "MetricValidity") -> str:
    if figure.auc is None:
        return "n/a (one label)"
    return f"{figure.auc:.3f} [{figure.auc_low:.3f}, {figure.auc_high:.3f}]"


def _accuracy(figure: "MetricValidity") -> str:
    if figure.at_threshold is None:
        return "-"
    return f"{figure.at_threshold.accuracy:.3f} at {figure.threshold.value:g} ({figure.threshold.source})"


def print_table(report: "ValidityReport") -> None:
    """One row per evaluator metric, then per baseline; unscored rows counted, never zero."""
    source = for_terminal(Path(report.labels_file).name)
    title = f"{report.rows} labelled answers ({report.acceptable} acceptable) in {source}"
    table = Table(title=title)
    table.add_column("score", overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("unscored", justify="right")
    table.add_column("AUC [95% interval]", no_wrap=True)
    table.add_column("accuracy at threshold", no_wrap=True)
    rows = [(f"{owner}.{key}", item) for owner, metrics in report.evaluators.items() for key, item in metrics.items()]
    rows += [(f"baseline: {name}", item) for name, metrics in report.baselines.items() for item in metrics.values()]
    for label, figure in rows:
        unscored = f"[yellow]{figure.n_unscored}[/]" if figure.n_unscored else "0"
        table.add_row(for_terminal(label), str(figure.n), unscored, _auc(figure), _accuracy(figure))
    console.print(table)
