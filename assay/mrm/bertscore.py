"""BERTScore of many candidates against many references, each distinct text encoded once, with progress.

``BERTScorer.score`` encodes the distinct texts of one call once, but reports nothing while it works; called once
per batch of cases (to report progress), it encodes a source shared by cases of different batches again each
time, and pays its set-up per call: the sample bank's 102 cases took 53 s that way against 13 s in one call.
This module does what one call does, in the same steps, with bert-score's own parts (its embedding of a batch
of texts, its greedy matching, the scorer's model, tokenizer and rescaling baseline): every distinct text is
encoded once, in batches of similar length, with a report after each batch, then every pair is matched.
"""

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from assay.progress import REPORTS, Progress, report

MAX_BATCH = 64
"""Texts encoded together (bert-score's default); fewer when that gives fewer than ``REPORTS`` batches."""
_PAIRS_PER_MATCH = 256


def best_f1(
    scorer: Any, candidates: Sequence[str], references: Sequence[Sequence[str]], progress: Progress | None
) -> list[float]:
    """Each candidate's rescaled F1 against the best of its references, as ``scorer.score(candidates,
    references)`` gives it. Batches depend only on the texts, never on who listens, so the scores do not
    either."""
    import torch
    from bert_score.utils import get_bert_embedding, greedy_cos_idf
    from torch.nn.utils.rnn import pad_sequence

    tokenizer = scorer._tokenizer
    weights: defaultdict[int, float] = defaultdict(lambda: 1.0)
    weights[tokenizer.sep_token_id] = 0.0
    weights[tokenizer.cls_token_id] = 0.0
    distinct = {*candidates, *(text for group in references for text in group)}
    texts = sorted(distinct, key=lambda text: len(text.split(" ")), reverse=True)  # as bert-score batches them
    size = max(1, min(MAX_BATCH, math.ceil(len(texts) / REPORTS)))
    encoded: dict[str, tuple[Any, Any]] = {}
    for start in range(0, len(texts), size):
        batch = texts[start : start + size]
        embeddings, masks, idf = get_bert_embedding(batch, scorer._model, tokenizer, weights, device=scorer.device)
        for index, text in enumerate(batch):
            length = int(masks[index].sum().item())
            encoded[text] = (embeddings[index, :length].cpu(), idf[index, :length].cpu())
        report(progress, min(start + size, len(texts)) / len(texts) * 0.95)

    def padded(batch: list[str]) -> tuple[Any, Any, Any]:
        embeddings, idf = zip(*(encoded[text] for text in batch), strict=True)
        lengths = torch.tensor([embedding.size(0) for embedding in embeddings])
        mask = torch.arange(int(lengths.max())).expand(len(batch), -1) < lengths.unsqueeze(1)
        padded_idf = pad_sequence(list(idf), batch_first=True)
        return pad_sequence(list(embeddings), batch_first=True, padding_value=2.0), mask, padded_idf

    pairs = [(candidate, ref) for candidate, group in zip(candidates, references, strict=True) for ref in group]
    scores = []
    with torch.no_grad():
        for start in range(0, len(pairs), _PAIRS_PER_MATCH):
            chunk = pairs[start : start + _PAIRS_PER_MATCH]
            refs, cands = padded([ref for _, ref in chunk]), padded([cand for cand, _ in chunk])
            precision, recall, f1 = greedy_cos_idf(*refs, *cands, False)
            scores.append(torch.stack((precision, recall, f1), dim=-1))
    flat = torch.cat(scores, dim=0)
    best, start = [], 0
    for group in references:
        best.append(flat[start : start + len(group)].max(dim=0)[0])
        start += len(group)
    rescaled = (torch.stack(best) - scorer.baseline_vals) / (1 - scorer.baseline_vals)
    report(progress, 1.0)
    return [float(value) for value in rescaled[:, 2]]
