"""BERTScore: token-level semantic overlap between the actual and the expected answer (Zhang et al., 2020).

Seed 002 names BERT score among the similarity measures of generated text; it defines no evaluator section for
it, so the three metrics follow the BERTScore paper: each token of one text is matched to its most similar
token of the other by the cosine of contextual embeddings; precision averages over the actual answer's tokens,
recall over the expected answer's, F1 is their harmonic mean. Unlike one whole-answer embedding, this tells a
padded answer (low precision) from an incomplete one (low recall).

The ``bert-score`` package loads the model (cut to ``num_layers``), tokenises and embeds, offline, on the
packaged all-MiniLM-L6-v2 by default. The greedy matching is done here, pair by pair: ``BERTScorer.score``
pads the pairs of a batch and lets a padding position's similarity of 0 beat a token's negative best cosine,
so its scores change with the other pairs in the batch (at MiniLM's last layer by up to 0.003), and a case
must score the same in any run. Scores are raw, not rescaled: at that layer unrelated sentence pairs of the
sample corpus already score about 0.2 and paraphrases above 0.85.
"""

import json
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from assay.evaluators._overlap import reference_answer_golden
from assay.evaluators._sentence_similarity import rounded, similarity_spec
from assay.evaluators.base import CaseContext, Evaluator, Unscored, score_metric
from assay.evaluators.registry import register

from assay.embeddings import PACKAGED_MODEL, ModelUnavailableError, resolve_model_path
from assay.embeddings.keyed_store import hashed_key

Pair = tuple[str, str]
PairScores = dict[str, float]
TokenVectors = tuple[np.ndarray, np.ndarray]  # unit token embeddings, token weights
_METRIC_KEYS = ("bertscore_precision", "bertscore_recall", "bertscore_f1")
_PAIRS_PER_CHUNK = 256  # bounds the token embeddings held in memory at once


_STORE_VERSION = "bertscore-pairs-v1"
"""Part of every stored pair score's key: change it when the scoring changes, so old scores are not read."""


@lru_cache(maxsize=16)
def _model_identity(model_path: str) -> str:
    """The model folder and its files' names, sizes and modification times: new weights in the same folder
    give new keys, so no stored score outlives the model it came from."""
    folder = Path(model_path)
    files = sorted((path.relative_to(folder).as_posix(), path.stat()) for path in folder.rglob("*") if path.is_file())
    return json.dumps([model_path, [(name, stat.st_size, stat.st_mtime_ns) for name, stat in files]])


@lru_cache(maxsize=4)
def _encoder(model_path: str, num_layers: int) -> tuple[Any, Any]:
    """Tokenizer and layer-cut model, once per (model, layer) per process: loading costs seconds."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from bert_score.utils import get_model, get_tokenizer

    return get_tokenizer(model_path, use_fast=False), get_model(model_path, num_layers)


def _token_vectors(encoder: tuple[Any, Any], texts: Sequence[str], batch_size: int) -> dict[str, TokenVectors]:
    """Unit token embeddings of each text. [CLS] and [SEP] weigh 0 but stay candidates for matching, as in
    BERTScore; texts of similar length share a batch, so little padding enters the model."""
    from bert_score.utils import get_bert_embedding

    tokenizer, model = encoder
    weights: defaultdict[int, float] = defaultdict(lambda: 1.0)
    weights[tokenizer.sep_token_id] = weights[tokenizer.cls_token_id] = 0.0
    ordered = sorted(texts, key=len, reverse=True)
    vectors: dict[str, TokenVectors] = {}
    for start in range(0, len(ordered), batch_size):
        batch = ordered[start : start + batch_size]
        embeddings, mask, token_weights = get_bert_embedding(batch, model, tokenizer, weights, device="cpu")
        for index, text in enumerate(batch):
            length = int(mask[index].sum())
            tokens = embeddings[index, :length].double().numpy()
            tokens /= np.linalg.norm(tokens, axis=1, keepdims=True)
            vectors[text] = (tokens, token_weights[index, :length].double().numpy())
    return vectors


def _greedy_match(candidate: TokenVectors, reference: TokenVectors) -> PairScores | None:
    """Precision, recall and F1 of one pair; None when either text has no weighted token."""
    (candidate_tokens, candidate_weights), (reference_tokens, reference_weights) = candidate, reference
    if not candidate_weights.sum() or not reference_weights.sum():
        return None
    similarity = candidate_tokens @ reference_tokens.T
    precision = float(candidate_weights @ similarity.max(axis=1) / candidate_weights.sum())
    recall = float(reference_weights @ similarity.max(axis=0) / reference_weights.sum())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    values = zip(_METRIC_KEYS, (precision, recall, f1), strict=True)
    # a token's best cosine can be negative for unrelated texts; below 0 is reported as no overlap
    return {key: rounded(min(max(value, 0.0), 1.0)) for key, value in values}


@register
@dataclass
class BertScore(Evaluator):
    spec = similarity_spec(
        "bertscore",
        "BERTScore",
        "Token-level semantic similarity of the actual answer to the expected answer: every token is "
        "matched greedily to the most similar token of the other text by the cosine of contextual "
        "embeddings (all-MiniLM-L6-v2, last layer); precision averages over the actual answer's tokens, "
        "recall over the expected answer's, and F1 combines them. Texts beyond 512 tokens are truncated.",
        [
            score_metric(
                "bertscore_precision",
                "BERTScore precision",
                "Mean best-match similarity of the actual answer's tokens: low when the answer adds unsupported "
                "content.",
            ),
            score_metric(
                "bertscore_recall",
                "BERTScore recall",
                "Mean best-match similarity of the expected answer's tokens: low when the answer leaves out "
                "expected content.",
            ),
            score_metric(
                "bertscore_f1",
                "BERTScore F1",
                "Harmonic mean of BERTScore precision and recall.",
                primary=True,
            ),
        ],
        keywords=["bertscore", "ground-truth", "semantic-similarity", "tokens", "transformer"],
        required_inputs=["expected_output", "actual_output"],
        needs=["model_weights"],
    )

    golden = reference_answer_golden("Balances from £10,000 in the Easy Access Saver earn 3.25% AER.")

    model: str = field(
        default=PACKAGED_MODEL,
        metadata={
            "description": f"The packaged {PACKAGED_MODEL!r} or a local folder holding a BERT-style transformer "
            "(config, tokenizer and weights); nothing is downloaded."
        },
    )
    num_layers: int = field(
        default=6, metadata={"description": "Transformer layer whose token embeddings are compared (MiniLM has 6)."}
    )
    batch_size: int = field(default=64, metadata={"description": "Texts per forward pass of the model."})

    def __post_init__(self) -> None:
        self._pair_scores: dict[Pair, PairScores | None] = {}

    def _model_path(self) -> Path:
        path = resolve_model_path(self.model)
        if not path.is_dir():
            raise ModelUnavailableError(f"folder {path} does not exist")
        return path

    def unavailable_reason(self) -> str | None:
        try:
            path = self._model_path()
        except (ModelUnavailableError, ImportError) as error:
            return f"BERTScore model {self.model!r} is not available: {error}"
        config = path / "config.json"
        if not config.is_file():
            return f"BERTScore model {self.model!r} is not available: {config} is missing"
        layers = json.loads(config.read_text(encoding="utf-8")).get("num_hidden_layers")
        if isinstance(layers, int) and not 0 <= self.num_layers <= layers:
            return f"BERTScore model {self.model!r} has layers 0..{layers}; num_layers={self.num_layers} is not one"
        return None

    def _score_pairs(self, pairs: Sequence[Pair]) -> None:
        """Score every (actual, expected) pair not yet scored, embedding each distinct text once per chunk. With
        a score store (``Services.score_store``) a pair scored by an earlier run, or by an earlier MRM step, is
        read back instead: the model is then not even loaded."""
        fresh = [pair for pair in dict.fromkeys(pairs) if pair not in self._pair_scores]
        for pair in fresh:
            if not (pair[0].strip() and pair[1].strip()):  # no tokens to match (and bert_score fails on "")
                self._pair_scores[pair] = None
        fresh = [pair for pair in fresh if pair not in self._pair_scores]
        if not fresh:
            return
        store = self.services.score_store
        keys: dict[Pair, bytes] = {}
        if store is not None:
            identity = _model_identity(str(self._model_path()))
            keys = {pair: hashed_key(_STORE_VERSION, identity, str(self.num_layers), *pair) for pair in fresh}
            for pair, key in keys.items():
                if (stored := store.get(key)) is not None:
                    self._pair_scores[pair] = stored["scores"]
            fresh = [pair for pair in fresh if pair not in self._pair_scores]
            if not fresh:
                return
        encoder = _encoder(str(self._model_path()), self.num_layers)
        for start in range(0, len(fresh), _PAIRS_PER_CHUNK):
            chunk = fresh[start : start + _PAIRS_PER_CHUNK]
            texts = list(dict.fromkeys(text for pair in chunk for text in pair))
            vectors = _token_vectors(encoder, texts, self.batch_size)
            for pair in chunk:
                scores = self._pair_scores[pair] = _greedy_match(vectors[pair[0]], vectors[pair[1]])
                if store is not None:
                    store.put(keys[pair], {"scores": scores})
        if store is not None:
            store.flush()

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        self._score_pairs([(case.actual_output or "", case.expected_output) for case in cases])

    def score(self, case: CaseContext) -> dict[str, float | None]:
        pair = (case.actual_output or "", case.expected_output)
        self._score_pairs([pair])
        scores = self._pair_scores[pair]
        if scores is None:
            raise Unscored(f"test case {case.test_case_key}: the actual or the expected answer has no tokens")
        return dict(scores)
