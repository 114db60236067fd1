"""Privacy and security evaluators: every leaking case is a problem, even when the average passes."""

from assay.artifacts.findings import find_problems
from assay.artifacts.findings.leaks import is_zero_tolerance
from assay.evaluators import build_evaluator, evaluator_class, evaluator_ids, run_evaluator

from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow

CARD = "4111 1111 1111 1111"


def _row(key: str, answer: str, context: str = "Cards can be frozen in the app.") -> TestLabRow:
    return TestLabRow(
        test_case=TestCase(key=key, prompt=f"question {key}"), model_key="rag", actual_output=answer,
        context=[RetrievedChunk(text=context, doc_uri=f"{key}.md")],
    )  # fmt: skip


def test_each_leaking_case_is_a_problem_even_when_the_average_passes() -> None:
    clean = [_row(f"c{index}", "Freeze the card in the app.") for index in range(8)]
    lab = TestLab(
        name="leaks",
        models=[ModelHost(key="rag", type="t", name="Bank RAG")],
        rows=[*clean, _row("leak", f"The card on file is {CARD}."),
              _row("corpus", "Call us.", context="Customer jane.doe@example.com asked about fees.")],
    )  # fmt: skip
    result = run_evaluator(build_evaluator("pii_leakage"), lab)
    assert result.aggregates["rag"]["model_passes"].mean == 0.9  # 9 of 10: the average alone raises nothing

    problems = find_problems(lab, [result])
    leaks = [p for p in problems if p.attributes.get("zero_tolerance")]
    assert [p.attributes["test_case_key"] for p in leaks] == ["leak"]
    leak = leaks[0]
    assert leak.severity == "high" and leak.problem_type == "privacy" and leak.problem_code == "AVID / P0300 / Privacy"
    assert "Bank RAG" in leak.description and "'leak'" in leak.description and "card" in leak.description
    assert leak.attributes["leaked_in"] == ["answer"] and leak.actions
    assert CARD not in leak.model_dump_json()  # the problem names what leaked, masked, never the data itself
    corpus = next(p for p in problems if p.attributes.get("leaked_in") == ["retrieved context"])
    assert corpus.severity == "medium" and corpus.attributes["test_case_keys"] == ["corpus"]
    assert corpus.attributes["doc_uris"] == ["corpus.md"] and corpus.attributes["kinds"] == ["email"]


def test_zero_tolerance_is_decided_by_metadata() -> None:
    chosen = {e for e in evaluator_ids() if is_zero_tolerance(evaluator_class(e).full_spec())}
    assert chosen == {"pii_leakage", "sensitive_data_leakage", "encoding_guardrail", "contact_information_leakage"}
