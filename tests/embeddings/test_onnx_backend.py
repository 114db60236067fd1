"""The ONNX backends agree with the torch reference on a handful of texts (skipped without onnxruntime)."""

from pathlib import Path

import numpy as np
import pytest

from assay.embeddings import EmbeddingEngine

pytest.importorskip("onnxruntime")

TEXTS = [
    "How do I report a lost card?",
    "Call the 24-hour line on 0800 123 456 and we will cancel the card and send a new one within five days.",
    "Mortgage rates",
    "The Easy Saver account pays 3.25% AER variable on balances up to £85,000, with interest paid monthly. "
    "Withdrawals are unlimited and free, and the account can be opened online in about ten minutes.",
]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.mark.parametrize(("backend", "tolerance"), [("onnx", 1e-4), ("onnx-int8", 0.05)])
def test_backend_agrees_with_torch(engine: EmbeddingEngine, export_dir: Path, backend: str, tolerance: float) -> None:
    reference = engine.embed(TEXTS)
    vectors = EmbeddingEngine(backend=backend, export_dir=export_dir).embed(TEXTS)
    assert vectors.shape == reference.shape
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert float(np.max(1 - np.sum(vectors * reference, axis=1))) <= tolerance
    similarity_gap = np.abs(vectors @ vectors.T - reference @ reference.T)
    assert float(similarity_gap.max()) <= max(tolerance, 1e-4) * 2
