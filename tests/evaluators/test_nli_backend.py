"""The shared NLI backend, exercised with tiny BERT classifiers built offline (tests.support.tiny_models).

Heads with a hand-set bias give probabilities known on paper (label mapping); randomly initialised heads read
the text, so batching, windows and per-passage maxima can be checked against scoring the pieces one by one.
"""

import json
import math
import random
from pathlib import Path

import pytest
from assay.evaluators._nli import (
    NLI_MODEL_ENV,
    NliBackend,
    NliUnavailable,
    PairEntailment,
    SentenceEntailment,
    answer_entailment,
    backend_name,
    configured_nli_model,
    label_columns,
    nli_unavailable_reason,
)
from assay.evaluators.base import Unscored

from tests.support.tiny_models import build_classifier

NLI_LABELS = ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]
# each word is one token, so a window decodes to text that tokenizes back to the same window
WORDS = ["the", "bank", "pays", "interest", "monthly", "fee", "low", "rate", "account", "balance", "above"]


@pytest.fixture(scope="module")
def random_nli(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Randomly initialised with large weights, so inputs that differ get clearly different probabilities."""
    folder = tmp_path_factory.mktemp("models") / "random-nli"
    return build_classifier(folder, NLI_LABELS, positions=64, initializer_range=0.5)


def long_premise(words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


PAIRS = [
    ("The fee is £25.", "There is no fee."),
    ("Interest is paid monthly.", "Interest is paid monthly."),
    (long_premise(150), "The bank pays interest."),
    ("Short.", "A much longer hypothesis about savings accounts and their monthly interest payments."),
]


def test_labels_follow_id2label(tmp_path: Path) -> None:
    high = math.exp(2.0) / (math.exp(2.0) + 2.0)
    forward = NliBackend.load(build_classifier(tmp_path / "forward", NLI_LABELS, bias=[0.0, 0.0, 2.0]))
    permuted = NliBackend.load(build_classifier(tmp_path / "permuted", NLI_LABELS[::-1], bias=[0.0, 0.0, 2.0]))
    [pair] = PAIRS[:1]
    [forward_score], [permuted_score] = forward.score_pairs([pair]), permuted.score_pairs([pair])
    assert (forward_score.entailment, forward_score.contradiction) == pytest.approx((high, (1 - high) / 2))
    assert (permuted_score.entailment, permuted_score.contradiction) == pytest.approx(((1 - high) / 2, high))
    two = NliBackend.load(build_classifier(tmp_path / "two", ["not_entailment", "entailment"], bias=[0.0, 0.0]))
    assert two.score_pairs([pair]) == [PairEntailment(0.5, None)]
    assert two.name == "nli:two"


def test_label_names_are_matched_case_insensitively() -> None:
    assert label_columns(NLI_LABELS) == (2, 0)
    assert label_columns(["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]) == (0, 1)
    assert label_columns(["not_entailment", "entailment"]) == (1, None)
    assert label_columns(["LABEL_0", "LABEL_1", "LABEL_2"]) == (None, None)
    assert label_columns(["LABEL_0", "LABEL_1", "LABEL_2"], "label_2") == (2, None)


def test_batch_size_never_changes_a_probability(random_nli: str) -> None:
    one = NliBackend.load(random_nli, batch_size=1).score_pairs(PAIRS)
    sixteen = NliBackend.load(random_nli, batch_size=16).score_pairs(PAIRS)
    for left, right in zip(one, sixteen, strict=True):
        assert left.entailment == pytest.approx(right.entailment, abs=1e-6)
        assert left.contradiction == pytest.approx(right.contradiction, abs=1e-6)
    assert len({round(score.entailment, 6) for score in one}) == len(PAIRS)  # the head reads the text


def test_a_long_premise_is_read_in_windows_and_the_max_is_taken(random_nli: str) -> None:
    backend = NliBackend.load(random_nli)
    tokenizer = backend._classifier.tokenizer
    premise, hypothesis = long_premise(150, seed=1), "Interest is paid monthly."
    ids = tokenizer(premise, add_special_tokens=False)["input_ids"]
    hypothesis_ids = tokenizer(hypothesis, add_special_tokens=False)["input_ids"]
    room = 64 - tokenizer.num_special_tokens_to_add(pair=True)
    width, stride = room - len(hypothesis_ids), room // 4  # default stride 64 capped at a quarter of the input
    windows, start = [], 0
    while True:
        windows.append(ids[start : start + width])
        if start + width >= len(ids):
            break
        start += width - stride
    texts = [tokenizer.decode(window) for window in windows]
    assert len(ids) == 150 and len(windows) >= 4
    assert [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts] == windows
    by_hand = backend.score_pairs([(text, hypothesis) for text in texts])
    [windowed] = backend.score_pairs([(premise, hypothesis)])
    assert windowed.entailment == pytest.approx(max(score.entailment for score in by_hand), abs=1e-6)
    assert windowed.contradiction == pytest.approx(max(score.contradiction or 0.0 for score in by_hand), abs=1e-6)
    [both_long] = backend.score_pairs([(premise, long_premise(120, seed=2))])  # the hypothesis is cut to fit
    assert 0.0 <= both_long.entailment <= 1.0


def test_identical_pairs_are_scored_once(random_nli: str, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = NliBackend.load(random_nli)
    seen: list[list[tuple[str, str]]] = []
    original = backend._window_probabilities
    monkeypatch.setattr(backend, "_window_probabilities", lambda pairs: seen.append(pairs) or original(pairs))
    first = backend.score_pairs([PAIRS[0], PAIRS[1], PAIRS[0]])
    assert first[0] == first[2] and seen == [[PAIRS[0], PAIRS[1]]]
    backend.score_pairs([PAIRS[1], PAIRS[2]])
    assert seen == [[PAIRS[0], PAIRS[1]], [PAIRS[2]]]


class WordOverlapNli(NliBackend):
    """Entailment 0.9 when every hypothesis word is in the premise, else 0.1; contradiction the complement."""

    def __init__(self) -> None:
        self.name = "nli:word-overlap"

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[PairEntailment]:
        def words(text: str) -> set[str]:
            return set(text.lower().strip(".").split())

        scores = [0.9 if words(hypothesis) <= words(premise) else 0.1 for premise, hypothesis in pairs]
        return [PairEntailment(score, round(1 - score, 6)) for score in scores]


def test_each_sentence_takes_its_best_passage_and_the_answer_its_worst_sentence(random_nli: str) -> None:
    passages = ["The fee is 25 pounds.", "Interest is paid monthly."]
    answer = ["Interest is paid monthly.", "The fee is 25 pounds.", "The moon is cheese."]
    support = WordOverlapNli().support(answer, passages)
    assert support == [
        SentenceEntailment("Interest is paid monthly.", 0.9, 0.9, 1),
        SentenceEntailment("The fee is 25 pounds.", 0.9, 0.9, 0),
        SentenceEntailment("The moon is cheese.", 0.1, 0.9, 0),
    ]
    assert answer_entailment(support) == 0.1 and answer_entailment(support[:2]) == 0.9
    assert answer_entailment([]) is None
    real = NliBackend.load(random_nli)
    passages = [premise for premise, _ in PAIRS]
    for sentence, result in zip(answer, real.support(answer, passages), strict=True):
        row = real.score_pairs([(passage, sentence) for passage in passages])
        best = max(range(len(row)), key=lambda index: row[index].entailment)
        assert (result.passage, result.entailment) == (best, row[best].entailment)
        assert result.contradiction == max(score.contradiction or 0.0 for score in row)
    many = real.support_many([(answer[:1], passages), (answer[1:], passages[:2]), ([], [])])
    assert many == [real.support(answer[:1], passages), real.support(answer[1:], passages[:2]), []]


def test_unavailable_models_are_named_in_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_MODELS_DIR", str(tmp_path / "models"))
    reasons = {
        "not configured": nli_unavailable_reason(None),
        "missing": nli_unavailable_reason(str(tmp_path / "absent")),
        "no entailment label": nli_unavailable_reason(build_classifier(tmp_path / "generic", ["LABEL_0", "LABEL_1"])),
        "one output": nli_unavailable_reason(build_classifier(tmp_path / "reranker", ["LABEL_0"])),
    }
    assert NLI_MODEL_ENV in (reasons["not configured"] or "")
    assert str(tmp_path / "absent") in (reasons["missing"] or "") and "never downloads" in (reasons["missing"] or "")
    assert "no entailment label" in (reasons["no entailment label"] or "")
    assert "no entailment label" in (reasons["one output"] or "")
    assert nli_unavailable_reason(str(tmp_path / "reranker"), single_output=True) is None
    (tmp_path / "no-weights").mkdir()
    (tmp_path / "no-weights" / "config.json").write_text(json.dumps({"id2label": dict(enumerate(NLI_LABELS))}))
    reasons["no weights"] = nli_unavailable_reason(str(tmp_path / "no-weights"))
    assert "no weights" in (reasons["no weights"] or "")
    for reason in reasons.values():
        assert reason is not None and "\n" not in reason
    for name in (None, str(tmp_path / "absent"), str(tmp_path / "generic")):
        with pytest.raises(NliUnavailable) as raised:
            NliBackend.load(name)
        assert isinstance(raised.value, Unscored) and raised.value.reason == nli_unavailable_reason(name)
    broken = Path(build_classifier(tmp_path / "broken", NLI_LABELS))
    (broken / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(NliUnavailable, match="could not be loaded") as raised:
        NliBackend.load(str(broken))
    assert "\n" not in raised.value.reason


def test_the_configured_model_comes_from_the_env_or_the_nli_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_MODELS_DIR", str(tmp_path))
    monkeypatch.delenv(NLI_MODEL_ENV, raising=False)
    assert configured_nli_model() is None
    build_classifier(tmp_path / "nli", NLI_LABELS)
    assert configured_nli_model() == str(tmp_path / "nli")
    build_classifier(tmp_path / "acme" / "tiny-nli", NLI_LABELS)
    monkeypatch.setenv(NLI_MODEL_ENV, "acme/tiny-nli")
    assert configured_nli_model() == "acme/tiny-nli"
    assert NliBackend.load(configured_nli_model()).name == "nli:tiny-nli"


def test_a_hub_cache_snapshot_is_named_by_its_repository(tmp_path: Path) -> None:
    snapshot = tmp_path / "hub" / "models--MoritzLaurer--DeBERTa-v3-base-mnli" / "snapshots" / "0123abcd"
    assert backend_name(snapshot) == "nli:MoritzLaurer/DeBERTa-v3-base-mnli"
    assert backend_name(tmp_path / "my-nli") == "nli:my-nli"
