"""What an OpenInference trace keeps on import beyond question and answer: a reply that is a tool call (never its
raw chat completion as the answer), cache-read and reasoning tokens apart, document ids from LangChain's
metadata, a route below a framework class, session and user ids on every case, a sub-agent's calls."""

import json
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from assay.testing.openai_server import OpenAIServer, serve_openai
from tests.traces.genai_app import CALL, USAGE_DETAILS, WEATHER_TOOL, responder
from tests.traces.rag_app import traced, write_otlp_json
from tests.traces.test_trace_files import T0, export, otlp_span, rows_by_key, run_import, trace_id, write_jsonl

WEATHER = "What is the weather in Paris?"


def _weather_trace(tmp_path: Path) -> Path:
    """OpenInference's openai instrumentation tracing one bare call whose reply asks for a tool; the server
    reports 3 cached input and 2 reasoning tokens."""
    with serve_openai(OpenAIServer(responder=responder, usage_details=USAGE_DETAILS)) as server, \
            traced("weather-bot") as (_, spans):  # fmt: skip
        client = OpenAI(base_url=server.url, api_key="sk-test-not-a-secret", max_retries=0)
        client.chat.completions.create(model="local-model", tools=[WEATHER_TOOL],
                                       messages=[{"role": "user", "content": WEATHER}])  # fmt: skip
        file = tmp_path / "spans.jsonl"
        assert write_otlp_json(spans, file) == 1
    return file


def test_openinference_tool_call_reply_is_the_outcome_not_the_answer(tmp_path: Path) -> None:
    """OpenInference's openai instrumentation records a bare call's reply as the raw chat completion (its
    output.value): a reply that asks for a tool imports as that call, the answer absent, tokens split."""
    file = _weather_trace(tmp_path)
    raw = json.loads(file.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert any(pair["key"] == "output.value" and '"tool_calls"' in pair["value"]["stringValue"]
               for pair in raw["attributes"])  # the writer put the chat completion there  # fmt: skip
    lab, report, _ = run_import(tmp_path, [file], "--keep-pii")
    [row] = lab["rows"]
    assert row["test_case"]["prompt"] == WEATHER
    assert row["actual_output"] is None and "chatcmpl" not in json.dumps(row)
    assert row["answer_absent"] == "the last model reply was a tool call (get_weather), not an answer"
    [call] = row["tool_calls"]
    assert (call["name"], call["arguments"], call["final_reply"]) == ("get_weather", {"city": "Paris"}, True)
    # by hand: 6 words asked, 10 words of tool-call JSON replied; the server's 3 cached and 2 reasoning
    assert (row["input_tokens"], row["cached_input_tokens"], row["output_tokens"], row["reasoning_tokens"]) == (
        6, 3, 10, 2)  # fmt: skip
    assert report["conventions"] == {"openinference": 1}


def test_a_chat_completion_answer_on_the_root_is_unwrapped_and_a_tool_call_one_is_absent(tmp_path: Path) -> None:
    completion = {"id": "chatcmpl-9", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [CALL]}}]}  # fmt: skip
    spans = [otlp_span(1, 10, None, "agent", "AGENT", T0, T0 + 1, input__value=WEATHER,
                       output__value=json.dumps(completion))]  # fmt: skip
    lab, _, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])], "--keep-pii")
    [row] = lab["rows"]
    assert (row["actual_output"], row["answer_absent"]) == (None, "the last model reply was a tool call "
                                                            "(get_weather), not an answer")  # fmt: skip
    assert [(call["name"], call["final_reply"]) for call in row["tool_calls"]] == [("get_weather", True)]


def _langchain_trace(trace: int, start: float, step: str = "RunnableParallel<context,question>",
                     **root: Any) -> list[dict[str, Any]]:  # fmt: skip
    """A LangChain request as OpenInference's LangChain instrumentation writes it: a RunnableSequence root, a
    ``step`` under it (a RunnableParallel, or a sub-chain the app named with ``run_name``), the retriever below
    (documents with their ids in ``document.metadata``, a JSON text), the prompt, the model."""
    base = trace * 10
    metadata = [{"source": "fees.md", "page": 1}, {"id": "faq-7"}, {"uri": "https://example.com/rates"}, {}]
    documents: dict[str, Any] = {}
    for index, found in enumerate(metadata):
        prefix = f"retrieval__documents__{index}__document__"
        documents |= {f"{prefix}content": f"passage {index}", f"{prefix}metadata": json.dumps(found)}
    return [
        otlp_span(trace, base, None, "RunnableSequence", "CHAIN", start, start + 2, input__value="What is the fee?",
                  output__value="5 EUR.", **root),
        otlp_span(trace, base + 1, base, step, "CHAIN", start + 0.1, start + 0.5),
        otlp_span(trace, base + 2, base + 1, "VectorStoreRetriever", "RETRIEVER", start + 0.2, start + 0.4,
                  **documents),
        otlp_span(trace, base + 3, base, "ChatPromptTemplate", "CHAIN", start + 0.6, start + 0.7),
        otlp_span(trace, base + 4, base, "ChatOpenAI", "LLM", start + 0.8, start + 1.8),
    ]  # fmt: skip


def test_document_ids_from_metadata_route_below_the_framework_class_and_ids_on_every_case(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "t.jsonl", [export(
        _langchain_trace(1, T0, session__id="alone", user__id="u-1")
        + _langchain_trace(2, T0 + 60, step="fee-question"))])  # fmt: skip
    lab, report, _ = run_import(tmp_path, [file], "--keep-pii")
    rows = rows_by_key(lab)
    first, second = rows[trace_id(1)], rows[trace_id(2)]
    assert [chunk["doc_uri"] for chunk in first["context"]] == ["fees.md", "faq-7", "https://example.com/rates", ""]
    # the root names a framework class: the first of its children (then of theirs) that names none is the route
    assert first["test_case"]["categories"] == ["ChatPromptTemplate"]
    assert second["test_case"]["categories"] == ["fee-question"]
    # a one-request session keeps its id; a request with none has none
    assert (first["session_id"], first["user_id"]) == ("alone", "u-1") and report["sessions"] == 0
    assert "session_id" not in second and "user_id" not in second
    by_route, _, _ = run_import(tmp_path, [file], "--route-from", "attribute:session.id")
    routes = {row["test_case"]["key"]: row["test_case"]["categories"] for row in by_route["rows"]}
    assert routes == {trace_id(1): ["alone"], trace_id(2): ["fee-question"]}


def test_a_sub_agents_tool_calls_stay_with_it(tmp_path: Path) -> None:
    spans = [
        otlp_span(3, 30, None, "planner", "AGENT", T0, T0 + 3, input__value="Plan my trip", output__value="Done."),
        otlp_span(3, 31, 30, "search", "TOOL", T0 + 0.1, T0 + 0.2, tool__name="search", input__value='{"q": "x"}'),
        otlp_span(3, 32, 30, "booker", "AGENT", T0 + 0.5, T0 + 2),
        otlp_span(3, 33, 32, "wrapper", "CHAIN", T0 + 0.6, T0 + 1.9),
        otlp_span(3, 34, 33, "book_hotel", "TOOL", T0 + 0.7, T0 + 0.8, tool__name="book_hotel"),
    ]  # fmt: skip
    lab, _, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    calls = [(call["name"], call.get("agent")) for call in lab["rows"][0]["tool_calls"]]
    assert calls == [("search", None), ("book_hotel", "booker")]


def test_an_unknown_route_source_is_refused(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from assay.apps.cli.main import app

    file = write_jsonl(tmp_path / "t.jsonl", [export(_langchain_trace(1, T0))])
    result = CliRunner().invoke(app, ["traces", "import", str(file), "--out", str(tmp_path / "lab.json"),
                                      "--route-from", "attribute:"])  # fmt: skip
    assert result.exit_code == 2 and "--route-from 'attribute:': expected span-name or attribute:NAME" in " ".join(
        result.output.split())  # fmt: skip


def test_a_price_table_prices_unreported_costs_from_the_token_split(tmp_path: Path) -> None:
    """A trace that reports tokens but no cost is priced from ``--prices``: cached input at its own price; the
    table is kept in the lab's models, so the cost says where it came from."""
    file = _weather_trace(tmp_path)
    table = {"*": {"input_per_1k": 1.0, "output_per_1k": 4.0, "cached_input_per_1k": 0.5}}
    (tmp_path / "prices.json").write_text(json.dumps(table))
    lab, _, _ = run_import(tmp_path, [file], "--keep-pii", "--prices", str(tmp_path / "prices.json"))
    [row] = lab["rows"]
    # by hand: 6 input tokens of which 3 cached, 10 output tokens (2 of them reasoning)
    assert row["cost"] == pytest.approx((3 * 1.0 + 3 * 0.5 + 10 * 4.0) / 1000) and row["cost_source"] == "price_table"
    assert lab["models"][0]["prices"] == {"*": {**table["*"]}}


def test_a_bad_price_table_names_the_file_and_the_field(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from assay.apps.cli.main import app

    file = write_jsonl(tmp_path / "t.jsonl", [export(_langchain_trace(1, T0))])
    (tmp_path / "prices.json").write_text(json.dumps({"gpt-4o": {"input_per_1k": -1, "output_per_1k": 2}}))
    result = CliRunner().invoke(app, ["traces", "import", str(file), "--out", str(tmp_path / "lab.json"),
                                      "--prices", str(tmp_path / "prices.json")])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "prices.json" in result.output and "gpt-4o" in result.output and "input_per_1k" in result.output
    assert "Traceback" not in result.output
