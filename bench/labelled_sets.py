"""Load and check the frozen labelled sets that measure a detector's validity.

A validity figure only counts when the answers were written without knowledge of the detector, and when the
file cannot drift after the figure is taken. So every line is validated on load (a bad line names its
``file:line`` and field instead of silently skewing an AUC), and ``verify_frozen`` compares the file with the
hash recorded when it was frozen: a changed set must get a new file name, not a quiet edit.
"""

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Label = Literal["supported", "unsupported"]
Kind = Literal[
    "extractive_correct",
    "abstractive_correct",
    "partial_correct",
    "wrong_figure_elsewhere",
    "wrong_figure_absent",
    "wrong_entity",
    "unsupported_extra_claim",
    "contradiction",
    "off_topic_fabrication",
]
Split = Literal["dev", "heldout"]

#: The label each kind must carry: a kind names how an answer was written, so it fixes the truth.
KIND_LABELS: dict[str, Label] = {
    "extractive_correct": "supported",
    "abstractive_correct": "supported",
    "partial_correct": "supported",
    "wrong_figure_elsewhere": "unsupported",
    "wrong_figure_absent": "unsupported",
    "wrong_entity": "unsupported",
    "unsupported_extra_claim": "unsupported",
    "contradiction": "unsupported",
    "off_topic_fabrication": "unsupported",
}

#: First hex digits of ``sha256(id)`` that put an item in the held-out split (about 7/16 of the items).
HELDOUT_DIGITS = "0123456"


class LabelledSetError(ValueError):
    """A labelled set that cannot be trusted: a bad line, or a file that no longer matches its frozen hash."""


def split_for(item_id: str) -> Split:
    """The split an id belongs to, fixed by its hash so nobody can move an awkward item out of held-out."""
    return "heldout" if hashlib.sha256(item_id.encode("utf-8")).hexdigest()[0] in HELDOUT_DIGITS else "dev"


class LabelledItem(BaseModel):
    """One question, its retrieved context, an answer and whether the context supports that answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    domain: str = Field(min_length=1)
    question: str = Field(min_length=1)
    context: list[str] = Field(min_length=1)
    answer: str = Field(min_length=1)
    label: Label
    kind: Kind
    split: Split
    note: str = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> "LabelledItem":
        if any(not chunk.strip() for chunk in self.context):
            raise ValueError("context: every chunk must hold text")
        if KIND_LABELS[self.kind] != self.label:
            raise ValueError(
                f"label: kind {self.kind!r} must be labelled {KIND_LABELS[self.kind]!r}, not {self.label!r}"
            )
        if split_for(self.id) != self.split:
            raise ValueError(f"split: id {self.id!r} belongs to {split_for(self.id)!r} by the sha256 rule")
        return self


def _field_of(error: ValidationError) -> str:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    return f"field {location!r}: {first['msg']}" if location else str(first["msg"]).removeprefix("Value error, ")


def load_labelled_set(path: str | Path) -> list[LabelledItem]:
    """Every item of a JSON-lines set, or a ``LabelledSetError`` naming ``file:line`` and the field at fault."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise LabelledSetError(f"{path}: cannot read the labelled set ({error})") from error
    items: list[LabelledItem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise LabelledSetError(f"{path}:{number}: not valid JSON ({error.msg})") from error
        if not isinstance(raw, dict):
            raise LabelledSetError(f"{path}:{number}: expected a JSON object, got {type(raw).__name__}")
        try:
            item = LabelledItem.model_validate(raw)
        except ValidationError as error:
            raise LabelledSetError(f"{path}:{number}: {_field_of(error)}") from error
        if item.id in seen:
            raise LabelledSetError(f"{path}:{number}: field 'id': {item.id!r} repeats line {seen[item.id]}")
        seen[item.id] = number
        items.append(item)
    if not items:
        raise LabelledSetError(f"{path}: the labelled set holds no items")
    return items


def file_sha256(path: str | Path) -> str:
    """The hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def hash_path(path: str | Path) -> Path:
    """Where a set's frozen hash lives: next to it, ``.jsonl`` replaced by ``.sha256``."""
    return Path(path).with_suffix(".sha256")


def verify_frozen(path: str | Path) -> str:
    """The set's hash when it matches the frozen one; otherwise a ``LabelledSetError`` quoting both hashes."""
    path, recorded_at = Path(path), hash_path(path)
    try:
        recorded = recorded_at.read_text(encoding="utf-8").split()
    except OSError as error:
        raise LabelledSetError(f"{recorded_at}: cannot read the frozen hash ({error})") from error
    if not recorded:
        raise LabelledSetError(f"{recorded_at}: the frozen hash file is empty")
    actual = file_sha256(path)
    if actual != recorded[0].lower():
        raise LabelledSetError(
            f"{path}: sha256 {actual} differs from the frozen {recorded[0]} in {recorded_at.name}; "
            "a frozen set is never edited - write a new file name instead"
        )
    return actual
