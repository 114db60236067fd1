"""Labels that live beside answers Assay already holds: in a test lab's categories, or in the MRM calibration step.

A test lab (Assay's or H2O Eval Studio's): each test case carries the category ``label:1`` (acceptable) or
``label:0`` (not; ``label:true`` / ``label:false`` too). In a lab with several models, ``label:<model key>:1``
labels one model's answer and wins over a plain ``label:`` for that model; row ids are then
``<model key>:<test case key>``. ``group:<name>`` sets the row's group (else the test case's topic).

Calibration: the reviewer marked sampled answers pass (acceptable) or fail, or skipped them
(``flows.review_forms``; stored as ``passed_item_ids`` / ``failed_item_ids`` and ``ReviewLabel.human_passes``),
each item ``<evaluator>/<metric>/<model>/<test case>``. Read per answer: label 1 when every verdict on it passes,
0 when any fails (an answer a person failed in the light of one metric is not acceptable); skipped items are no
label, labels a policy made are left out, and both counts are noted. Unlike the MRM report's reviewer agreement
(``assay.validity.agreement``), which keeps each label to the metric it was given on, validation asks whether
a score separates acceptable answers from the rest, so one verdict on an answer applies to every evaluator and
baseline. The answers themselves come from the run's test lab: ``--lab``, else ``test_lab.json`` beside the
labels or the export folder's ``automated-evaluation/test_lab.json``.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.formats.errors import FormatError, json_path, validate
from assay.models import TestLab, TestLabRow
from assay.models.mrm import ReviewLabel
from assay.models.steps import Step
from assay.validity.labels import LabelledRow, LabelledSet, file_sha256, label_error, parse_label

LABEL_PREFIX = "label:"
GROUP_PREFIX = "group:"
POLICY = "policy"
LAB_IN_EXPORT = Path("automated-evaluation") / "test_lab.json"
LABELS_IN_EXPORT = Path("calibration") / "labels.json"


def from_lab_file(path: Path) -> LabelledSet:
    from assay.formats import import_file

    lab = import_file(path)
    if not isinstance(lab, TestLab):
        raise FormatError(path, "", "holds a test suite without answers; give a test lab, or a labelled .jsonl/.csv")
    several = len({row.model_key for row in lab.rows}) > 1
    rows = [LabelledRow(_row_id(row, several), _case_label(path, row), group_of(row), row) for row in lab.rows]
    if not rows:
        raise FormatError(path, "rows", "the test lab holds no answer")
    return LabelledSet(path, file_sha256(path), "test lab (label: categories)", rows, list(lab.models))


def _row_id(row: TestLabRow, several_models: bool) -> str:
    return f"{row.model_key}:{row.test_case.key}" if several_models else row.test_case.key


def group_of(row: TestLabRow) -> str | None:
    """The ``group:`` category, else the test case's topic."""
    named = [c[len(GROUP_PREFIX) :].strip() for c in row.test_case.categories if c.startswith(GROUP_PREFIX)]
    return next((name for name in named if name), None) or row.test_case.topic


def _case_label(path: Path, row: TestLabRow) -> int:
    where = f"test case {row.test_case.key!r} (model {row.model_key!r}), categories"
    general: int | None = None
    for category in row.test_case.categories:
        if not category.startswith(LABEL_PREFIX):
            continue
        model, _, value = category[len(LABEL_PREFIX) :].rpartition(":")
        label = parse_label(value)
        if label is None:
            raise label_error(path, where, category)
        if model == row.model_key:
            return label
        if not model:
            general = label
    if general is None:
        raise FormatError(
            path, where, "no label: add the category 'label:1' (acceptable) or 'label:0' (not acceptable)"
        )
    return general


def from_run_folder(folder: Path, lab: Path | None) -> LabelledSet:
    """An MRM run's export folder: the person's labels of its calibration step and its test lab."""
    labels = folder / LABELS_IN_EXPORT
    if not labels.is_file():
        message = f"no {LABELS_IN_EXPORT} in it: give an MRM run's export folder whose calibration a person labelled"
        raise FormatError(folder, "", message)
    from assay.formats.errors import load_json

    return from_review_labels(labels, load_json(labels), lab or folder / LAB_IN_EXPORT)


def from_review_labels(path: Path, items: Any, lab: Path | None) -> LabelledSet:
    """The calibration step's ``labels.json``: a list of ``ReviewLabel``."""
    if not isinstance(items, list):
        raise FormatError(path, "", "expected a list of review labels (item_id, human_passes, reviewer)")
    verdicts = []
    for index, item in enumerate(items):
        label = validate(ReviewLabel, item, path, where=lambda loc, i=index: json_path(i, *loc))
        verdicts.append((json_path(index, "item_id"), label.item_id, label.human_passes, label.reviewer))
    return _calibration_set(path, verdicts, lab, "calibration labels (labels.json)")


def from_approvals(path: Path, lab: Path | None) -> LabelledSet:
    """An approvals file's ``calibration`` section: passed item ids are label 1, failed ones 0."""
    from assay.mrm.approvals import load_approvals

    approvals = load_approvals(path)
    chosen = approvals.calibration
    if chosen is None or not (chosen.passed_item_ids or chosen.failed_item_ids):
        raise FormatError(path, Step.CALIBRATION, "no passed_item_ids or failed_item_ids to read labels from")
    reviewer = approvals.reviewer or f"approvals file {path.name}"
    verdicts = [
        (json_path(Step.CALIBRATION, field, index), item, passes, reviewer)
        for field, ids, passes in (
            ("passed_item_ids", chosen.passed_item_ids, True),
            ("failed_item_ids", chosen.failed_item_ids, False),
        )
        for index, item in enumerate(ids)
    ]
    return _calibration_set(path, verdicts, lab, "calibration labels (approvals file)")


def _find_lab(path: Path, lab: Path | None) -> Path:
    candidates = [lab] if lab is not None else [path.parent / "test_lab.json", path.parent.parent / LAB_IN_EXPORT]
    found = next((candidate for candidate in candidates if candidate.is_file()), None)
    if found is None:
        looked = ", ".join(str(candidate) for candidate in candidates)
        message = f"calibration labels name answers by item id; give their test lab with --lab (looked for {looked})"
        raise FormatError(path, "", message)
    return found


def _calibration_set(
    path: Path, verdicts: Sequence[tuple[str, str, bool, str]], lab_path: Path | None, source: str
) -> LabelledSet:
    """One labelled row per answer a person judged, in the order first judged."""
    from assay.formats import import_file

    found = _find_lab(path, lab_path)
    lab = import_file(found)
    if not isinstance(lab, TestLab):
        raise FormatError(found, "", "holds a test suite without answers; give the run's test lab")
    answers = {(row.model_key, row.test_case.key): row for row in lab.rows}
    labels: dict[tuple[str, str], list[bool]] = {}
    policy = 0
    for where, item_id, passes, reviewer in verdicts:
        parts = item_id.split("/")
        if len(parts) != 4:
            raise FormatError(path, where, f"expected '<evaluator>/<metric>/<model>/<test case>', got {item_id!r}")
        key = (parts[2], parts[3])
        if key not in answers:
            raise FormatError(path, where, f"{item_id!r}: {found} has no answer of model {key[0]!r} to {key[1]!r}")
        if reviewer.strip().lower() == POLICY:
            policy += 1
            continue
        labels.setdefault(key, []).append(passes)
    if not labels:
        raise FormatError(path, "", "no label a person gave (labels a policy made are left out)")
    several = len({model for model, _ in labels}) > 1
    rows = [
        LabelledRow(_row_id(answers[key], several), int(all(passes)), group_of(answers[key]), answers[key])
        for key, passes in labels.items()
    ]
    split = sum(len(set(passes)) > 1 for passes in labels.values())
    notes = [f"answers read from {found}"]
    if policy:
        notes.append(f"{policy} label(s) a policy made were left out")
    if split:
        notes.append(f"{split} answer(s) passed on one metric and failed on another were read as 0 (not acceptable)")
    models = [model for model in lab.models if model.key in {key[0] for key in labels}]
    return LabelledSet(path, file_sha256(path), source, rows, models, tuple(notes))
