"""SummaC Conv (Laban et al., "SummaC: Re-Visiting NLI-based Models for Inconsistency Detection in
Summarization", 2022): faithfulness from the whole column of entailment probabilities, not only its maximum.

For each summary sentence (the first ``MAX_ROWS``), the entailment probabilities given every source sentence
are binned into a histogram; a learned linear layer (the paper's convolution over the histogram) turns each
histogram into a sentence score, the scores are averaged, and a final learned layer gives the probability that
the summary is consistent. Both layers are trained: the numbers come from the SummaC release (for the default
NLI model tals/albert-xlarge-vitaminc-mnli, "vitc", the file summac_conv_vitc_sent_perc_e.bin: percentile
bins, entailment only). Without such a file there is no SummaC Conv score, and none is invented.

The entailment matrix itself comes from the shared NLI backend (``evaluators._nli``), so SummaC ZS and Conv
read the same probabilities.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_ROWS = 10
"""Summary sentences the layer reads (the release's n_rows); later sentences are not scored, as in SummaC."""
PERCENTILE_BINS = (
    0.0, 0.01, 0.02, 0.03, 0.04, 0.07, 0.13, 0.37, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.955, 0.96, 0.965, 0.97,
    0.975, 0.98, 0.985, 0.99, 0.995, 1.0,
)  # fmt: skip
LAYER_KEYS = ("mlp.weight", "mlp.bias", "layer_final.weight", "layer_final.bias")


class ConvWeightsProblem(ValueError):
    """A weights file that is missing, unreadable or not SummaC Conv's layers for one NLI model."""


def bin_edges(histogram_size: int) -> np.ndarray:
    """SummaC's bins for a histogram of this size: its 23 percentile bins, else ``n`` even bins over [0, 1]."""
    if histogram_size == len(PERCENTILE_BINS) - 1:
        return np.array(PERCENTILE_BINS)
    return np.array([*np.arange(0, 1, 1 / histogram_size), 1.0])


@dataclass(frozen=True)
class ConvLayers:
    """The two trained layers: per-sentence histogram -> score (``row_weight``, ``row_bias``), then the mean
    score (repeated three times, as the release's "mean" aggregation feeds it) -> two logits."""

    row_weight: np.ndarray
    row_bias: float
    final_weight: np.ndarray
    final_bias: np.ndarray

    @classmethod
    def load(cls, path: str) -> "ConvLayers":
        """The layers from a PyTorch state dict (the SummaC release's .bin); tensors only, no code is run."""
        if not Path(path).is_file():
            raise ConvWeightsProblem(f"SummaC Conv weights file {path!r} does not exist")
        import torch

        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as error:  # any unreadable file: pickle, zip or tensor errors
            raise ConvWeightsProblem(f"SummaC Conv weights file {path!r} cannot be read: {error}") from error
        missing = [key for key in LAYER_KEYS if key not in state]
        if missing:
            raise ConvWeightsProblem(f"SummaC Conv weights file {path!r} lacks {', '.join(missing)}")
        row_weight, row_bias, final_weight, final_bias = (state[key].double().numpy() for key in LAYER_KEYS)
        if row_weight.shape[0] != 1 or row_bias.shape != (1,) or final_weight.shape != (2, 3):
            raise ConvWeightsProblem(
                f"SummaC Conv weights file {path!r} has layers of shapes {row_weight.shape} and "
                f"{final_weight.shape}, expected (1, bins) and (2, 3): one NLI model, entailment only"
            )
        return cls(row_weight[0], float(row_bias[0]), final_weight, final_bias)

    def histograms(self, entailment: np.ndarray) -> np.ndarray:
        """(MAX_ROWS, bins): row i is the histogram of summary sentence i's entailment given each source
        sentence (``entailment`` is source x summary); rows past the summary's sentences stay zero."""
        edges = bin_edges(len(self.row_weight))
        rows = np.zeros((MAX_ROWS, len(edges) - 1))
        for column in range(min(entailment.shape[1], MAX_ROWS)):
            rows[column], _ = np.histogram(entailment[:, column], bins=edges, range=(0.0, 1.0))
        return rows

    def consistency(self, entailment: np.ndarray) -> float:
        """The probability that the summary is consistent with the source (the release's ``score``)."""
        rows = self.histograms(entailment)
        used = int((rows.sum(axis=1) != 0).sum())
        mean = float((rows[:used] @ self.row_weight + self.row_bias).mean()) if used else 0.0
        logits = self.final_weight @ np.array([mean, mean, mean]) + self.final_bias
        shifted = np.exp(logits - logits.max())
        return float(shifted[1] / shifted.sum())
