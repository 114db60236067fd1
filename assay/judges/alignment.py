"""Judge alignment: how often an LLM judge's pass/fail verdicts agree with people's, and Cohen's kappa
(agreement beyond chance), so a validator can show a judge is fit for purpose.

Human labels come from a CSV (``test_case_key``, ``label``, optional ``model_key``, ``evaluator`` and
``reviewer``) or from the calibration step's labels (a JSON list of ``ReviewLabel``, item ids
``<evaluator>/<metric>/<model>/<case>``). Labels a policy made (reviewer ``policy``) are not human and are left
out, with their count reported. A judge's verdict is its primary metric against the threshold in force in
the run; unscored cases are left out and counted, never read as a fail.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.models.evaluation import on_good_side
from assay.names import person_name

_TRUE = {"pass", "passed", "yes", "y", "true", "1", "good", "correct"}
_FALSE = {"fail", "failed", "no", "n", "false", "0", "bad", "incorrect"}
POLICY = "policy"


@dataclass(frozen=True)
class HumanLabel:
    test_case_key: str
    human_passes: bool
    reviewer: str
    model_key: str | None = None
    evaluator: str | None = None
    """None: the label is about the answer, so it applies to every judge's verdict on it."""


@dataclass
class Alignment:
    evaluator: str
    metric: str
    threshold: float | None
    pairs: int = 0
    agreement: float | None = None
    kappa: float | None = None
    kappa_note: str = ""
    confusion: dict[str, int] = field(default_factory=dict)
    unscored: int = 0
    reviewers: list[str] = field(default_factory=list)


def load_labels(path: Path) -> tuple[list[HumanLabel], int]:
    """(human labels, how many policy-made labels were left out). Errors name the file and the line."""
    labels = _json_labels(path) if path.suffix.lower() == ".json" else _csv_labels(path)
    human = [label for label in labels if label.reviewer.strip().lower() != POLICY]
    return human, len(labels) - len(human)


def _verdict(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{where}: label {value!r} is not a verdict; use pass/fail, yes/no, true/false or 1/0")


def _csv_labels(path: Path) -> list[HumanLabel]:
    """Read strictly (`assay.formats.tables.read_csv`): a row cut short or a stray quote is an error naming its
    line, never a label quietly lost or read from the wrong column."""
    from assay.formats.tables import read_csv

    header, rows = read_csv(path)
    if not {"test_case_key", "label"} <= set(header):
        found = sorted(set(header))
        raise ValueError(f"{path}: line 1: the header needs the columns test_case_key and label (found {found})")
    labels = []
    for line, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        row = dict(zip(header, cells, strict=True))
        where = f"{path}: line {line}"
        key = (row.get("test_case_key") or "").strip()
        if not key:
            raise ValueError(f"{where}: test_case_key is empty")
        labels.append(
            HumanLabel(
                test_case_key=key,
                human_passes=_verdict(row.get("label"), where),
                reviewer=person_name(row.get("reviewer") or "") or "unnamed reviewer",
                model_key=(row.get("model_key") or "").strip() or None,
                evaluator=(row.get("evaluator") or "").strip() or None,
            )
        )
    return labels


def _json_labels(path: Path) -> list[HumanLabel]:
    from assay.formats.errors import load_json

    items = load_json(path)
    if not isinstance(items, list):
        raise ValueError(f"{path}: expected a list of review labels (item_id, human_passes, reviewer)")
    labels = []
    for index, item in enumerate(items):
        where = f"{path}: item {index}"
        parts = str(item.get("item_id", "")).split("/") if isinstance(item, dict) else []
        if len(parts) != 4 or "human_passes" not in item:
            raise ValueError(f"{where}: expected item_id '<evaluator>/<metric>/<model>/<case>' and human_passes")
        evaluator, _metric, model_key, case_key = parts
        labels.append(HumanLabel(case_key, _verdict(item["human_passes"], where), str(item.get("reviewer", POLICY)),
                                 model_key, evaluator))  # fmt: skip
    return labels


def align(results: Sequence[dict[str, Any]], labels: Sequence[HumanLabel]) -> list[Alignment]:
    """One ``Alignment`` per judged evaluator's ``results.json`` document (``needs`` includes ``llm``)."""
    from sklearn.metrics import cohen_kappa_score

    report = []
    for document in results:
        evaluator = document["evaluator"]
        if "llm" not in evaluator.get("needs", []):
            continue
        primary = next(meta for meta in evaluator["metrics_meta"] if meta["is_primary"])
        item = Alignment(evaluator["id"], primary["key"], primary["threshold"])
        judge_says: list[bool] = []
        people_say: list[bool] = []
        reviewers: set[str] = set()
        for entry in document["results"]:
            for label in labels:
                if label.test_case_key != entry["test_case_key"]:
                    continue
                if label.model_key not in (None, entry["model_key"]) or label.evaluator not in (None, evaluator["id"]):
                    continue
                value = entry.get(primary["key"])
                if value is None or primary["threshold"] is None:
                    item.unscored += 1
                    continue
                passes = on_good_side(value, primary["threshold"], primary["higher_is_better"])
                judge_says.append(passes)
                people_say.append(label.human_passes)
                reviewers.add(label.reviewer)
        item.pairs = len(judge_says)
        item.reviewers = sorted(reviewers)
        if judge_says:
            agree = sum(a == b for a, b in zip(judge_says, people_say, strict=True))
            item.agreement = round(agree / len(judge_says), 4)
            item.confusion = {
                f"judge {'pass' if judge else 'fail'} / person {'pass' if person else 'fail'}":
                    sum(1 for a, b in zip(judge_says, people_say, strict=True) if (a, b) == (judge, person))
                for judge in (True, False) for person in (True, False)
            }  # fmt: skip
            if len(set(judge_says) | set(people_say)) < 2:
                item.kappa_note = "undefined: every verdict is the same class"
            else:
                item.kappa = round(float(cohen_kappa_score(people_say, judge_says)), 4)
        report.append(item)
    return report


def read_results(folder: Path) -> list[dict[str, Any]]:
    """Every ``<evaluator>/results.json`` under an ``assay evaluate`` output folder."""
    if not folder.is_dir():
        raise ValueError(f"--results {folder}: no such folder (give the --out folder of assay evaluate)")
    documents = []
    for path in sorted(folder.glob("*/results.json")):
        try:
            documents.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: cannot read it: {error}") from None
    if not documents:
        raise ValueError(f"--results {folder}: no <evaluator>/results.json files in it")
    return documents
