"""Build the BERTScore rescaling baseline of the packaged all-MiniLM-L6-v2.

bert-score ships baselines only for hub models; ``rescale_with_baseline=True`` maps a raw score ``s`` to
``(s - b) / (1 - b)``, where ``b`` is the mean score of unrelated text pairs for that model and layer, so that
"as similar as two random sentences" reads 0 instead of MiniLM's ~0.2-0.5. This script estimates ``b`` the
way bert-score's authors did (mean P, R and F of random sentence pairs, every layer at once with
``all_layers=True``), from sentences of the bundled Harbourline Bank sample corpus, and writes the CSV
``LAYER,P,R,F`` with one row per hidden state (0 = embeddings, 1-6 = transformer layers).

Deterministic: documents are read in sorted order, the pairs come from a seeded ``random.Random``, and the
means are taken in float64 and rounded to 6 decimals, so a rerun rewrites the same file: bert-score batches
the distinct sentences in an order that depends on Python's string hashing, which moves float32 results in
the 8th decimal, far below anything that matters to a rescaled score.

Run: .venv/bin/python bench/build_bertscore_baseline.py [--pairs 300] [--seed 13] [--out PATH]
"""

import argparse
import os
import random
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from assay.corpora import load_corpus, sample_data_path
from assay.embeddings import PACKAGED_MODEL, resolve_model_path, split_sentences

OUT = Path(__file__).resolve().parent.parent / "assay" / "data" / "bertscore" / f"{PACKAGED_MODEL}.csv"
MIN_WORDS = 5  # headings and list stubs are not sentences
MINILM_LAYERS = 6


def corpus_sentences() -> list[tuple[str, str]]:
    """(document uri, sentence) for every sentence of at least MIN_WORDS words, in a stable order."""
    corpus = load_corpus(sample_data_path() / "corpus")
    sentences = []
    for document in corpus.documents:
        for block in document.text.split("\n\n"):
            if block.lstrip().startswith("#"):
                continue
            sentences.extend(
                (document.uri, sentence) for sentence in split_sentences(block) if len(sentence.split()) >= MIN_WORDS
            )
    return sentences


def sample_pairs(sentences: list[tuple[str, str]], count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` distinct (candidate, reference) pairs of sentences from different documents: unrelated text."""
    rng = random.Random(seed)
    pairs: dict[tuple[str, str], None] = {}
    while len(pairs) < count:
        (uri_a, first), (uri_b, second) = rng.sample(sentences, 2)
        if uri_a != uri_b:
            pairs[first, second] = None
    return list(pairs)


def layer_means(pairs: list[tuple[str, str]]) -> list[tuple[int, float, float, float]]:
    """Mean raw P, R and F of the pairs at every hidden state of MiniLM."""
    from bert_score import BERTScorer

    scorer = BERTScorer(
        model_type=str(resolve_model_path(PACKAGED_MODEL)),
        num_layers=MINILM_LAYERS,  # all_layers=True without num_layers raises KeyError in bert-score
        all_layers=True,
        lang="en",
        device="cpu",
    )
    precision, recall, f1 = scorer.score([c for c, _ in pairs], [r for _, r in pairs], batch_size=64)
    means = tuple(values.double().mean(dim=1) for values in (precision, recall, f1))  # each (layers,)
    return [(layer, *(round(float(values[layer]), 6) for values in means)) for layer in range(len(means[0]))]


def write_csv(rows: list[tuple[int, float, float, float]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = ["LAYER,P,R,F", *(f"{layer},{p:.6f},{r:.6f},{f:.6f}" for layer, p, r, f in rows)]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.perf_counter()
    sentences = corpus_sentences()
    pairs = sample_pairs(sentences, args.pairs, args.seed)
    rows = layer_means(pairs)
    write_csv(rows, args.out)
    print(f"{len(sentences)} sentences, {len(pairs)} pairs, {len(rows)} layers -> {args.out}")
    for layer, p, r, f in rows:
        print(f"  layer {layer}: P {p:.4f}  R {r:.4f}  F {f:.4f}")
    print(f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
