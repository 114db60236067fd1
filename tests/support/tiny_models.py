"""Tiny sequence classifiers built offline, for tests of the model-based evaluators' loading and scoring code.

A 2-layer BERT with the packaged MiniLM vocabulary loads in well under a second. Where the exact outcome must
be known, the classification head's weights are zeroed and its bias set by hand, so every input's logits are
the bias and the expected probabilities follow from sigmoid/softmax on paper.
"""

from pathlib import Path

import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from assay.embeddings import resolve_model_path


def build_classifier(
    folder: Path,
    labels: list[str],
    *,
    bias: list[float] | None = None,
    positions: int = 64,
    seed: int = 0,
    initializer_range: float = 0.02,
) -> str:
    """Save a tiny BERT sequence classifier; with ``bias`` its head ignores the text and outputs the bias."""
    tokenizer = AutoTokenizer.from_pretrained(str(resolve_model_path("all-MiniLM-L6-v2")))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=positions,
        id2label=dict(enumerate(labels)),
        label2id={label: index for index, label in enumerate(labels)},
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
