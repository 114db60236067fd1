"""Summarization (Judge) against the local judge: a summary passes when it conveys the reference summary's
content and invents no figure."""

from pathlib import Path

from assay.evaluators import build_evaluator, evaluator_class, run_evaluator

from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import judge_services

REFERENCE = "From 1 May the savings rate rises to 3.25%; existing customers switch automatically."


def _run(server: JudgeServer, cache: Path | None, *answers: str, reference: str = REFERENCE):
    lab = TestLab(
        name="lab",
        models=[ModelHost(key="m", type="t")],
        rows=[
            TestLabRow(
                test_case=TestCase(
                    key=f"c{index}",
                    prompt="Summarise the notice.",
                    expected_output=reference,
                    categories=["summarization"],  # summarization evaluators apply to summary cases only
                ),
                model_key="m",
                actual_output=answer,
                context=[RetrievedChunk(text="Notice: savings rates change on 1 May.")],
            )
            for index, answer in enumerate(answers)
        ],
    )
    result = run_evaluator(build_evaluator("summarization_judge", judge_services(server, cache)), lab)
    return {row.test_case_key: row for row in result.rows}, result


def test_metric_names_are_the_manuals() -> None:
    spec = evaluator_class("summarization_judge").spec
    assert [metric.display_name for metric in spec.metrics] == [
        "Good summary (pass)", "Bad summary (fail)", "Summarization retrieval failures",
        "Summarization generation failures", "Summarization parsing failures"]  # fmt: skip
    assert spec.required_inputs == ["expected_output", "actual_output"]


def test_good_and_bad_summaries(judge_server: JudgeServer, tmp_path: Path) -> None:
    rows, result = _run(
        judge_server,
        tmp_path,
        "The savings rate rises to 3.25% from 1 May and existing customers switch automatically.",
        "The savings rate rises to 4.5% from 1 May and existing customers switch automatically.",
        "The bank is closing its branches on Sundays.",
    )
    assert rows["c0"].scores["model_passes"] == 1.0 and rows["c0"].scores["model_failures"] == 0.0
    assert rows["c1"].scores["model_passes"] == 0.0  # a changed figure makes a bad summary
    assert rows["c2"].scores["model_passes"] == 0.0 and rows["c2"].scores["model_generation_failures"] == 1.0
    verdict = rows["c1"].details["judge"][0]["verdict"]
    assert verdict["unsupported_statements"] == ["4.5%"] and verdict["bad_summary"] is True
    call = rows["c2"].details["judge"][0]
    assert call["template"] == "summarization_judge" and call["template_version"] == "1"
    assert f"<reference>\n{REFERENCE}\n</reference>" in call["messages"][-1]["content"]
    # the retrieved context is source material, not a summary: not judged, not invented
    assert all(row.scores["model_retrieval_failures"] is None for row in rows.values())
    assert all(len(row.details["judge"]) == 1 for row in rows.values())
    assert result.aggregates["m"]["model_passes"].passed == 1


def test_wrong_schema_and_refusal_leave_the_case_unscored(judge_server: JudgeServer) -> None:
    rows, _ = _run(judge_server, None, "Rates rise [judge:wrong_schema]", "Rates rise [judge:refusal]")
    assert rows["c0"].unscored_reason.startswith("judge failed (unparseable)")
    assert rows["c0"].scores == {"model_parse_failures": 1.0}
    assert rows["c1"].unscored_reason.startswith("judge failed (refusal)")


def test_a_case_without_a_reference_is_unscored_as_missing_input(judge_server: JudgeServer) -> None:
    rows, _ = _run(judge_server, None, "Some summary.", reference="")
    assert rows["c0"].unscored_reason == "missing input: expected_output"
