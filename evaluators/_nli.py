"""One NLI backend for every evaluator that asks "does this passage entail this sentence?".

Summarization faithfulness, hallucination and groundedness all need the same thing from a local
cross-encoder: a premise/hypothesis pair in, entailment (and, when the model has one, contradiction)
probability out. Keeping the loading, the label mapping and the long-premise handling here means a model that
works for one of them works identically for all, and every score names the model that produced it
(``details["backend"] == backend.name``, e.g. ``"nli:deberta-v3-nli"``).

Which model. Evaluators with a ``model`` parameter pass it to ``NliBackend.load``; evaluators that only use
NLI when one is present (groundedness) ask ``configured_nli_model()``: ``$ASSAY_NLI_MODEL`` (a folder, or a
name looked up under ``$ASSAY_MODELS_DIR`` like every model), else the folder ``<models dir>/nli`` when it
exists, else None. Weights are never downloaded (see ``evaluators._models``).

Labels come from the model's ``config.json`` ``id2label``, matched case-insensitively: ENTAILMENT or
VitaminC's SUPPORTS, CONTRADICTION or REFUTES. A two-label model (entailment / not entailment) has no
contradiction column (None). A model without an entailment label is not an NLI model and is reported
unavailable, never guessed at; a one-output consistency head (Vectara's HHEM) counts only where the caller
asks for it, since a one-output relevance reranker would otherwise pass for NLI.

Long premises. NLI models are trained on short premises, and truncation would silently drop the evidence at
the end of a long context. A pair that overflows the model's input is split into premise windows that
overlap by ``stride`` tokens, each scored with the whole hypothesis; the pair's entailment is the max over
windows (the evidence is somewhere) and so is its contradiction (a contradiction anywhere counts).

Heavy libraries are imported inside functions so the CLI starts fast.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from assay.evaluators._models import (
    SequenceClassifier,
    batched,
    find_model,
    label_names,
    models_dir,
    normalise_label,
    read_config,
    sequence_classifier,
)
from assay.evaluators.base import Unscored

NLI_MODEL_ENV = "ASSAY_NLI_MODEL"
DEFAULT_FOLDER = "nli"
DEFAULT_BATCH_SIZE = 16
DEFAULT_STRIDE = 64
_ENTAILMENT_STEMS = ("entail", "support")
_CONTRADICTION_STEMS = ("contradict", "refute")
_NEGATIONS = ("not", "non", "un")


class NliUnavailable(Unscored):
    """Why no NLI model can score here, as one sentence; an ``Unscored``, so a run records it on every case."""

    def __init__(self, reason: str) -> None:
        super().__init__(" ".join(reason.split()))


@dataclass(frozen=True)
class PairEntailment:
    """One (premise, hypothesis) pair's probabilities, each the max over premise windows."""

    entailment: float
    contradiction: float | None


@dataclass(frozen=True)
class SentenceEntailment:
    """One answer sentence's best support: ``passage`` is the index of the passage that entails it most."""

    sentence: str
    entailment: float
    contradiction: float | None
    passage: int


def configured_nli_model() -> str | None:
    """The NLI model this machine is set up with (``$ASSAY_NLI_MODEL``, else ``<models dir>/nli``), or None."""
    chosen = os.environ.get(NLI_MODEL_ENV, "").strip()
    if chosen:
        return chosen
    default = models_dir() / DEFAULT_FOLDER
    return str(default) if default.is_dir() else None


def _column(names: list[str], stems: tuple[str, ...]) -> int | None:
    return next(
        (
            index
            for index, name in enumerate(names)
            if any(stem in name for stem in stems) and not name.startswith(_NEGATIONS)
        ),
        None,
    )


def label_columns(labels: Sequence[str], entailment_label: str | None = None) -> tuple[int | None, int | None]:
    """(entailment, contradiction) output indexes: the named entailment label when given, else the label called
    entailment (or SUPPORTS); contradiction (or REFUTES) when the model has one."""
    names = [normalise_label(label) for label in labels]
    if entailment_label:
        wanted = normalise_label(entailment_label)
        entailment = next((index for index, name in enumerate(names) if name == wanted), None)
    else:
        entailment = _column(names, _ENTAILMENT_STEMS)
    return entailment, _column(names, _CONTRADICTION_STEMS)


def _checked_folder(
    name_or_path: str | None, purpose: str, entailment_label: str | None, single_output: bool
) -> tuple[Path | None, str | None]:
    """The model folder, or None and why it cannot serve as NLI here, reading config.json only."""
    if not name_or_path:
        return None, (
            f"no {purpose} model is configured: set {NLI_MODEL_ENV} to a local model folder or to a name under "
            f"{models_dir()}, or put the model in {models_dir() / DEFAULT_FOLDER}"
        )
    folder, reason = find_model(purpose, name_or_path)
    if folder is None:
        return None, reason
    labels = label_names(read_config(folder))
    if len(labels) == 1 and single_output:
        return folder, None
    if len(labels) > 1 and label_columns(labels, entailment_label)[0] is not None:
        return folder, None
    wanted = f"label {entailment_label!r}" if entailment_label else "entailment label (ENTAILMENT or SUPPORTS)"
    config = folder / "config.json"
    return None, f"{purpose} model {name_or_path!r} has no {wanted} among its labels {labels} in {config}"


def nli_unavailable_reason(
    name_or_path: str | None, *, purpose: str = "NLI", entailment_label: str | None = None, single_output: bool = False
) -> str | None:
    """Why ``NliBackend.load`` would fail (not configured, folder missing, no weights, no entailment label), as
    one sentence; None when it should load. Cheap: nothing heavy is imported."""
    reason = _checked_folder(name_or_path, purpose, entailment_label, single_output)[1]
    return None if reason is None else " ".join(reason.split())


def backend_name(folder: Path) -> str:
    """``nli:<model folder name>``; a Hugging Face cache snapshot is named by its repository, not its commit."""
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        return "nli:" + folder.parent.parent.name.removeprefix("models--").replace("--", "/")
    return f"nli:{folder.name}"


def answer_entailment(sentences: Sequence[SentenceEntailment]) -> float | None:
    """An answer is as supported as its least supported sentence; None for an answer with no sentences."""
    return min((sentence.entailment for sentence in sentences), default=None)


class NliBackend:
    """A loaded NLI cross-encoder that scores (premise, hypothesis) pairs in batches, remembering each pair."""

    def __init__(
        self,
        classifier: SequenceClassifier,
        name: str,
        *,
        entailment_label: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        stride: int = DEFAULT_STRIDE,
    ) -> None:
        self.name = name
        self.labels = list(classifier.labels)
        self.batch_size = batch_size
        self.stride = stride
        self._classifier = classifier
        entailment, self._contradiction = label_columns(self.labels, entailment_label)
        if len(self.labels) == 1:
            entailment = 0
        if entailment is None:
            raise NliUnavailable(f"NLI model {name} has no entailment label among its labels {self.labels}")
        self._entailment: int = entailment
        self._scored: dict[tuple[str, str], PairEntailment] = {}

    @classmethod
    def load(
        cls,
        name_or_path: str | None,
        *,
        purpose: str = "NLI",
        entailment_label: str | None = None,
        single_output: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        stride: int = DEFAULT_STRIDE,
    ) -> "NliBackend":
        """The backend for a model folder or name; raises ``NliUnavailable`` with a one-line reason.

        ``single_output`` accepts a one-output consistency head (HHEM), read through a sigmoid.
        """
        folder, reason = _checked_folder(name_or_path, purpose, entailment_label, single_output)
        if folder is None:
            raise NliUnavailable(reason or f"{purpose} model {name_or_path!r} is unavailable")
        try:
            classifier = sequence_classifier(folder)
        except Unscored as error:
            raise NliUnavailable(error.reason) from error
        if not getattr(classifier.tokenizer, "is_fast", False):
            raise NliUnavailable(
                f"{purpose} model folder {folder} has no fast tokenizer (tokenizer.json), which premise windows need"
            )
        return cls(
            classifier, backend_name(folder), entailment_label=entailment_label, batch_size=batch_size, stride=stride
        )

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[PairEntailment]:
        """Scores in input order; identical pairs, and pairs scored before, run through the model once."""
        todo = [pair for pair in dict.fromkeys(pairs) if pair not in self._scored]
        if todo:
            probabilities, owners = self._window_probabilities(todo)
            entailment = np.zeros(len(todo))
            np.maximum.at(entailment, owners, probabilities[:, self._entailment])
            contradiction: list[float | None] = [None] * len(todo)
            if self._contradiction is not None:
                most = np.zeros(len(todo))
                np.maximum.at(most, owners, probabilities[:, self._contradiction])
                contradiction = [float(value) for value in most]
            for index, pair in enumerate(todo):
                self._scored[pair] = PairEntailment(float(entailment[index]), contradiction[index])
        return [self._scored[pair] for pair in pairs]

    def support_many(self, items: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[list[SentenceEntailment]]:
        """``support`` for many (answer sentences, passages) items in one batched, deduplicated model pass."""
        pairs = [(passage, sentence) for sentences, passages in items for sentence in sentences for passage in passages]
        scores = iter(self.score_pairs(pairs))
        results = []
        for sentences, passages in items:
            if sentences and not passages:
                raise ValueError("NLI support needs at least one passage to check the answer sentences against")
            results.append([self._best(sentence, [next(scores) for _ in passages]) for sentence in sentences])
        return results

    def support(self, answer_sentences: Sequence[str], passages: Sequence[str]) -> list[SentenceEntailment]:
        """Per answer sentence, its max entailment over passages (and windows), the passage that gave it, and its
        max contradiction."""
        return self.support_many([(answer_sentences, passages)])[0]

    @staticmethod
    def _best(sentence: str, row: list[PairEntailment]) -> SentenceEntailment:
        best = max(range(len(row)), key=lambda index: row[index].entailment)
        contradictions = [score.contradiction for score in row if score.contradiction is not None]
        return SentenceEntailment(sentence, row[best].entailment, max(contradictions, default=None), best)

    def _window_probabilities(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, list[int]]:
        """Label probabilities for every premise window, and the pair each window belongs to.

        Windows are sorted by length so each batch pads little; ``batch_size`` never changes a result.
        """
        import torch

        tokenizer, model = self._classifier.tokenizer, self._classifier.model
        max_length = self._classifier.max_length
        room = max_length - tokenizer.num_special_tokens_to_add(pair=True)
        premises = [premise for premise, _ in pairs]
        encoded = tokenizer(
            premises,
            self._fitted_hypotheses(pairs, room),
            truncation="only_first",
            max_length=max_length,
            stride=max(0, min(self.stride, room // 4)),
            return_overflowing_tokens=True,
        )
        owners = list(encoded["overflow_to_sample_mapping"])
        keys = [key for key in tokenizer.model_input_names if key in encoded]
        features = [{key: encoded[key][window] for key in keys} for window in range(len(owners))]
        order = sorted(range(len(features)), key=lambda window: len(features[window]["input_ids"]))
        probabilities = np.zeros((len(features), len(self.labels)), dtype=np.float64)
        with torch.inference_mode():
            for chunk in batched(order, self.batch_size):
                batch = tokenizer.pad([features[window] for window in chunk], return_tensors="pt")
                logits = model(**batch).logits.double()
                scores = torch.sigmoid(logits) if len(self.labels) == 1 else torch.softmax(logits, dim=-1)
                probabilities[chunk] = scores.numpy()
        return probabilities, owners

    def _fitted_hypotheses(self, pairs: list[tuple[str, str]], room: int) -> list[str]:
        """Hypotheses cut to half the model's input where a pair overflows it and the hypothesis alone would
        leave less than half for the premise, so every window still holds premise text. Answer sentences never
        come near this; a very long whole answer loses its tail."""
        tokenizer = self._classifier.tokenizer
        premise_ids = tokenizer([premise for premise, _ in pairs], add_special_tokens=False)["input_ids"]
        hypotheses = [hypothesis for _, hypothesis in pairs]
        encoded = tokenizer(hypotheses, add_special_tokens=False, return_offsets_mapping=True)
        fitted = []
        for hypothesis, premise, ids, offsets in zip(
            hypotheses, premise_ids, encoded["input_ids"], encoded["offset_mapping"], strict=True
        ):
            overflows = len(premise) + len(ids) > room and len(ids) > room // 2
            fitted.append(hypothesis[: offsets[room // 2 - 1][1]] if overflows else hypothesis)
        return fitted
