"""Encoder backends: the sentence-transformers model on torch (the reference) or ONNX Runtime (fp32 / int8).

The ONNX graph is converted locally, once, from the same packaged weights into the Assay cache folder (never
downloaded), and run with the model's own ``tokenizer.json``, mean pooling and L2 normalisation, which is
exactly what the sentence-transformers pipeline of MiniLM does. ``bench/encoder.py`` measures speed and
cosine agreement with torch; a backend is only ever used when selected, and selecting one whose runtime is
not installed is an error, never a silent fall back to torch.
"""

import fcntl
import hashlib
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

Backend = Literal["torch", "onnx", "onnx-int8"]
BACKENDS: tuple[str, ...] = ("torch", "onnx", "onnx-int8")


class Encoder(Protocol):
    def encode(self, sentences: list[str], **kwargs: object) -> np.ndarray: ...


class BackendUnavailableError(RuntimeError):
    """The selected embedding backend cannot run here (its runtime is not installed)."""


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def load_torch_encoder(model_path: Path) -> Encoder:
    _offline()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_path), device="cpu")


def require_onnxruntime(backend: str) -> None:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise BackendUnavailableError(
            f"embedding backend {backend!r} (ASSAY_EMBEDDING_BACKEND) needs the onnxruntime package, which is "
            "not installed: pip install onnxruntime onnx, or use the default backend 'torch'"
        ) from None


def _fingerprint(model_path: Path) -> str:
    """Identify the weights so a changed model folder gets a fresh conversion."""
    digest = hashlib.sha256()
    for name in ("config.json", "tokenizer.json"):
        digest.update((model_path / name).read_bytes())
    for weights in sorted(model_path.glob("*.safetensors")) + sorted(model_path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size}:{weights.stat().st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _export_fp32(model_path: Path, target: Path) -> None:
    _offline()
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_path)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = tuple(torch.ones(2, 8, dtype=torch.long) for _ in names)
    with warnings.catch_warnings():  # tracer chatter about shapes that are dynamic axes here
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(),
            sample,
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )


def onnx_model_file(model_path: Path, export_dir: Path, backend: str) -> Path:
    """The converted graph for this model and backend, converting it once under a file lock."""
    folder = export_dir / f"{model_path.name}-{_fingerprint(model_path)}"
    folder.mkdir(parents=True, exist_ok=True)
    fp32, int8 = folder / "model.onnx", folder / "model-int8.onnx"
    wanted = int8 if backend == "onnx-int8" else fp32
    if wanted.exists():
        return wanted
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not fp32.exists():
            partial = folder / "model.onnx.partial"
            _export_fp32(model_path, partial)
            partial.replace(fp32)
        if backend == "onnx-int8" and not int8.exists():
            from onnxruntime.quantization import QuantType, quantize_dynamic

            partial = folder / "model-int8.partial.onnx"
            quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8)
            partial.replace(int8)
    return wanted


class OnnxEncoder:
    """Sentence embeddings from an ONNX graph: tokenise, run, mean-pool over real tokens, normalise."""

    def __init__(self, model_file: Path, model_path: Path, *, threads: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self._inputs = {item.name for item in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=_max_tokens(model_path))

    def encode(self, sentences: list[str], batch_size: int = 64, **_: object) -> np.ndarray:
        """Same contract as ``SentenceTransformer.encode(normalize_embeddings=True)``; sorted by length so a
        batch pads to similar lengths, then put back in input order."""
        encodings = self.tokenizer.encode_batch(list(sentences))
        order = sorted(range(len(encodings)), key=lambda index: -len(encodings[index].ids))
        output = np.zeros((len(encodings), 0), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            picked = order[start : start + batch_size]
            width = max(len(encodings[index].ids) for index in picked)
            ids = np.zeros((len(picked), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, index in enumerate(picked):
                encoding = encodings[index]
                ids[row, : len(encoding.ids)] = encoding.ids
                mask[row, : len(encoding.ids)] = 1
                types[row, : len(encoding.ids)] = encoding.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            if output.shape[1] == 0:
                output = np.zeros((len(encodings), pooled.shape[1]), dtype=np.float32)
            output[picked] = pooled
        return output


def _max_tokens(model_path: Path) -> int:
    config = model_path / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256


def encoder_loader(backend: str, export_dir: Path | None, resolve: Callable[[str], Path]) -> Callable[[str], Encoder]:
    """The function that loads a model name into an encoder for this backend (checked now, loaded later)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r} (ASSAY_EMBEDDING_BACKEND): expected one of {BACKENDS}")
    if backend == "torch":
        return lambda model: load_torch_encoder(resolve(model))
    require_onnxruntime(backend)
    if export_dir is None:
        raise ValueError(f"embedding backend {backend!r} needs a cache folder to keep its converted model in")

    def load(model: str) -> Encoder:
        path = resolve(model)
        return OnnxEncoder(onnx_model_file(path, export_dir, backend), path)

    return load
