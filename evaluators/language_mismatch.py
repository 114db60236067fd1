"""Language mismatch: is the actual answer (and, for RAG, each retrieved chunk) written in a different
language than the question?

Two detectors decide it. ``judge`` (the default, as in the manual) asks the LLM judge to name both languages.
``lingua`` runs the offline ``lingua-language-detector`` (its models ship in the wheel), so the evaluator then
needs no judge at all. Either way a text too short or too ambiguous to tell its language leaves the case
unscored with the reason: a guessed language would turn noise into a verdict. Details name the detector that
decided and the languages it saw.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from assay.evaluators._binary_judge import binary_scores, retrieval_verdict
from assay.evaluators._judged import CaseJudge, JudgedEvaluator
from assay.evaluators._leakage import LeakageNames, leakage_metrics
from assay.evaluators.base import CaseContext, Scored, Unscored, golden_pair
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

if TYPE_CHECKING:
    from lingua import LanguageDetector

DETECTORS = ("judge", "lingua")
MIN_LETTERS = 10
"""Below this many letters lingua's guesses are unreliable (``ok``, ``Merci!``): the text is not judged."""
MIN_RELATIVE_DISTANCE = 0.1
"""How far lingua's best language must lead the runner-up before it names it (lingua's own setting)."""
LINGUA_LANGUAGES = (
    "ARABIC", "CHINESE", "CZECH", "DANISH", "DUTCH", "ENGLISH", "FINNISH", "FRENCH", "GERMAN", "GREEK", "HEBREW",
    "HINDI", "HUNGARIAN", "INDONESIAN", "ITALIAN", "JAPANESE", "KOREAN", "NYNORSK", "BOKMAL", "POLISH",
    "PORTUGUESE", "ROMANIAN", "RUSSIAN", "SPANISH", "SWEDISH", "THAI", "TURKISH", "UKRAINIAN", "VIETNAMESE",
)  # fmt: skip
"""A fixed set keeps detection deterministic and fast; more languages make close pairs (e.g. Spanish and
Catalan) harder to tell apart."""
_UNKNOWN = {"", "unknown", "undetermined", "none", "n/a"}


@dataclass(frozen=True)
class Comparison:
    """The languages of the question and of one text; ``mismatch`` None when either could not be told."""

    question_language: str | None
    text_language: str | None
    mismatch: bool | None
    note: str

    def detail(self) -> dict[str, Any]:
        return {"question_language": self.question_language, "text_language": self.text_language,
                "mismatch": self.mismatch, "note": self.note}  # fmt: skip


@cache
def _lingua() -> "LanguageDetector":
    """Built once per process: loading the language models takes about a second."""
    from lingua import Language, LanguageDetectorBuilder

    languages = [getattr(Language, name) for name in LINGUA_LANGUAGES]
    builder = LanguageDetectorBuilder.from_languages(*languages)
    return builder.with_minimum_relative_distance(MIN_RELATIVE_DISTANCE).build()


def lingua_language(text: str) -> tuple[str | None, str]:
    """(the language's name, or None when it cannot be told reliably; why, or with what confidence)."""
    letters = sum(character.isalpha() for character in text)
    if letters < MIN_LETTERS:
        return None, f"too short to detect its language ({letters} letters, at least {MIN_LETTERS} needed)"
    detector = _lingua()
    best = detector.compute_language_confidence_values(text)[0]
    name = best.language.name.title()
    if detector.detect_language_of(text) is None:
        return None, f"language uncertain (best guess {name} at {best.value:.2f}, too close to the next language)"
    return name, f"{name} (confidence {best.value:.2f})"


@register
@dataclass
class LanguageMismatch(JudgedEvaluator):
    spec = EvaluatorSpec(
        id="language_mismatch",
        display_name="Language mismatch (Judge)",
        description=(
            "Checks whether the actual answer is written in the same language as the question, and, for RAG, "
            "whether each retrieved chunk is. The LLM judge names the languages by default; detector='lingua' "
            "uses an offline language detector instead and needs no judge. Texts too short to tell their "
            "language are unscored. One boolean per case; models are compared on the share of cases that pass."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["question", "actual_output"],
        needs=["llm"],
        metrics=leakage_metrics(
            LeakageNames(
                passes="Same language (pass)",
                failures="Language mismatch (fail)",
                retrieval="Language mismatch retrieval failures",
                generation="Language mismatch generation failures",
                parsing="Language mismatch parsing failures",
                what="a language other than the question's",
            )
        ),
        keywords=["language", "multilingual", "language detection", "llm-judge", "lingua"],
    )
    golden = golden_pair(
        "International transfers usually arrive within two to four business days.",
        "Les virements internationaux arrivent généralement en deux à quatre jours ouvrables.",
        question="How long does an international transfer take?",
    )
    template_id = "language_mismatch"

    detector: str = field(
        default="judge",
        metadata={"description": "Who names the languages: 'judge' (the LLM judge) or 'lingua' (offline detector)."},
    )
    evaluate_retrieved_context: bool = field(
        default=True, metadata={"description": "Also check that each retrieved chunk is in the question's language."}
    )

    def __post_init__(self) -> None:
        if self.detector not in DETECTORS:
            raise ValueError(f"language_mismatch: detector {self.detector!r} is not one of {', '.join(DETECTORS)}")

    # -- the offline detector needs no judge -----------------------------------------------------------------

    def unavailable_reason(self) -> str | None:
        return None if self.detector == "lingua" else super().unavailable_reason()

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        if self.detector == "judge":
            super().prepare(cases)

    def score(self, case: CaseContext) -> "dict[str, float | None] | Scored":
        if self.detector == "judge":
            return super().score(case)
        question, question_note = lingua_language(case.question)

        def compare(text: str) -> Comparison:
            language, note = lingua_language(text)
            known = question is not None and language is not None
            notes = f"question: {question_note}; text: {note}"
            return Comparison(question, language, (language != question) if known else None, notes)

        chunks = self._chunks(case)
        return self._verdicts(case, compare(case.actual_output or ""), [compare(chunk) for chunk in chunks])

    # -- the judge -------------------------------------------------------------------------------------------

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        async def compare(step: str, text: str) -> Comparison:
            verdict = await ask(self.template_id, step=step, question=case.question, text=text)
            question = _named(verdict["question_language"])
            language = _named(verdict["text_language"])
            known = question is not None and language is not None
            return Comparison(question, language, bool(verdict["mismatch"]) if known else None, verdict["rationale"])

        answer = await compare("answer", case.actual_output or "")
        chunks = await asyncio.gather(
            *(compare(f"context {index}", text) for index, text in enumerate(self._chunks(case))),
            return_exceptions=True,
        )
        return self._verdicts(case, answer, chunks)

    # -- one case's verdicts ---------------------------------------------------------------------------------

    def _chunks(self, case: CaseContext) -> list[str]:
        return [chunk.text for chunk in case.retrieved_context] if self.evaluate_retrieved_context else []

    def _verdicts(self, case: CaseContext, answer: Comparison, chunks: "list[Comparison | BaseException]") -> Scored:
        details: dict[str, Any] = {"detector": self.detector, "answer": answer.detail()}
        if answer.mismatch is None:
            raise Unscored(
                f"test case {case.test_case_key}: cannot tell the languages apart ({answer.note})", details=details
            )
        failed = float(answer.mismatch)
        retrieval: float | None = None
        if chunks:
            outcomes = [chunk.mismatch if isinstance(chunk, Comparison) else chunk for chunk in chunks]
            retrieval, details["retrieved_context"] = retrieval_verdict(outcomes)
            details["retrieved_context"]["chunks"] = [
                chunk.detail() if isinstance(chunk, Comparison) else {"error": str(chunk)} for chunk in chunks
            ][:20]
        return Scored(scores=binary_scores(failed, retrieval), details=details)


def _named(language: str) -> str | None:
    """The judge's language name, None where it said it could not tell."""
    name = str(language).strip()
    return None if name.lower() in _UNKNOWN else name.title()
