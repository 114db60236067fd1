"""Test validation (MRM step 3): cosine cut-offs on a fake embedder, BERTScore and NLI on real or tiny models,
missing sources, case exclusion and the packaged BERTScore baseline."""

import csv
import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from assay.embeddings import EmbeddingEngine
from assay.models import Chunk, Test, TestCase, TestSuite
from assay.mrm import validation
from assay.mrm.validation import FLOORS, bertscore_baseline_path, exclude_cases, validate_suite

ROOT = Path(__file__).resolve().parents[2]
PARAPHRASE_F1 = 0.901  # measured; bert-score batching moves it by up to ~0.004
SAVER = Chunk(
    doc_uri="saver.md",
    index=0,
    text="Easy Access Saver\nThe Easy Access Saver pays 3.25% AER on balances from £10,000 to £49,999. Interest is "
    "variable and paid monthly. You can make unlimited withdrawals without notice or penalty.",
)
HOURS = Chunk(
    doc_uri="hours.md",
    index=2,
    text="Branch opening hours\nOur branches open from 9am to 5pm Monday to Friday and from 9am to 1pm on "
    "Saturdays. Branches are closed on Sundays and bank holidays.",
)
CHUNKS = {chunk.ref: chunk for chunk in (SAVER, HOURS)}
COPIED = TestCase(
    key="copied",
    prompt="What rate does the Easy Access Saver pay on £20,000?",
    expected_output="The Easy Access Saver pays 3.25% AER on balances from £10,000 to £49,999.",
    sources=[SAVER.ref],
)
UNRELATED = TestCase(
    key="unrelated",
    prompt="How do I freeze a lost card?",
    expected_output="Our mobile app lets you freeze a lost debit card instantly.",
    sources=[HOURS.ref],
)


def suite(*cases: TestCase) -> TestSuite:
    return TestSuite(name="s", tests=[Test(key="t", test_cases=list(cases))])


class AngleEmbedder:
    """Every chunk is [1, 0]; the query of case i is a unit vector at cosine ``cosines[i]`` from it."""

    def __init__(self, cosines: Sequence[float]) -> None:
        self.vectors = {f"q{i}\na{i}": [c, math.sqrt(1 - c * c)] for i, c in enumerate(cosines)}
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([self.vectors.get(text, [1.0, 0.0]) for text in texts], dtype=np.float32)


def angle_suite(count: int) -> tuple[TestSuite, dict[str, Chunk]]:
    chunks = {f"d.md#{i}": Chunk(doc_uri="d.md", index=i, text=f"chunk {i}") for i in range(count)}
    cases = [
        TestCase(key=f"c{i}", prompt=f"q{i}", expected_output=f"a{i}", sources=[f"d.md#{i}"]) for i in range(count)
    ]
    return suite(*cases), chunks


def test_robust_cutoff_flags_the_case_far_below_its_siblings() -> None:
    cosines = [0.80, 0.82, 0.78, 0.81, 0.79, 0.83, 0.40]
    embedder = AngleEmbedder(cosines)
    cases, chunks = angle_suite(len(cosines))
    result = validate_suite(cases, chunks, embedder, bertscore=False)
    assert len(embedder.calls) == 1  # every text in one batch
    assert [case.cosine for case in result.cases] == cosines
    # median 0.80, MAD 0.02 -> spread floored at MIN_SPREAD 0.05 -> 0.80 - 3 * 0.05
    assert result.thresholds == {"cosine": 0.65}
    assert [case.outlier for case in result.cases] == [False] * 6 + [True]
    assert result.cases[-1].reasons == ["question and answer barely related to the source (cosine 0.400 < 0.650)"]
    assert result.bertscore_status == "not computed: disabled (bertscore=False)"
    assert result.cases[0].bertscore_f1 is None


def test_outlier_z_scales_the_median_absolute_deviation() -> None:
    cosines = [0.5, 0.6, 0.7, 0.8, 0.9]
    cases, chunks = angle_suite(5)
    result = validate_suite(cases, chunks, AngleEmbedder(cosines), bertscore=False, outlier_z=1.0)
    assert result.thresholds == {"cosine": 0.5517}  # 0.7 - 1.4826 * 0.1
    assert [case.outlier for case in result.cases] == [True, False, False, False, False]


def test_the_floor_flags_a_suite_that_drifted_as_a_whole() -> None:
    cosines = [0.30, 0.31, 0.32, 0.33, 0.34]
    cases, chunks = angle_suite(5)
    result = validate_suite(cases, chunks, AngleEmbedder(cosines), bertscore=False)
    assert result.thresholds == {"cosine": FLOORS["cosine"]}
    assert all(case.outlier for case in result.cases)


def test_missing_sources_give_no_scores_and_a_reason() -> None:
    cases = suite(
        TestCase(key="none", prompt="q0", expected_output="a0"),
        TestCase(key="lost", prompt="q1", expected_output="a1", sources=["gone.md#4"]),
        TestCase(key="half", prompt="q2", expected_output="a2", sources=["gone.md#4", SAVER.ref]),
        TestCase(key="no-answer", prompt="q3", sources=[SAVER.ref]),
    )
    result = validate_suite(cases, CHUNKS, AngleEmbedder([0.1, 0.2, 0.9, 0.5]), bertscore=False)
    none, lost, half, no_answer = result.cases
    assert (none.cosine, none.outlier) == (None, False)
    assert none.reasons == ["no source chunks named (sources is empty): nothing to validate the case against"]
    assert (lost.cosine, lost.reasons) == (None, ["source chunks not among the corpus chunks given: gone.md#4"])
    assert (half.cosine, half.outlier) == (0.9, False)
    assert half.reasons == ["source chunks not among the corpus chunks given: gone.md#4"]
    assert no_answer.cosine == 1.0  # "q3" alone is not in the fake's table: it embeds like the chunk
    assert no_answer.reasons == ["no expected answer: BERTScore and NLI need one"]


def test_nli_unavailable_says_why(tmp_path: Path) -> None:
    cases, chunks = angle_suite(1)
    embedder = AngleEmbedder([0.9])
    absent = validate_suite(cases, chunks, embedder, bertscore=False)
    assert absent.nli_status == (
        "not computed: no NLI model configured (nli_model=None); no NLI weights ship with Assay"
    )
    missing = validate_suite(cases, chunks, embedder, bertscore=False, nli_model=str(tmp_path / "nope"))
    assert (
        missing.nli_status
        == f"not computed: NLI model folder {tmp_path / 'nope'} does not exist (nothing is downloaded)"
    )
    assert all(case.nli_entailment is None for case in absent.cases + missing.cases)


def tiny_classifier(folder: Path, labels: dict[int, str]) -> Path:
    """A 2-layer BERT classifier with random weights and the MiniLM vocabulary: loads like a real NLI model."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from assay.embeddings import PACKAGED_MODEL, resolve_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(resolve_model_path(PACKAGED_MODEL)))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=len(labels),
        id2label=labels,
        label2id={label: index for index, label in labels.items()},
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_nli_with_a_local_classifier_scores_entailment(tmp_path: Path) -> None:
    folder = tiny_classifier(tmp_path / "nli", {0: "contradiction", 1: "neutral", 2: "entailment"})
    cases = suite(COPIED, UNRELATED, TestCase(key="empty", prompt="q", sources=[SAVER.ref]))
    result = validate_suite(cases, CHUNKS, AngleEmbedder([]), bertscore=False, nli_model=str(folder))
    assert result.nli_status == "available"
    copied, unrelated, empty = result.cases
    assert 0 <= copied.nli_entailment <= 1 and 0 <= unrelated.nli_entailment <= 1
    assert empty.nli_entailment is None
    assert result.thresholds["nli_entailment"] == FLOORS["nli_entailment"]  # 2 values: floor only
    assert copied.outlier == (copied.nli_entailment < 0.5)


def test_nli_model_without_an_entailment_label_is_refused(tmp_path: Path) -> None:
    folder = tiny_classifier(tmp_path / "sentiment", {0: "negative", 1: "positive"})
    result = validate_suite(suite(COPIED), CHUNKS, AngleEmbedder([]), bertscore=False, nli_model=str(folder))
    assert result.nli_status.startswith(f"not computed: no usable NLI classifier in {folder}: config id2label")
    assert "has no 'entailment' label" in result.nli_status
    assert result.cases[0].nli_entailment is None


def test_copied_answer_scores_high_and_unrelated_answer_is_flagged(engine: EmbeddingEngine) -> None:
    verbatim = TestCase(
        key="verbatim", prompt="Tell me about branch hours.", expected_output=HOURS.text, sources=[HOURS.ref]
    )
    paraphrase = COPIED.model_copy(
        update={
            "key": "paraphrase",
            "expected_output": "Balances between £10,000 and £49,999 in the Easy Access Saver earn 3.25% AER.",
        }
    )
    result = validate_suite(suite(COPIED, UNRELATED, verbatim, paraphrase), CHUNKS, engine)
    copied, unrelated, same, reworded = result.cases
    assert result.bertscore_status == "available"
    assert copied.cosine == pytest.approx(0.8965, abs=2e-3)
    # one sentence of a longer chunk: matched against that sentence, so recall does not punish it
    assert copied.bertscore_f1 == pytest.approx(1.0, abs=1e-3)
    assert same.bertscore_f1 == pytest.approx(1.0, abs=1e-3)  # identical text: raw 1 rescales to 1
    assert reworded.bertscore_f1 == pytest.approx(PARAPHRASE_F1, abs=1e-2)
    assert not copied.outlier and not same.outlier and not reworded.outlier
    assert unrelated.outlier
    assert [reason.split(" (")[0] for reason in unrelated.reasons] == [
        "question and answer barely related to the source",
        "answer worded far from the source",
    ]
    assert result.thresholds == {"cosine": 0.35, "bertscore_f1": 0.25}
    validate_suite(suite(COPIED), CHUNKS, engine)
    assert validation._bert_scorer.cache_info().currsize == 1  # loaded once per process


def test_exclude_cases_returns_a_new_suite_without_them() -> None:
    original = suite(COPIED, UNRELATED)
    kept = exclude_cases(original, {"unrelated"})
    assert [case.key for _, case in kept.cases()] == ["copied"]
    assert original.case_count == 2 and kept.name == original.name
    with pytest.raises(ValueError, match=r"cannot exclude test cases \['typo'\]"):
        exclude_cases(original, {"typo"})


def test_packaged_baseline_has_one_row_per_minilm_layer() -> None:
    with bertscore_baseline_path().open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["LAYER", "P", "R", "F"]
    assert [int(row[0]) for row in rows[1:]] == list(range(7))
    assert all(0 < float(value) < 1 for row in rows[1:] for value in row[1:])


def test_baseline_pairs_are_deterministic_and_unrelated() -> None:
    spec = importlib.util.spec_from_file_location(
        "build_bertscore_baseline", ROOT / "bench" / "build_bertscore_baseline.py"
    )
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    sentences = [("a.md", "one two three four five"), ("b.md", "six seven eight nine ten"), ("a.md", "x y z w v")]
    first = script.sample_pairs(sentences, 2, seed=13)
    assert first == script.sample_pairs(sentences, 2, seed=13)
    assert len(set(first)) == 2
    documents = {text: uri for uri, text in sentences}
    assert all(documents[a] != documents[b] for a, b in first)
