"""Perplexity: how predictable a causal language model finds each answer, exp(mean negative log-likelihood).

The seed computes it with distilgpt2 (through the lmppl package). Texts longer than the model's context are
scored with overlapping sliding windows: each window re-reads ``window - stride`` (at least one) earlier tokens
as context and scores only the tokens no earlier window scored, so every token is counted exactly once. When the
tokenizer has a beginning-of-sequence token it is prepended (as lm-eval-harness does), so the answer's first
token is predicted too and a one-token answer can still be scored.
"""

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.evaluators._models import (
    AnswerModelEvaluator,
    batched,
    find_model,
    load_once,
    max_input_length,
    model_parameter,
    read_config,
    require_model,
)
from assay.evaluators.base import CaseContext, Unscored, golden_pair, quantity_metric
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

DEFAULT_MODEL = "distilgpt2"
MANUAL_THRESHOLD = 0.5
DEFAULT_THRESHOLD = 100.0
THRESHOLD_NOTE = (
    f"Default threshold {DEFAULT_THRESHOLD:g}, not the manual's {MANUAL_THRESHOLD}: perplexity is exp of a mean "
    "negative log-likelihood, which is never negative, so it is at least 1 and a threshold below 1 would report "
    "every answer as a problem. The scale depends on the language model: calibrate metric_threshold on answers "
    "you judge fluent."
)
# Stands for +infinity: MetricMeta serialises inf as null, which does not validate back.
UNBOUNDED = sys.float_info.max
# Padded tokens per forward pass: the logits tensor is tokens x vocabulary (~0.8 GB for GPT-2 at 4096).
_MAX_BATCH_TOKENS = 4096
_MAX_LOG_PERPLEXITY = math.log(UNBOUNDED)


class CausalLanguageModel:
    """A causal LM and its tokenizer, giving each text's summed negative log-likelihood and token count."""

    def __init__(self, folder: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
        self.model.to(torch.device("cpu")).eval()
        self.window = max_input_length(read_config(folder), self.tokenizer)
        bos = self.tokenizer.bos_token_id
        self.prefix: list[int] = [] if bos is None else [int(bos)]
        self.pad_id = int(self.tokenizer.pad_token_id or 0)

    def token_ids(self, text: str) -> list[int]:
        return self.prefix + list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def negative_log_likelihoods(
        self, texts: Sequence[str], *, stride: int, batch_size: int
    ) -> list[tuple[float, int]]:
        """Per text: (summed NLL in nats, tokens predicted). All texts' windows share batches, shortest first."""
        import torch

        spans = [
            (text_index, ids, scored)
            for text_index, text in enumerate(texts)
            for ids, scored in sliding_windows(self.token_ids(text), self.window, stride)
        ]
        totals = [[0.0, 0] for _ in texts]
        order = sorted(range(len(spans)), key=lambda index: len(spans[index][1]))
        with torch.no_grad():
            for chunk in _token_budget_batches(order, [len(spans[index][1]) for index in order], batch_size):
                width = max(len(spans[index][1]) for index in chunk)
                ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
                mask = torch.zeros((len(chunk), width), dtype=torch.long)
                for row, index in enumerate(chunk):
                    window_ids = spans[index][1]
                    ids[row, : len(window_ids)] = torch.tensor(window_ids, dtype=torch.long)
                    mask[row, : len(window_ids)] = 1
                logits = self.model(input_ids=ids, attention_mask=mask).logits[:, :-1].double()
                targets = ids[:, 1:].unsqueeze(-1)
                log_probs = logits.gather(-1, targets).squeeze(-1) - torch.logsumexp(logits, dim=-1)
                for row, index in enumerate(chunk):
                    text_index, window_ids, scored = spans[index]
                    length = len(window_ids)
                    first = max(length - scored, 1)
                    totals[text_index][0] -= float(log_probs[row, first - 1 : length - 1].sum())
                    totals[text_index][1] += length - first
        return [(float(total), int(count)) for total, count in totals]


def sliding_windows(ids: list[int], window: int, stride: int) -> list[tuple[list[int], int]]:
    """(window ids, how many trailing tokens this window scores), as in Hugging Face's perplexity guide."""
    if len(ids) < 2:
        return []
    window = max(2, window)
    # A window must keep at least one earlier token as context, or its first token would go unpredicted.
    stride = max(1, min(stride, window - 1))
    spans: list[tuple[list[int], int]] = []
    previous_end = 0
    for begin in range(0, len(ids), stride):
        end = min(begin + window, len(ids))
        spans.append((ids[begin:end], end - previous_end))
        previous_end = end
        if end >= len(ids):
            break
    return spans


def _token_budget_batches(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Split length-sorted windows into batches of at most ``batch_size`` rows and ~_MAX_BATCH_TOKENS tokens."""
    batches: list[list[int]] = []
    for rows in batched(list(zip(order, lengths, strict=True)), batch_size):
        current: list[int] = []
        for index, length in rows:
            if current and (len(current) + 1) * length > _MAX_BATCH_TOKENS:
                batches.append(current)
                current = []
            current.append(index)
        batches.append(current)
    return batches


@register
@dataclass
class Perplexity(AnswerModelEvaluator):
    spec = EvaluatorSpec(
        id="perplexity",
        display_name="Perplexity",
        description=(
            "How well a causal language model (default distilgpt2) predicts each next token of the actual "
            "answer: perplexity = exp(mean cross-entropy), with sliding windows over long answers. Lower means "
            "more fluent, predictable text. Weights are read from a local folder only. "
            f"{THRESHOLD_NOTE}"
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Conceptual Soundness"],
        required_inputs=["actual_output"],
        needs=["model_weights"],
        metrics=[
            quantity_metric(
                "perplexity",
                "Perplexity",
                "exp(mean negative log-likelihood per token) of the answer under the language model; the scale "
                "depends on the model (1 = perfectly predicted, never lower).",
                ceiling=UNBOUNDED,
                threshold=DEFAULT_THRESHOLD,
                primary=True,
            )
        ],
        keywords=["perplexity", "fluency", "language-model", "distilgpt2"],
    )

    golden = golden_pair(
        "The United States of America is a country in North America. Its capital is Washington.",
        "Quokka seventeen the of blanket purple zxq vroom sideways, 8 ## nonetheless fizz!",
    )

    model: str = model_parameter(DEFAULT_MODEL, "causal language model")
    stride: int = field(
        default=512,
        metadata={"description": "Tokens each sliding window advances over answers longer than the model's context."},
    )
    batch_size: int = field(default=8, metadata={"description": "Windows scored per forward pass (at most)."})

    def unavailable_reason(self) -> str | None:
        return find_model("perplexity", self.model)[1]

    def score_answers(self, texts: list[str]) -> list[tuple[float, int]]:
        language_model = load_once("causal-lm", require_model("perplexity", self.model), CausalLanguageModel)
        return language_model.negative_log_likelihoods(texts, stride=self.stride, batch_size=self.batch_size)

    def score(self, case: CaseContext) -> dict[str, float | None]:
        total, count = self.answer_result(case)
        if count == 0:
            raise Unscored(f"test case {case.test_case_key}: the answer has too few tokens to predict any")
        mean = total / count
        if mean > _MAX_LOG_PERPLEXITY:
            raise Unscored(f"test case {case.test_case_key}: perplexity exp({mean:.1f}) overflows a float")
        return {"perplexity": round(math.exp(mean), 6)}
