"""Perplexity with tiny causal language models built offline from the packaged MiniLM vocabulary.

Two hand-set models make the expected value computable on paper: a GPT-2 whose tied embedding/output matrix is
zero predicts the uniform distribution (perplexity = vocabulary size), and a BERT decoder whose output weights
are zero predicts softmax(bias) at every position whatever the context, so the perplexity of any text is
exp(-mean log softmax(bias)[token]) over exactly the tokens that get predicted.
"""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from assay.evaluators import CaseContext, Unscored, build_evaluator
from assay.evaluators.perplexity import sliding_windows
from transformers import AutoModelForCausalLM, AutoTokenizer, BertConfig, BertLMHeadModel, GPT2Config, GPT2LMHeadModel

from assay.embeddings import resolve_model_path


def minilm_tokenizer(bos: bool) -> AutoTokenizer:
    tokenizer = AutoTokenizer.from_pretrained(str(resolve_model_path("all-MiniLM-L6-v2")))
    if bos:
        tokenizer.bos_token = "[CLS]"
    return tokenizer


def build_gpt2(folder: Path, *, uniform: bool, positions: int = 64) -> str:
    tokenizer = minilm_tokenizer(bos=False)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(
        GPT2Config(vocab_size=tokenizer.vocab_size, n_layer=2, n_head=2, n_embd=64, n_positions=positions)
    )
    if uniform:
        with torch.no_grad():
            model.transformer.wte.weight.zero_()  # tied to lm_head: every logit is 0
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def build_bias_decoder(folder: Path, bias: np.ndarray, *, bos: bool, positions: int = 64) -> str:
    tokenizer = minilm_tokenizer(bos=bos)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=positions,
        is_decoder=True,
    )
    torch.manual_seed(0)
    model = BertLMHeadModel(config)
    with torch.no_grad():
        model.bert.embeddings.word_embeddings.weight.zero_()  # tied to the output layer: logits = bias
        model.cls.predictions.bias.copy_(torch.tensor(bias, dtype=torch.float32))
        model.cls.predictions.decoder.bias.copy_(torch.tensor(bias, dtype=torch.float32))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def bias() -> np.ndarray:
    values = np.zeros(minilm_tokenizer(bos=False).vocab_size)
    values[:2000] = np.linspace(-1.0, 3.0, 2000)
    return values


def hand_perplexity(bias: np.ndarray, tokens: list[int]) -> float:
    shifted = bias.astype(np.float32).astype(np.float64)
    log_probs = shifted - (np.log(np.exp(shifted - shifted.max()).sum()) + shifted.max())
    return math.exp(-float(np.mean([log_probs[token] for token in tokens])))


def perplexity(folder: str, text: str, **parameters: int) -> float:
    value = build_evaluator("perplexity", model=folder, **parameters).score(CaseContext.build(actual_output=text))
    return value["perplexity"]  # type: ignore[return-value]


def test_a_uniform_model_has_the_vocabulary_size_as_perplexity(tmp_path: Path) -> None:
    folder = build_gpt2(tmp_path / "uniform", uniform=True)
    assert build_evaluator("perplexity", model=folder).unavailable_reason() is None
    assert perplexity(folder, "The capital of France is Paris.") == pytest.approx(30522, rel=1e-9)


@pytest.mark.parametrize("bos", [False, True])
def test_perplexity_under_fixed_next_token_probabilities_matches_the_hand_computation(
    tmp_path: Path, bias: np.ndarray, bos: bool
) -> None:
    folder = build_bias_decoder(tmp_path / "bias", bias, bos=bos)
    text = "the cat sat on the mat and the dog sat on the log"
    tokens = minilm_tokenizer(bos=False)(text, add_special_tokens=False)["input_ids"]
    # Without a beginning-of-sequence token the first word has nothing to be predicted from.
    predicted = tokens if bos else tokens[1:]
    assert perplexity(folder, text) == pytest.approx(hand_perplexity(bias, predicted), rel=1e-6)


def test_long_answers_use_sliding_windows_that_count_every_token_once(tmp_path: Path, bias: np.ndarray) -> None:
    folder = build_bias_decoder(tmp_path / "short-context", bias, bos=True, positions=16)
    text = " ".join(f"word{index % 7} and value {index}" for index in range(30))
    tokens = minilm_tokenizer(bos=False)(text, add_special_tokens=False)["input_ids"]
    assert len(tokens) > 100
    expected = hand_perplexity(bias, tokens)
    assert perplexity(folder, text, stride=5) == pytest.approx(expected, rel=1e-6)
    assert perplexity(folder, text, stride=512) == pytest.approx(expected, rel=1e-6)  # clamped to the window


def test_sliding_windows_follow_the_strided_scheme() -> None:
    assert sliding_windows(list(range(10)), 4, 2) == [
        ([0, 1, 2, 3], 4),
        ([2, 3, 4, 5], 2),
        ([4, 5, 6, 7], 2),
        ([6, 7, 8, 9], 2),
    ]
    assert sliding_windows([1, 2, 3], 8, 4) == [([1, 2, 3], 3)]
    # A stride as long as the window would leave each later window's first token without context.
    assert sliding_windows(list(range(6)), 3, 3) == [([0, 1, 2], 3), ([2, 3, 4], 2), ([4, 5], 1)]
    assert sliding_windows([1], 8, 4) == []


def test_short_text_matches_the_model_s_own_language_modelling_loss(tmp_path: Path) -> None:
    folder = build_gpt2(tmp_path / "random", uniform=False)
    text = "Interest is paid monthly into the same account."
    tokenizer = minilm_tokenizer(bos=False)
    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        loss = float(model(input_ids=ids, labels=ids).loss)
    assert perplexity(folder, text) == pytest.approx(math.exp(loss), rel=1e-5)


def test_batched_scores_equal_one_by_one_scores(tmp_path: Path) -> None:
    folder = build_gpt2(tmp_path / "random", uniform=False, positions=32)
    texts = ["Short answer.", "A somewhat longer answer about savings accounts and fees.", "word " * 90]
    cases = [CaseContext.build(test_case_key=str(index), actual_output=text) for index, text in enumerate(texts)]
    together = build_evaluator("perplexity", model=folder, stride=16, batch_size=4)
    together.prepare(cases)
    batched = [together.score(case)["perplexity"] for case in cases]
    alone = [perplexity(folder, text, stride=16) for text in texts]
    assert batched == pytest.approx(alone, rel=1e-5)
    assert len(set(batched)) == 3 and all(value >= 1.0 for value in batched)  # type: ignore[operator]


def test_a_one_token_answer_without_bos_cannot_be_scored(tmp_path: Path) -> None:
    folder = build_gpt2(tmp_path / "random", uniform=False)
    with pytest.raises(Unscored, match="too few tokens"):
        build_evaluator("perplexity", model=folder).score(CaseContext.build(actual_output="hello"))
