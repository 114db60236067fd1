"""Local model weights for the model-based evaluators: found offline, loaded once, run in batches on CPU.

Assay never downloads weights at run time. A configured model is either a local folder or a hub-style name
(``unitary/toxic-bert``) looked up in ``$ASSAY_MODELS_DIR/<name>`` (default ``$ASSAY_HOME/models``, where
``ASSAY_HOME`` defaults to ``.assay``) and then in the Hugging Face cache with ``local_files_only``. When none
of these holds the weights, ``find_model`` says which model was looked for and where, so every case
is left unscored with that reason rather than given an invented score.

Heavy libraries are imported inside functions so listing the evaluator catalogue stays fast.
"""

import json
import os
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from assay.evaluators.base import CaseContext, Evaluator, Unscored

MODELS_DIR_ENV = "ASSAY_MODELS_DIR"
_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_FOREIGN_WEIGHT_FILES = ("tf_model.h5", "flax_model.msgpack")
_FALLBACK_MAX_LENGTH = 512

T = TypeVar("T")
_loaded: dict[tuple[str, Path], Any] = {}
_load_lock = threading.Lock()


def models_dir() -> Path:
    """Where hub-style model names are looked up: settings ``models_dir`` (``$ASSAY_MODELS_DIR`` or
    ``models_dir`` in assay.toml), else ``<home>/models``."""
    from assay.config import load_settings

    return load_settings().models_path.expanduser()


def _hub_cache_snapshot(name: str) -> Path | None:
    """The cached snapshot of a hub repository, without touching the network; None when not cached."""
    if Path(name).is_absolute() or name.count("/") > 1:
        return None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=name, local_files_only=True))
    except Exception:  # not cached, or not a valid repository id: either way there is nothing local
        return None


def candidate_folders(name: str) -> list[Path]:
    """Every folder a model name or path may resolve to, in the order they are tried."""
    folders = [Path(name).expanduser()]
    if not Path(name).is_absolute():
        folders.append(models_dir() / name)
    return folders


def locate_model(name: str) -> Path | None:
    """The local folder holding the model's ``config.json``; never a download."""
    for folder in candidate_folders(name):
        if (folder / "config.json").is_file():
            return folder
    snapshot = _hub_cache_snapshot(name)
    if snapshot is not None and (snapshot / "config.json").is_file():
        return snapshot
    return None


def find_model(purpose: str, name: str) -> tuple[Path | None, str | None]:
    """The usable local folder for ``name``, or None and why not (naming every place searched)."""
    folder = locate_model(name)
    if folder is None:
        places = ", ".join(str(path) for path in candidate_folders(name))
        return None, (
            f"{purpose} model {name!r} is not on this machine (looked for a folder with config.json at {places} "
            f"and in the Hugging Face cache, offline); Assay never downloads weights: put the model folder "
            f"under {models_dir()} (set {MODELS_DIR_ENV}) or set the evaluator's model parameter to a local folder"
        )
    files = {path.name for path in folder.iterdir()}
    if files.isdisjoint(_WEIGHT_FILES):
        foreign = sorted(files.intersection(_FOREIGN_WEIGHT_FILES))
        if foreign:
            return None, (
                f"{purpose} model folder {folder} holds only {', '.join(foreign)} (TensorFlow/Flax weights); convert "
                f"it once to PyTorch, e.g. AutoModelForSequenceClassification.from_pretrained(folder, from_tf=True)"
                f".save_pretrained(folder), with TensorFlow installed"
            )
        return None, f"{purpose} model folder {folder} has a config.json but no weights ({', '.join(_WEIGHT_FILES)})"
    if "auto_map" in read_config(folder):
        return None, (
            f"{purpose} model folder {folder} needs its own Python code (config.json has auto_map); Assay does not "
            "run code shipped with model weights"
        )
    return folder, None


def label_problem(purpose: str, name: str, has_label: Callable[[list[str]], bool], wanted: str) -> str | None:
    """Why the classifier ``find_model`` finds for ``purpose`` cannot serve (reading its config.json only): it is
    not found, or ``has_label`` finds no ``wanted`` label among its labels; None when it can."""
    folder, reason = find_model(purpose, name)
    if folder is None:
        return reason
    labels = label_names(read_config(folder))
    if not has_label(labels):
        return f"{purpose} model {name!r} has no {wanted} among its labels {labels}"
    return None


def require_model(purpose: str, name: str) -> Path:
    """The model folder, or ``Unscored`` with the reason it cannot be used (for callers that skipped the check)."""
    folder, reason = find_model(purpose, name)
    if folder is None:
        raise Unscored(reason or f"{purpose} model {name!r} is not on this machine")
    return folder


def model_parameter(default: str, what: str) -> Any:
    """The ``model`` parameter of an evaluator reading local weights (see ``find_model``); ``what`` says what the
    model is, in its description."""
    return field(
        default=default,
        metadata={
            "description": f"Local folder of the {what}, or its name looked up under $ASSAY_MODELS_DIR and the "
            "offline Hugging Face cache; never downloaded."
        },
    )


def read_config(folder: Path) -> dict[str, Any]:
    """The model's ``config.json`` as a dict: cheap label checks without importing transformers."""
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def label_names(config: dict[str, Any]) -> list[str]:
    """Output labels in logit order, from the config's ``id2label``.

    transformers leaves ``id2label`` out of a saved config when it holds its default two labels, so an absent
    mapping means ``LABEL_0``, ``LABEL_1`` (or ``num_labels`` of them), as transformers itself reads it.
    """
    id2label = config.get("id2label")
    if not id2label:
        return [f"LABEL_{index}" for index in range(int(config.get("num_labels", 2)))]
    return [str(id2label[key]) for key in sorted(id2label, key=int)]


def normalise_label(label: str) -> str:
    return label.strip().lower().replace("-", "_").replace(" ", "_")


def max_input_length(config: dict[str, Any], tokenizer: Any) -> int:
    """The longest input the model takes: the tokenizer's limit capped by the model's position table.

    Tokenizers saved without a limit report a huge ``model_max_length``; the config's position count bounds it.
    """
    limits = [config.get(key) for key in ("max_position_embeddings", "n_positions")]
    known = [int(limit) for limit in limits if isinstance(limit, int) and limit > 0]
    tokenizer_limit = int(getattr(tokenizer, "model_max_length", 0) or 0)
    if 0 < tokenizer_limit < 1_000_000:
        known.append(tokenizer_limit)
    return min(known) if known else _FALLBACK_MAX_LENGTH


def offline_environment() -> None:
    """Forbid hub access and progress bars before transformers is imported anywhere in this process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def load_once(kind: str, folder: Path, loader: Callable[[Path], T]) -> T:
    """One loaded model per (kind, folder) per process, however many evaluators or runs use it.

    A folder that cannot be loaded raises ``Unscored``, so the run records the reason on every case.
    """
    key = (kind, folder.resolve())
    with _load_lock:
        if key not in _loaded:
            offline_environment()
            try:
                _loaded[key] = loader(folder)
            except Exception as error:
                reason = f"{kind} model in {folder} could not be loaded: {type(error).__name__}: {error}"
                raise Unscored(reason) from error
        return _loaded[key]


class SequenceClassifier:
    """A transformers sequence classifier with its tokenizer, scoring texts or text pairs in batches."""

    def __init__(self, folder: Path) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True)
        self.model.to(torch.device("cpu")).eval()
        self.labels = [str(self.model.config.id2label[index]) for index in range(self.model.config.num_labels)]
        self.max_length = max_input_length(read_config(folder), self.tokenizer)

    def probabilities(
        self,
        texts: Sequence[str],
        pairs_with: Sequence[str] | None = None,
        *,
        activation: Literal["sigmoid", "softmax"],
        batch_size: int,
    ) -> np.ndarray:
        """One row of label probabilities per input: ``sigmoid`` for multi-label heads, ``softmax`` otherwise.

        Inputs are sorted by length so each batch pads little; rows come back in input order.
        """
        import torch

        partners = pairs_with if pairs_with is not None else [""] * len(texts)
        lengths = [len(text) + len(partner) for text, partner in zip(texts, partners, strict=True)]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        rows = np.zeros((len(texts), len(self.labels)), dtype=np.float64)
        with torch.no_grad():
            for chunk in batched(order, batch_size):
                first = [texts[index] for index in chunk]
                second = [pairs_with[index] for index in chunk] if pairs_with is not None else None
                encoded = self.tokenizer(
                    first, second, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
                )
                logits = self.model(**encoded).logits.double()
                scores = torch.sigmoid(logits) if activation == "sigmoid" else torch.softmax(logits, dim=-1)
                rows[chunk] = scores.numpy()
        return rows


def sequence_classifier(folder: Path) -> SequenceClassifier:
    return load_once("sequence-classification", folder, SequenceClassifier)


def load_classifier(purpose: str, name: str) -> SequenceClassifier:
    """The sequence classifier ``require_model`` finds for ``purpose``, loaded once."""
    return sequence_classifier(require_model(purpose, name))


def batched(items: Sequence[T], size: int) -> Iterator[list[T]]:
    step = max(1, int(size))
    for start in range(0, len(items), step):
        yield list(items[start : start + step])


class AnswerModelEvaluator(Evaluator):
    """An evaluator running local model weights on each distinct actual answer once (toxicity, fairness bias,
    perplexity): ``prepare`` runs ``score_answers`` on the answers not scored yet, in one batch, and
    ``answer_result`` gives a case's result, scoring an answer that was not prepared on the spot. A blank
    answer leaves the case unscored."""

    def __post_init__(self) -> None:
        self._scored: dict[str, Any] = {}

    @abstractmethod
    def score_answers(self, texts: list[str]) -> Sequence[Any]:
        """The model's result for each of ``texts`` (distinct, stripped, not blank), in order."""

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        distinct = dict.fromkeys(case.actual_output.strip() for case in cases if case.actual_output)
        texts = [text for text in distinct if text and text not in self._scored]
        if texts:
            self._scored.update(zip(texts, self.score_answers(texts), strict=True))

    def answer_result(self, case: CaseContext) -> Any:
        text = (case.actual_output or "").strip()
        if not text:
            raise Unscored(f"test case {case.test_case_key}: the actual answer is blank")
        if text not in self._scored:
            self.prepare([case])
        return self._scored[text]
