"""Production traces, end to end as an operator meets them: a traced RAG app (OpenTelemetry SDK, OpenInference's
openai instrumentation, the real ``openai`` client against the local protocol server) answers customers; its
spans are exported as OTLP JSON; ``assay traces import`` turns them into a lab; ``assay evaluate`` scores the
lab with reference-free evaluators."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.openai_server import OpenAIServer, serve_openai
from tests.support.prefect_server import PrefectServer
from tests.traces.rag_app import CORPUS, RATE, BankAssistant, answer_from_context, traced, write_otlp_json

runner = CliRunner()
QUESTIONS = [
    ("s-1", "How much does replacing a lost card cost?"),
    ("s-1", "What is the daily cash withdrawal limit?"),
    ("s-2", "What is the savings interest rate today? Mail me at jane.doe@example.com"),
]
FAILING = ("s-3", "Please close my account [fault:500]")
SERVICE = "bank-assistant"
REFERENCE_FREE = "groundedness,looping_detection,pii_leakage,latency,token_count"


def _week(folder: Path, responder: Any, *, failing: bool) -> tuple[Path, int, dict[str, str]]:
    """One week of production: the app answers the customers' questions; its spans exported as OTLP JSON."""
    answers: dict[str, str] = {}
    with serve_openai(OpenAIServer(responder=responder)) as server, traced(SERVICE) as (provider, spans):
        assistant = BankAssistant(server.url, provider)
        for session, question in QUESTIONS:
            answers[question] = assistant.ask(question, session)
        if failing:
            with pytest.raises(openai.InternalServerError):
                assistant.ask(FAILING[1], FAILING[0])
        path = folder / "traces.jsonl"
        folder.mkdir(parents=True)
        return path, write_otlp_json(spans, path), answers


def _invented(_: dict[str, Any]) -> dict[str, Any]:
    """A regressed model: it ignores the retrieved context."""
    return {"content": "All our services became free of charge last spring, including overdrafts abroad."}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("traces")
    path, count, answers = _week(folder / "otlp", answer_from_context, failing=True)
    regressed, _, _ = _week(folder / "week-2", _invented, failing=False)
    return {"folder": folder, "file": path, "spans": count, "answers": answers, "regressed": regressed}


@pytest.fixture(scope="module")
def imported(export: dict[str, Any]) -> dict[str, Any]:
    out = export["folder"] / "lab.json"
    result = runner.invoke(app, ["traces", "import", str(export["file"].parent), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lab = json.loads(out.read_text())
    report = json.loads((export["folder"] / "lab.import.json").read_text())
    rows = {row["test_case"]["prompt"]: row for row in lab["rows"]}
    return {"out": out, "lab": lab, "rows": rows, "report": report, "output": result.output}


def test_every_request_becomes_a_case_with_what_the_app_answered(export: dict, imported: dict) -> None:
    rows, report = imported["rows"], imported["report"]
    assert report["spans"] == export["spans"] and report["traces"] == 4 and report["cases"] == 4
    assert [model["key"] for model in imported["lab"]["models"]] == [SERVICE]
    fee = rows[QUESTIONS[0][1]]
    assert fee["actual_output"] == export["answers"][QUESTIONS[0][1]] == CORPUS["fees.md"].split(". ")[0] + "."
    assert fee["context"][0]["doc_uri"] == "fees.md"
    assert fee["context"][0]["text"] == CORPUS["fees.md"] and fee["context"][0]["score"] > 0
    # tokens and model are the LLM span's, as the openai instrumentation recorded the server's usage
    assert fee["input_tokens"] > 0 and fee["output_tokens"] == len(fee["actual_output"].split())
    assert fee["model_name"] and fee["actual_duration"] > 0 and fee["error"] is None
    assert fee["test_case"]["categories"] == ["answer-question"]


def test_a_session_carries_its_conversation_and_tools_are_recorded(imported: dict) -> None:
    rows = imported["rows"]
    second = rows[QUESTIONS[1][1]]
    turns = second["test_case"]["turns"]
    assert [turn["role"] for turn in turns] == ["user", "assistant"]
    assert turns[0]["content"] == QUESTIONS[0][1]
    assert rows[QUESTIONS[0][1]]["test_case"]["turns"] == []
    rate = next(row for prompt, row in rows.items() if prompt.startswith("What is the savings"))
    [call] = rate["tool_calls"]
    assert call["name"] == "lookup_rate" and call["arguments"] == {"product": "savings"}
    assert json.loads(call["output"]) == RATE and call["error"] is None and call["span_id"]


def test_personal_data_is_masked_before_the_lab_is_written(imported: dict) -> None:
    text = imported["out"].read_text()
    assert "jane.doe@example.com" not in text
    assert any("[PII:email]" in prompt for prompt in imported["rows"])
    assert imported["report"]["masked"].get("email", 0) >= 1


def test_a_failed_request_is_kept_as_a_case_with_its_error(imported: dict) -> None:
    failed = next(row for prompt, row in imported["rows"].items() if prompt.startswith("Please close"))
    assert failed["error"] and failed["actual_output"] is None
    assert imported["report"]["cases_with_error"] == 1
    assert "1 ended in error" in imported["output"]


@pytest.fixture(scope="module")
def evaluated(
    export: dict[str, Any], imported: dict[str, Any], prefect_server: PrefectServer
) -> Iterator[dict[str, tuple[Any, Path]]]:
    """Both weeks imported and evaluated by the same reference-free evaluators, in one Prefect server."""
    folder = imported["out"].parent
    week_2 = folder / "week-2.json"
    imported_2 = runner.invoke(app, ["traces", "import", str(export["regressed"]), "--out", str(week_2)])
    assert imported_2.exit_code == 0, imported_2.output
    runs = {}
    with prefect_server.reporting():
        for name, lab in (("week-1", imported["out"]), ("week-2", week_2)):
            out = folder / f"evaluation-{name}"
            arguments = ["evaluate", "--lab", str(lab), "--evaluators", REFERENCE_FREE, "--out", str(out)]
            runs[name] = (runner.invoke(app, arguments), out)
    yield runs


@pytest.mark.slow
def test_reference_free_evaluators_score_the_imported_traces(evaluated: dict, imported: dict) -> None:
    result, out = evaluated["week-1"]
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    [model] = summary["models"]
    assert model["key"] == SERVICE and model["answered"] == 3 and model["host_failures"] == 1
    metrics = summary["metrics"][SERVICE]
    for evaluator in REFERENCE_FREE.split(","):
        primary = next(metric for metric in metrics[evaluator].values() if metric["is_primary"])
        # the failed request is unscored, never a zero
        assert (primary["scored"], primary["unscored"]) == (3, 1), (evaluator, primary)
    assert metrics["groundedness"]["groundedness"]["mean"] > 0.8  # the app answers from its retrieved documents
    assert metrics["pii_leakage"]["model_passes"]["passed"] == 3  # the masked email is not a leak in an answer
    rows = json.loads((out / "token_count" / "results.json").read_text())["results"]
    fee = next(row for row in rows if row["input"] == QUESTIONS[0][1])
    expected = imported["rows"][QUESTIONS[0][1]]
    assert fee["total_token_count"] == expected["input_tokens"] + expected["output_tokens"]
    problems = json.loads((out / "problems" / "problems_and_actions.json").read_text())["problems"]
    assert any("failed to answer 1 of 4" in problem["description"] for problem in problems)


@pytest.mark.slow
def test_compare_finds_the_regression_between_two_weeks_of_production(evaluated: dict, tmp_path: Path) -> None:
    """Two production samples share no request: they are compared as independent samples, not "nothing
    comparable", and the week whose answers ignore the documents is significantly less grounded."""
    (_, before), (week_2, after) = evaluated["week-1"], evaluated["week-2"]
    assert week_2.exit_code == 0, week_2.output
    out = tmp_path / "cmp"
    result = runner.invoke(app, ["compare", str(before), str(after), "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 3, result.output
    assert "as independent production samples" in " ".join(result.output.split())
    comparison = json.loads((out / "comparison.json").read_text())
    grounded = next(d for d in comparison["deltas"] if d["metric"] == "groundedness")
    assert grounded["change"] == "worse" and grounded["pairing"] == "unpaired" and grounded["ci_high"] < 0
    assert comparison["compared"]["samples_compared"] > 0 and comparison["compared"]["cases_matched"] == 0
    assert "independent production samples" in (out / "comparison.md").read_text()
    same = runner.invoke(app, ["compare", str(before), str(before), "--out", str(tmp_path / "same"),
                               "--fail-on-regression"])  # fmt: skip
    assert same.exit_code == 0, same.output


@pytest.mark.slow
def test_the_report_of_a_production_sample_opens_offline_with_each_request(evaluated: dict) -> None:
    """The reader's view: the run's HTML report, offline in chromium, shows every production request in the eval
    eye with what the app answered, the masked email, and the failed request with its error."""
    from playwright.sync_api import expect

    from tests.support.browser import chromium_page, open_offline, skip_without_chromium

    skip_without_chromium()
    _, out = evaluated["week-1"]
    with chromium_page("production-traces-report") as browser:
        requests = open_offline(browser, out / "interpretation.html")
        cards = browser.page.locator("#eye-rows > .eye-card")
        expect(cards).to_have_count(4)
        text = " ".join(cards.all_inner_texts())
        assert CORPUS["fees.md"].split(". ")[0] in text and "[PII:email]" in text
        assert "jane.doe@example.com" not in browser.page.content()
        assert "Please close my account" in text and "500" in text
        browser.shot("eval-eye")
    assert requests == [] and browser.console_errors == []


def test_tool_call_rules_by_route_check_the_traced_tool_calls(imported: dict) -> None:
    """Production requests carry no assertions of their own: rules are set per route for the run, and checked
    against the tool calls the traces recorded."""
    from assay.evaluators import Services, build_evaluator, run_evaluator

    from assay.formats.native import import_native

    rules = {
        "answer-question": [{"type": "TOOL_CALLED", "targets": ["lookup_rate"]}],
        "*": [{"type": "LATENCY", "threshold": 30}],
    }
    evaluator = build_evaluator("assertions", Services(), assertions_by_category=rules)
    result = run_evaluator(evaluator, import_native(imported["out"]))
    lab = {row.test_case.key: row.test_case.prompt for row in import_native(imported["out"]).rows}
    scores = {lab[row.test_case_key]: (row.scores.get("assertion_score"), row.unscored_reason) for row in result.rows}
    rate = next(prompt for prompt in scores if prompt.startswith("What is the savings"))
    assert scores[rate] == (100.0, None)  # the rate question looked the rate up, in time
    assert scores[QUESTIONS[0][1]] == (50.0, None)  # no tool was called for the fee question
    failed = next(prompt for prompt in scores if prompt.startswith("Please close"))
    assert scores[failed][1].startswith("host error")  # the failed request: unscored, not a failed rule
    with pytest.raises(ValueError, match=r"assertions_by_category\['answer-question'\]\[0\]"):
        build_evaluator("assertions", Services(), assertions_by_category={"answer-question": [{"type": "TOOL_CALLED"}]})
