"""Language mismatch with both detectors: the LLM judge (default) and the offline lingua detector, which needs
no judge. A French answer to an English question fails; details say which detector decided and what it saw;
texts too short to tell their language are unscored, never guessed."""

import pytest
from assay.evaluators import Services, build_evaluator, evaluator_class, run_evaluator
from assay.evaluators.language_mismatch import lingua_language

from assay.judges import NOT_CONFIGURED
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import judge_services

QUESTION = "How long does an international transfer take?"
ENGLISH = "International transfers usually arrive within two to four business days."
FRENCH = "Les virements internationaux arrivent généralement en deux à quatre jours ouvrables."
GERMAN = "Eine Auslandsüberweisung dauert in der Regel zwei bis vier Werktage."


def _run(services: Services, *cases: tuple[str, str, list[str]], **parameters: object) -> dict:
    rows = [
        TestLabRow(
            test_case=TestCase(key=f"c{index}", prompt=question),
            model_key="m",
            actual_output=answer,
            context=[RetrievedChunk(text=text) for text in chunks],
        )
        for index, (question, answer, chunks) in enumerate(cases)
    ]
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=rows)
    result = run_evaluator(build_evaluator("language_mismatch", services, **parameters), lab)
    return {row.test_case_key: row for row in result.rows}


def test_metrics_carry_the_manuals_names_and_the_detector_is_a_parameter() -> None:
    cls = evaluator_class("language_mismatch")
    assert [metric.display_name for metric in cls.spec.metrics] == [
        "Same language (pass)",
        "Language mismatch (fail)",
        "Language mismatch retrieval failures",
        "Language mismatch generation failures",
        "Language mismatch parsing failures",
    ]
    parameters = {parameter.name: parameter.default for parameter in cls.parameter_meta()}
    assert parameters["detector"] == "judge" and "llm" in cls.spec.needs
    with pytest.raises(ValueError, match="detector 'fasttext' is not one of judge, lingua"):
        build_evaluator("language_mismatch", Services(), detector="fasttext")


def test_the_judge_fails_a_french_answer_to_an_english_question(judge_server: JudgeServer) -> None:
    rows = _run(judge_services(judge_server, None), (QUESTION, ENGLISH, []), (QUESTION, FRENCH, []))
    assert rows["c0"].scores["model_passes"] == 1.0
    assert rows["c1"].scores["model_passes"] == 0.0 and rows["c1"].scores["model_failures"] == 1.0
    details = rows["c1"].details
    assert details["detector"] == "judge"
    assert details["answer"]["question_language"] == "English" and details["answer"]["text_language"] == "French"
    assert details["judge"][0]["template"] == "language_mismatch"


def test_lingua_needs_no_judge_and_fails_a_french_answer() -> None:
    evaluator = build_evaluator("language_mismatch", Services(), detector="lingua")
    assert evaluator.unavailable_reason() is None
    assert build_evaluator("language_mismatch", Services()).unavailable_reason() == NOT_CONFIGURED
    rows = _run(Services(), (QUESTION, ENGLISH, []), (QUESTION, FRENCH, []), detector="lingua")
    assert rows["c0"].scores["model_passes"] == 1.0
    assert rows["c1"].scores["model_passes"] == 0.0 and rows["c1"].scores["model_generation_failures"] == 1.0
    details = rows["c1"].details
    assert details["detector"] == "lingua" and "judge" not in details
    assert details["answer"]["question_language"] == "English" and details["answer"]["text_language"] == "French"
    assert "confidence" in details["answer"]["note"]


def test_lingua_checks_each_retrieved_chunk_against_the_question() -> None:
    rows = _run(Services(), (QUESTION, ENGLISH, [ENGLISH, GERMAN]), (QUESTION, ENGLISH, [ENGLISH]), detector="lingua")
    assert rows["c0"].scores["model_passes"] == 1.0 and rows["c0"].scores["model_retrieval_failures"] == 1.0
    assert rows["c0"].details["retrieved_context"]["flagged_chunks"] == [1]
    assert rows["c0"].details["retrieved_context"]["chunks"][1]["text_language"] == "German"
    assert rows["c1"].scores["model_retrieval_failures"] == 0.0


def test_too_short_texts_are_unscored_not_guessed(judge_server: JudgeServer) -> None:
    offline = _run(Services(), (QUESTION, "ok", []), ("Hi?", ENGLISH, []), detector="lingua")
    assert "too short to detect its language" in offline["c0"].unscored_reason
    assert offline["c0"].scores.get("model_passes") is None
    assert "too short" in offline["c1"].unscored_reason and offline["c1"].details["detector"] == "lingua"
    judged = _run(judge_services(judge_server, None), (QUESTION, "ok", []))
    assert "cannot tell the languages apart" in judged["c0"].unscored_reason
    assert judged["c0"].details["answer"]["text_language"] is None and judged["c0"].details["judge"]


def test_lingua_reports_an_ambiguous_text_as_uncertain() -> None:
    language, note = lingua_language("Your balance is 200 EUR.")
    assert language is None and "uncertain" in note
    assert lingua_language(GERMAN)[0] == "German"


def test_an_unparseable_judge_reply_counts_as_a_parse_failure(judge_server: JudgeServer) -> None:
    rows = _run(judge_services(judge_server, None), (QUESTION, f"{ENGLISH} [judge:malformed]", []))
    assert rows["c0"].unscored_reason.startswith("judge failed (unparseable)")
    assert rows["c0"].scores["model_parse_failures"] == 1.0
