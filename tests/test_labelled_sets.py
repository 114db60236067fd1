"""The independent groundedness set: the loader refuses bad lines by file:line, and the frozen file keeps its
promises (hash, labels, splits, coverage of every kind in both splits)."""

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from bench.labelled_sets import (
    KIND_LABELS,
    LabelledItem,
    LabelledSetError,
    load_labelled_set,
    split_for,
    verify_frozen,
)

FROZEN = Path(__file__).resolve().parents[1] / "bench" / "data" / "groundedness_independent.jsonl"


@pytest.fixture(scope="module")
def items() -> list[LabelledItem]:
    return load_labelled_set(FROZEN)


def good_line(item_id: str = "t-1") -> dict:
    return {
        "id": item_id,
        "domain": "cards",
        "question": "What is the late fee?",
        "context": ["Late payment fee: £12.", "Cash fee 3%."],
        "answer": "£12.",
        "label": "supported",
        "kind": "extractive_correct",
        "split": split_for(item_id),
        "note": "Chunk 1.",
    }


def write_lines(path: Path, *lines: object) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def test_a_good_file_loads(tmp_path: Path) -> None:
    loaded = load_labelled_set(write_lines(tmp_path / "ok.jsonl", good_line("a"), "", good_line("b")))
    assert [item.id for item in loaded] == ["a", "b"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"label": "maybe"}, "'label'"),
        ({"kind": "half_true"}, "'kind'"),
        ({"context": []}, "'context'"),
        ({"answer": ""}, "'answer'"),
        ({"extra": 1}, "'extra'"),
        ({"label": "unsupported"}, "label: kind 'extractive_correct' must be labelled 'supported'"),
        ({"context": ["fine", "  "]}, "context: every chunk"),
    ],
)
def test_a_bad_field_is_named_with_file_and_line(tmp_path: Path, change: dict, expected: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", good_line("a"), good_line("b") | change)
    with pytest.raises(LabelledSetError) as raised:
        load_labelled_set(path)
    assert f"{path}:2:" in str(raised.value)
    assert expected in str(raised.value)


def test_a_missing_field_a_wrong_split_and_a_repeated_id_are_refused(tmp_path: Path) -> None:
    missing = good_line("a")
    del missing["note"]
    with pytest.raises(LabelledSetError, match=r"missing\.jsonl:1: field 'note'"):
        load_labelled_set(write_lines(tmp_path / "missing.jsonl", missing))
    moved = good_line("a") | {"split": "dev" if split_for("a") == "heldout" else "heldout"}
    with pytest.raises(LabelledSetError, match=r"split\.jsonl:1: split: id 'a' belongs to"):
        load_labelled_set(write_lines(tmp_path / "split.jsonl", moved))
    with pytest.raises(LabelledSetError, match=r"twice\.jsonl:3: field 'id': 'a' repeats line 1"):
        load_labelled_set(write_lines(tmp_path / "twice.jsonl", good_line("a"), good_line("b"), good_line("a")))


def test_broken_json_and_empty_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LabelledSetError, match=r"json\.jsonl:2: not valid JSON"):
        load_labelled_set(write_lines(tmp_path / "json.jsonl", good_line("a"), '{"id": "b",'))
    with pytest.raises(LabelledSetError, match=r"list\.jsonl:1: expected a JSON object, got list"):
        load_labelled_set(write_lines(tmp_path / "list.jsonl", "[1, 2]"))
    with pytest.raises(LabelledSetError, match="holds no items"):
        load_labelled_set(write_lines(tmp_path / "empty.jsonl", ""))


def test_verify_frozen_names_both_hashes_when_a_file_changes(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "set.jsonl", good_line("a"))
    frozen = hashlib.sha256(path.read_bytes()).hexdigest()
    (tmp_path / "set.sha256").write_text(f"{frozen}  set.jsonl\n")
    assert verify_frozen(path) == frozen
    write_lines(path, good_line("b"))
    with pytest.raises(LabelledSetError) as raised:
        verify_frozen(path)
    assert frozen in str(raised.value)
    assert hashlib.sha256(path.read_bytes()).hexdigest() in str(raised.value)


def test_the_independent_set_matches_its_frozen_hash() -> None:
    assert verify_frozen(FROZEN) == hashlib.sha256(FROZEN.read_bytes()).hexdigest()


def test_every_kind_has_enough_items_in_each_split(items: list[LabelledItem]) -> None:
    assert len(items) >= 300
    counts = Counter((item.kind, item.split) for item in items)
    for kind in KIND_LABELS:
        assert counts[(kind, "dev")] + counts[(kind, "heldout")] >= 20, kind
        assert counts[(kind, "dev")] >= 8, kind
        assert counts[(kind, "heldout")] >= 8, kind


def test_labels_splits_and_ids_follow_the_rules(items: list[LabelledItem]) -> None:
    assert all(item.label == KIND_LABELS[item.kind] for item in items)
    assert all(
        item.split == ("heldout" if hashlib.sha256(item.id.encode()).hexdigest()[0] in "0123456" else "dev")
        for item in items
    )
    assert len({item.id for item in items}) == len(items)
    pairs = Counter((tuple(item.context), item.answer) for item in items)
    assert pairs.most_common(1)[0][1] == 1


def test_contexts_are_realistic_and_each_is_used_for_both_labels(items: list[LabelledItem]) -> None:
    by_context: dict[tuple[str, ...], set[str]] = {}
    for item in items:
        assert 2 <= len(item.context) <= 5, item.id
        assert 40 <= sum(len(chunk.split()) for chunk in item.context) <= 200, item.id
        by_context.setdefault(tuple(item.context), set()).add(item.kind)
    assert all(
        len(kinds) >= 3 and {KIND_LABELS[kind] for kind in kinds} == {"supported", "unsupported"}
        for kinds in by_context.values()
    )
