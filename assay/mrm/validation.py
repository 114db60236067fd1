"""Step 3 of the MRM workflow (seed 002 "Test validation"): is each generated case faithful to the chunks it
was generated from? A case whose expected answer drifted from its source would grade the system under test
against a wrong key, so the reviewer sees three measures per case and the outliers to exclude before
evaluation:

- cosine: MiniLM embedding of question + expected answer against each named source chunk, best chunk kept
  (a case needs to be about at least one of its sources);
- BERTScore F1 of the expected answer (candidate) against the source, with the bert-score package on
  MiniLM's last layer, rescaled with our own baseline (``bench/build_bertscore_baseline.py``) so 0 means "as
  close as two random sentences of the corpus". The references are every sentence of the source chunks and
  every whole chunk, best F1 kept: a generated answer restates one or a few sentences, and against the whole
  chunk alone F1's recall punishes it for not covering the rest (measured on the sample corpus: a sentence
  copied verbatim from its chunk scored a median F1 of 0.35 against the chunk, as low as -0.17);
- NLI: probability that the source chunks, joined in order, entail the expected answer, only with a local
  sequence classifier whose ``id2label`` names an entailment label. No NLI weights ship with Assay, so
  without one the score stays None and ``nli_status`` says why: a missing model is never a score.

A measure flags a case when it falls below ``max(floor, median - z * 1.4826 * MAD)`` over the suite: the
robust z-score catches a case far below its siblings, the absolute floor catches a suite that drifted as a
whole. Fewer than MIN_CASES_FOR_SPREAD values give no usable spread, so the floor alone applies; the spread
never counts as less than MIN_SPREAD, so near-identical scores do not flag hair-thin differences.
"""

import os
import warnings
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np

from assay.embeddings import PACKAGED_MODEL, Embedder, ModelUnavailableError, resolve_model_path, split_sentences
from assay.models import Chunk, TestCase, TestSuite
from assay.models.mrm import CaseValidation, SuiteValidation
from assay.models.workflow import OUTLIER_Z
from assay.mrm.bertscore import best_f1
from assay.progress import Progress, embed_reporting, part, report

MIN_CASES_FOR_SPREAD = 5
MIN_SPREAD = 0.05
FLOORS = {"cosine": 0.35, "bertscore_f1": 0.25, "nli_entailment": 0.5}
"""Absolute floors. Measured on the 36 answered cases of the sample suite with their best-overlapping chunk as
source: cosine 0.44-0.93 (median 0.71), rescaled BERTScore F1 0.42-0.99 (median 0.68); the same answers
against a random chunk of another document: cosine median 0.18, F1 median 0.09, yet up to 0.60 and 0.47
where that chunk is on a neighbouring product (the robust cut-off is there for those). An NLI entailment
below 0.5 means the model does not find the answer entailed."""
_PHRASES = {
    "cosine": ("question and answer barely related to the source", "cosine"),
    "bertscore_f1": ("answer worded far from the source", "BERTScore F1"),
    "nli_entailment": ("source does not entail the answer", "NLI entailment"),
}
BERTSCORE_LAYER = 6
NLI_BATCH = 16
PROGRESS_WEIGHTS = {"cosine": 1.0, "bertscore_f1": 3.0, "nli_entailment": 1.0}
"""Each measure's share of the progress (of those computed): BERTScore embeds every source sentence."""


def bertscore_baseline_path() -> Path:
    """The packaged rescaling baseline of MiniLM (LAYER,P,R,F; rows 0-6)."""
    return Path(str(resources.files("assay") / "data" / "bertscore" / f"{PACKAGED_MODEL}.csv"))


def validate_suite(
    suite: TestSuite,
    chunks_by_ref: Mapping[str, Chunk],
    embedder: Embedder,
    *,
    nli_model: str | None = None,
    bertscore: bool = True,
    outlier_z: float = OUTLIER_Z,
    progress: Progress | None = None,
) -> SuiteValidation:
    """Score every case against its source chunks and flag the outliers, with reasons in plain words.
    ``progress`` hears the fraction done (0..1) after each batch of embeddings, of BERTScore and of NLI."""
    cases = [case for _, case in suite.cases()]
    reasons: dict[str, list[str]] = {case.key: [] for case in cases}
    sources = {case.key: _source_texts(case, chunks_by_ref, reasons[case.key]) for case in cases}
    with_sources = [case for case in cases if sources[case.key]]
    answered = [case for case in with_sources if case.expected_output.strip()]
    for case in with_sources:
        if not case.expected_output.strip():
            reasons[case.key].append("no expected answer: BERTScore and NLI need one")
    parts = _progress_parts(progress, bertscore=bertscore, nli=nli_model is not None)
    measures: dict[str, dict[str, float]] = {"cosine": _cosines(with_sources, sources, embedder, parts["cosine"])}
    bertscore_status = "not computed: disabled (bertscore=False)"
    if bertscore:
        measures["bertscore_f1"], bertscore_status = _bertscores(answered, sources, parts["bertscore_f1"])
    measures["nli_entailment"], nli_status = _entailments(answered, sources, nli_model, parts["nli_entailment"])
    thresholds = {
        name: _cutoff(list(values.values()), FLOORS[name], outlier_z) for name, values in measures.items() if values
    }
    validations = []
    for case in cases:
        outlier = False
        for name, cutoff in thresholds.items():
            value = measures[name].get(case.key)
            if value is not None and value < cutoff:
                outlier = True
                phrase, label = _PHRASES[name]
                reasons[case.key].append(f"{phrase} ({label} {value:.3f} < {cutoff:.3f})")
        validations.append(
            CaseValidation(
                test_case_key=case.key,
                cosine=measures["cosine"].get(case.key),
                bertscore_f1=measures.get("bertscore_f1", {}).get(case.key),
                nli_entailment=measures["nli_entailment"].get(case.key),
                outlier=outlier,
                reasons=reasons[case.key],
            )
        )
    report(progress, 1.0)
    return SuiteValidation(
        cases=validations, nli_status=nli_status, bertscore_status=bertscore_status, thresholds=thresholds
    )


def _progress_parts(progress: Progress | None, *, bertscore: bool, nli: bool) -> dict[str, Progress | None]:
    """Each measure's callback, over consecutive ranges sized by PROGRESS_WEIGHTS among those computed."""
    computed = {"cosine": True, "bertscore_f1": bertscore, "nli_entailment": nli}
    total = sum(PROGRESS_WEIGHTS[name] for name, on in computed.items() if on)
    parts: dict[str, Progress | None] = {}
    start = 0.0
    for name, on in computed.items():
        end = start + PROGRESS_WEIGHTS[name] / total if on else start
        parts[name] = part(progress, start, end)
        start = end
    return parts


def exclude_cases(suite: TestSuite, keys: set[str]) -> TestSuite:
    """A copy of ``suite`` without the cases named in ``keys`` (tests keep their place, even when emptied).
    An unknown key is an error: a mistyped key would otherwise silently keep a case meant to be dropped."""
    unknown = keys - {case.key for _, case in suite.cases()}
    if unknown:
        raise ValueError(f"cannot exclude test cases {sorted(unknown)}: suite {suite.name!r} has no such keys")
    tests = [
        test.model_copy(update={"test_cases": [case for case in test.test_cases if case.key not in keys]})
        for test in suite.tests
    ]
    return suite.model_copy(update={"tests": tests})


def _source_texts(case: TestCase, chunks_by_ref: Mapping[str, Chunk], reasons: list[str]) -> list[str]:
    if not case.sources:
        reasons.append("no source chunks named (sources is empty): nothing to validate the case against")
        return []
    missing = [ref for ref in case.sources if ref not in chunks_by_ref]
    if missing:
        reasons.append(f"source chunks not among the corpus chunks given: {', '.join(missing)}")
    return [chunks_by_ref[ref].text for ref in case.sources if ref in chunks_by_ref]


def _cosines(
    cases: Sequence[TestCase], sources: Mapping[str, list[str]], embedder: Embedder, progress: Progress | None
) -> dict[str, float]:
    """Best cosine over each case's source chunks; every distinct text is embedded once (in one call, or in
    batches when ``progress`` listens)."""
    if not cases:
        return {}
    queries = [f"{case.prompt}\n{case.expected_output}".strip() for case in cases]
    texts = list(dict.fromkeys([*queries, *(text for case in cases for text in sources[case.key])]))
    vectors = np.asarray(embed_reporting(embedder, texts, progress), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {text: index for index, text in enumerate(texts)}
    scores = {}
    for case, query in zip(cases, queries, strict=True):
        similarity = vectors[[row[text] for text in sources[case.key]]] @ vectors[row[query]]
        scores[case.key] = round(float(similarity.max()), 4)
    return scores


@lru_cache(maxsize=2)
def _bert_scorer(model_path: str, baseline_path: str) -> Any:
    """One BERTScorer per process: loading the model and importing bert-score cost seconds."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from bert_score import BERTScorer

    return BERTScorer(
        model_type=model_path,
        num_layers=BERTSCORE_LAYER,
        lang="en",  # bert-score asks for a language whenever it rescales, even with a custom baseline
        rescale_with_baseline=True,
        baseline_path=baseline_path,
        device="cpu",
    )


def _bertscores(
    cases: Sequence[TestCase], sources: Mapping[str, list[str]], progress: Progress | None = None
) -> tuple[dict[str, float], str]:
    """Rescaled F1 of each expected answer against the best of its source sentences and chunks, every distinct
    text encoded once with a report after each batch (``assay.mrm.bertscore``). bert-score pads the texts of a
    batch together, which moves a score in about the third decimal depending on its neighbours; values are
    rounded to 4 decimals and read against a cut-off, never compared exactly."""
    baseline = bertscore_baseline_path()
    if not baseline.is_file():
        return {}, f"not computed: the BERTScore baseline {baseline} is missing (bench/build_bertscore_baseline.py)"
    try:
        scorer = _bert_scorer(str(resolve_model_path(PACKAGED_MODEL)), str(baseline))
    except (ImportError, OSError, ModelUnavailableError) as error:
        return {}, f"not computed: BERTScore on {PACKAGED_MODEL} could not be loaded ({error})"
    if not cases:
        return {}, "available"
    references = [
        list(dict.fromkeys([*(s for text in sources[case.key] for s in split_sentences(text)), *sources[case.key]]))
        for case in cases
    ]
    with warnings.catch_warnings():  # bert-score reads its baseline into a read-only tensor; never writes it
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        f1 = best_f1(scorer, [case.expected_output for case in cases], references, progress)
    return {case.key: round(value, 4) for case, value in zip(cases, f1, strict=True)}, "available"


@lru_cache(maxsize=2)
def _nli_classifier(folder: str) -> tuple[Any, Any, int]:
    """Tokenizer, model and the index of the entailment label; ValueError when the model has none."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True)
    labels = {int(index): str(label).lower() for index, label in model.config.id2label.items()}
    index = next((i for i, label in labels.items() if label == "entailment"), None)
    if index is None:
        index = next((i for i, label in labels.items() if label.startswith("entail")), None)
    if index is None:
        raise ValueError(f"config id2label {model.config.id2label} has no 'entailment' label")
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return tokenizer, model.eval(), index


def _entailments(
    cases: Sequence[TestCase], sources: Mapping[str, list[str]], nli_model: str | None, progress: Progress | None = None
) -> tuple[dict[str, float], str]:
    """P(entailment) of each expected answer given its joined source chunks (the premise is cut, never the
    answer, when the pair is longer than the model takes)."""
    if nli_model is None:
        return {}, "not computed: no NLI model configured (nli_model=None); no NLI weights ship with Assay"
    folder = Path(nli_model).expanduser()
    if not folder.is_dir():
        return {}, f"not computed: NLI model folder {folder} does not exist (nothing is downloaded)"
    try:
        tokenizer, model, entailment = _nli_classifier(str(folder.resolve()))
    except (ImportError, OSError, ValueError) as error:
        return {}, f"not computed: no usable NLI classifier in {folder}: {error}"
    import torch

    limit = min(int(tokenizer.model_max_length), int(getattr(model.config, "max_position_embeddings", 512)), 512)
    scores: dict[str, float] = {}
    for start in range(0, len(cases), NLI_BATCH):
        batch = cases[start : start + NLI_BATCH]
        encoded = tokenizer(
            ["\n\n".join(sources[case.key]) for case in batch],
            [case.expected_output for case in batch],
            truncation="only_first",
            max_length=limit,
            padding=True,
            return_tensors="pt",
        )
        with torch.no_grad():
            probabilities = torch.softmax(model(**encoded).logits.double(), dim=-1)[:, entailment]
        scores.update({case.key: round(float(p), 4) for case, p in zip(batch, probabilities.tolist(), strict=True)})
        report(progress, min(start + NLI_BATCH, len(cases)) / len(cases))
    return scores, "available"


def _cutoff(values: list[float], floor: float, outlier_z: float) -> float:
    if len(values) < MIN_CASES_FOR_SPREAD:
        return floor
    centre = median(values)
    spread = max(1.4826 * median(abs(value - centre) for value in values), MIN_SPREAD)
    return round(max(floor, centre - outlier_z * spread), 4)
