"""The published validity of each evaluator: how its scores agreed with human labels on public benchmark sets,
as measured by ``bench/validity.py`` and shipped as package data (``assay/data/validity/measured.json``).

Reports and ``guardrails.json`` quote these figures next to a threshold so a reader can tell a measured
metric from one nobody checked against people. An evaluator or metric the file does not name, or a missing
file, has no published figure (``[]``): "not measured" is said by the caller, never papered over. A file that
is there but malformed is an error naming the file and the field, since quoting a wrong figure is worse than
quoting none."""

import json
from datetime import date
from functools import cache
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from assay.models.base import DomainModel

MEASURED_FILE = Path(__file__).resolve().parents[1] / "data" / "validity" / "measured.json"
MEASURED_SCHEMA_VERSION = 1


class PublishedFigure(DomainModel):
    """One measurement of one metric on one labelled set (an entry of ``measured.json``)."""

    set: str = Field(min_length=1, description="The labelled set's id, e.g. 'begin_dev_wow'.")
    source: str = Field(min_length=1, description="Where the set and its human labels come from (to credit).")
    licence: str = Field(min_length=1, description="The set's licence, e.g. 'CC BY 4.0'.")
    split: str = Field(min_length=1, description="Which part of the set was scored, e.g. 'held-out'.")
    n: int = Field(ge=1, description="Labelled items scored.")
    auc: float = Field(ge=0, le=1, description="ROC-AUC of the score against the human labels.")
    auc_low: float = Field(ge=0, le=1, description="Low end of the AUC's 95% bootstrap interval.")
    auc_high: float = Field(ge=0, le=1, description="High end of the AUC's 95% bootstrap interval.")
    best_baseline: str | None = Field(default=None, description="The strongest simple baseline on the same items.")
    best_baseline_auc: float | None = Field(default=None, ge=0, le=1, description="That baseline's ROC-AUC.")
    leave_one_dataset_out_auc: float | None = Field(
        default=None, ge=0, le=1, description="ROC-AUC of the model refitted without this set (out-of-set figure)."
    )
    pass_rate_supported: float | None = Field(
        default=None, ge=0, le=1, description="Share of answers labelled supported that pass at the default threshold."
    )
    fail_rate_unsupported: float | None = Field(
        default=None, ge=0, le=1, description="Share of answers labelled unsupported failing at the default threshold."
    )
    unscored: int = Field(default=0, ge=0, description="Labelled items the evaluator left unscored (e.g. no claim).")
    measured_by: str = Field(default="", description="The script that measured it (the file's measured_by).")
    measured_on: str = Field(default="", description="When, YYYY-MM-DD (the file's measured_on).")

    @model_validator(mode="after")
    def _interval_holds_the_estimate(self) -> "PublishedFigure":
        if not self.auc_low <= self.auc <= self.auc_high:
            raise ValueError(f"auc_low <= auc <= auc_high does not hold ({self.auc_low}, {self.auc}, {self.auc_high})")
        return self


class _MeasuredFile(DomainModel):
    schema_version: int
    measured_by: str = Field(min_length=1)
    measured_on: date
    evaluators: dict[str, dict[str, list[PublishedFigure]]]


def published_validity(evaluator_id: str, metric: str, *, path: Path | None = None) -> list[PublishedFigure]:
    """The figures published for one evaluator metric; [] when the file or the entry is absent."""
    return published_metrics(evaluator_id, path=path).get(metric, [])


def published_metrics(evaluator_id: str, *, path: Path | None = None) -> dict[str, list[PublishedFigure]]:
    """Metric key -> figures, for every metric of ``evaluator_id`` the file names; {} when none."""
    path = MEASURED_FILE if path is None else path
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {}
    return _load(path, stat.st_mtime_ns, stat.st_size).get(evaluator_id, {})


@cache
def _load(path: Path, mtime_ns: int, size: int) -> dict[str, dict[str, list[PublishedFigure]]]:
    """The file parsed once per version of it (modification time and size are part of the key)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, int) and version > MEASURED_SCHEMA_VERSION:
        raise ValueError(
            f"{path}: schema_version: {version} was written by a newer Assay; this one reads up to "
            f"{MEASURED_SCHEMA_VERSION}"
        )
    try:
        measured = _MeasuredFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
        raise ValueError(f"{path}: {where or 'top level'}: {first['msg']}") from None
    stamp = {"measured_by": measured.measured_by, "measured_on": measured.measured_on.isoformat()}
    return {
        evaluator_id: {
            metric: [figure.model_copy(update=stamp) for figure in figures] for metric, figures in metrics.items()
        }
        for evaluator_id, metrics in measured.evaluators.items()
    }
