"""`assay traces import` on hand-built OTLP JSON and OpenInference span files: what a trace maps to, the window,
the sample, masking, the report, and every malformed file refused with its file, line and span."""

import base64
import json
import uuid
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.traces import ImportOptions, SampleSize, import_traces, trace_files
from assay.traces.spans import TraceFileError

runner = CliRunner()
T0 = 1_780_000_000  # 2026-05-28T20:26:40Z, in seconds
CARD = "4111 1111 1111 1111"  # Luhn-valid test card number


def trace_id(number: int) -> str:
    return f"{number:032x}"


def span_id(number: int) -> str:
    return f"{number:016x}"


def otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [otlp_value(item) for item in value]}}
    return {"stringValue": str(value)}


def otlp_span(
    trace: int, span: int, parent: int | None, name: str, kind: str | None, start: float, end: float,
    status: int = 0, message: str = "", **attributes: Any,
) -> dict[str, Any]:  # fmt: skip
    """One OTLP JSON span as the Collector's file exporter writes it (hex ids, integer enums, nanos as strings);
    ``attributes`` use ``__`` for dots."""
    if kind:
        attributes["openinference__span__kind"] = kind
    raw: dict[str, Any] = {
        "traceId": trace_id(trace), "spanId": span_id(span), "name": name, "kind": 1,
        "startTimeUnixNano": str(int(start * 1e9)), "endTimeUnixNano": str(int(end * 1e9)),
        "attributes": [{"key": key.replace("__", "."), "value": otlp_value(item)} for key, item in attributes.items()],
        "status": {"code": status, "message": message} if status else {},
    }  # fmt: skip
    if parent is not None:
        raw["parentSpanId"] = span_id(parent)
    return raw


def export(spans: list[dict[str, Any]], service: str = "rag-app") -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]}


def write_jsonl(path: Path, documents: list[Any]) -> Path:
    path.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    return path


def documents(*found: tuple[str, str, float]) -> dict[str, Any]:
    """RETRIEVER attributes for ``(id, content, score)`` documents, in retrieval order."""
    attributes: dict[str, Any] = {}
    for index, (uri, content, score) in enumerate(found):
        prefix = f"retrieval__documents__{index}__document__"
        attributes |= {f"{prefix}id": uri, f"{prefix}content": content, f"{prefix}score": score}
    return attributes


def rag_trace(trace: int, start: float, question: str = "What is the fee?", route: str = "rag",
              **root: Any) -> list[dict[str, Any]]:  # fmt: skip
    """A request: CHAIN root, RETRIEVER with two documents, LLM with usage, a TOOL that failed, an EMBEDDING."""
    base = trace * 10
    return [
        otlp_span(trace, base, None, route, "CHAIN", start, start + 2.0, input__value=question,
                  output__value=json.dumps({"answer": "The fee is 5 EUR."}), **root),
        otlp_span(trace, base + 1, base, "retrieve", "RETRIEVER", start + 0.1, start + 0.3,
                  **documents(("fees.md", "The fee is 5 EUR.", 0.9), ("faq.md", "Fees are monthly.", 0.4))),
        otlp_span(trace, base + 2, base, "ChatCompletion", "LLM", start + 0.5, start + 1.5,
                  llm__model_name="gpt-4o-mini", llm__token_count__prompt=120, llm__token_count__completion=30,
                  llm__cost__total=0.002),
        otlp_span(trace, base + 3, base, "lookup_account", "TOOL", start + 1.5, start + 1.7, status=2,
                  message="timeout after 5 s", tool__name="lookup_account", input__value='{"account": "A-1"}'),
        otlp_span(trace, base + 4, base, "embed", "EMBEDDING", start + 0.05, start + 0.09),
    ]  # fmt: skip


def run_import(tmp_path: Path, files: list[Path], *args: str, fmt: str = "otlp-json") -> tuple[dict, dict, str]:
    out = tmp_path / "out" / "lab.json"
    result = runner.invoke(app, ["traces", "import", *map(str, files), "--format", fmt, "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    lab = json.loads(out.read_text())
    report = json.loads(out.with_name("lab.import.json").read_text())
    return lab, report, result.output


def rows_by_key(lab: dict) -> dict[str, dict]:
    return {row["test_case"]["key"]: row for row in lab["rows"]}


def refused(tmp_path: Path, source: Path, fmt: str = "otlp-json") -> str:
    """The one-line error of an import that must exit 2 without writing a lab."""
    out = tmp_path / "refused" / "lab.json"
    result = runner.invoke(app, ["traces", "import", str(source), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    return " ".join(result.output.split())


# --- mapping ------------------------------------------------------------------------------------------------


def test_otlp_trace_maps_question_answer_documents_usage_and_failed_tool(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "traces.jsonl", [export(rag_trace(1, T0))])
    lab, report, output = run_import(tmp_path, [file], "--keep-pii")
    row = rows_by_key(lab)[trace_id(1)]
    assert row["test_case"]["prompt"] == "What is the fee?"
    assert row["test_case"]["categories"] == ["rag"]
    assert row["actual_output"] == "The fee is 5 EUR."
    assert [(chunk["doc_uri"], chunk["text"], chunk["score"]) for chunk in row["context"]] == [
        ("fees.md", "The fee is 5 EUR.", 0.9), ("faq.md", "Fees are monthly.", 0.4)]  # fmt: skip
    assert (row["input_tokens"], row["output_tokens"], row["cost"]) == (120, 30, 0.002)
    assert row["cost_source"] == "reported" and row["model_name"] == "gpt-4o-mini"
    assert row["model_key"] == "rag-app" and row["actual_duration"] == pytest.approx(2.0)
    [call] = row["tool_calls"]
    assert call["name"] == "lookup_account" and call["arguments"] == {"account": "A-1"}
    assert call["error"] == "timeout after 5 s" and call["span_id"] == span_id(13)
    assert row["error"] is None
    assert lab["models"] == [{**lab["models"][0], "key": "rag-app", "type": "traces"}]
    assert report["spans"] == 5 and report["traces"] == 1 and report["cases"] == 1
    assert report["spans_by_kind"] == {"CHAIN": 1, "EMBEDDING": 1, "LLM": 1, "RETRIEVER": 1, "TOOL": 1}
    assert report["conventions"] == {"openinference": 1}
    assert row["test_case"]["generator"] == "production traces (otlp-json: openinference)"
    assert "imported 1 requests" in output


def test_llm_requested_tool_calls_stand_in_when_no_tool_span(tmp_path: Path) -> None:
    calls = "llm__output_messages__0__message__tool_calls__0__tool_call__function__"
    spans = [
        otlp_span(2, 20, None, "agent", "AGENT", T0, T0 + 1, input__value="Weather in Paris?", output__value="Sunny."),
        otlp_span(2, 21, 20, "ChatCompletion", "LLM", T0 + 0.1, T0 + 0.5, **{
            f"{calls}name": "get_weather", f"{calls}arguments": '{"city": "Paris"}',
            "llm__output_messages__0__message__role": "assistant"}),
    ]  # fmt: skip
    lab, _, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    [call] = lab["rows"][0]["tool_calls"]
    assert (call["name"], call["arguments"], call["error"]) == ("get_weather", {"city": "Paris"}, None)


def test_question_and_answer_fall_back_to_llm_messages(tmp_path: Path) -> None:
    spans = [
        otlp_span(3, 30, None, "chat", "CHAIN", T0, T0 + 1),
        otlp_span(3, 31, 30, "ChatCompletion", "LLM", T0 + 0.1, T0 + 0.9, **{
            "llm__input_messages__0__message__role": "system", "llm__input_messages__0__message__content": "Be brief.",
            "llm__input_messages__1__message__role": "user", "llm__input_messages__1__message__content": "Hi there?",
            "llm__output_messages__0__message__role": "assistant",
            "llm__output_messages__0__message__content": "Hello."}),
    ]  # fmt: skip
    lab, _, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    row = lab["rows"][0]
    assert (row["test_case"]["prompt"], row["actual_output"]) == ("Hi there?", "Hello.")


def test_failed_request_keeps_its_error(tmp_path: Path) -> None:
    spans = [otlp_span(4, 40, None, "rag", "CHAIN", T0, T0 + 1, status=2, message="upstream 503", input__value="Q?")]
    lab, report, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    assert lab["rows"][0]["error"] == "the request failed: upstream 503"
    assert report["cases_with_error"] == 1


def test_session_gives_later_requests_their_earlier_turns(tmp_path: Path) -> None:
    turns = [
        otlp_span(50 + n, 500 + n, None, "chat", "CHAIN", T0 + 60 * n, T0 + 60 * n + 1, input__value=f"question {n}",
                  output__value=f"answer {n}", session__id="conversation-1")
        for n in (2, 0, 1)  # out of order in the file: turns follow start times
    ]  # fmt: skip
    alone = otlp_span(60, 600, None, "chat", "CHAIN", T0, T0 + 1, input__value="alone", session__id="other")
    lab, report, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export([*turns, alone])])])
    rows = rows_by_key(lab)
    history = [(turn["role"], turn["content"]) for turn in rows[trace_id(52)]["test_case"]["turns"]]
    assert history == [("user", "question 0"), ("assistant", "answer 0"), ("user", "question 1"),
                       ("assistant", "answer 1")]  # fmt: skip
    assert rows[trace_id(50)]["test_case"]["turns"] == [] and rows[trace_id(60)]["test_case"]["turns"] == []
    assert report["sessions"] == 1


def test_session_turns_survive_the_window(tmp_path: Path) -> None:
    turns = [
        otlp_span(70 + n, 700 + n, None, "chat", "CHAIN", T0 + 3600 * n, T0 + 3600 * n + 1,
                  input__value=f"question {n}", output__value=f"answer {n}", session__id="s")
        for n in range(2)
    ]  # fmt: skip
    since = "2026-05-28T21:00:00+00:00"  # after the first turn
    lab, _, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(turns)])], "--since", since)
    [row] = lab["rows"]
    assert [turn["content"] for turn in row["test_case"]["turns"]] == ["question 0", "answer 0"]


# --- window and sample --------------------------------------------------------------------------------------


def test_since_until_window_is_half_open(tmp_path: Path) -> None:
    traces = [otlp_span(80 + h, 800 + h, None, "rag", "CHAIN", T0 + 3600 * h, T0 + 3600 * h + 1, input__value=f"q{h}")
              for h in range(4)]  # fmt: skip
    file = write_jsonl(tmp_path / "t.jsonl", [export(traces)])
    since, until = "2026-05-28T21:26:40+00:00", "2026-05-28T23:26:40+00:00"  # T0 + 1 h, T0 + 3 h
    lab, report, _ = run_import(tmp_path, [file], "--since", since, "--until", until)
    assert sorted(rows_by_key(lab)) == [trace_id(81), trace_id(82)]
    [outside] = report["left_out"]
    assert outside["reason"].startswith("started outside")
    assert sorted(outside["examples"]) == [trace_id(80), trace_id(83)]
    assert report["window"] == {"since": since, "until": until}


def test_window_without_zone_is_utc(tmp_path: Path) -> None:
    traces = [otlp_span(90 + h, 900 + h, None, "rag", "CHAIN", T0 + 3600 * h, T0 + 3600 * h + 1, input__value="q")
              for h in range(2)]  # fmt: skip
    file = write_jsonl(tmp_path / "t.jsonl", [export(traces)])
    lab, _, _ = run_import(tmp_path, [file], "--since", "2026-05-28T21:00")
    assert list(rows_by_key(lab)) == [trace_id(91)]


def sample_file(tmp_path: Path) -> Path:
    """30 requests on three routes: 20 on faq, 7 on billing, 3 on complaints."""
    routes = ["faq"] * 20 + ["billing"] * 7 + ["complaints"] * 3
    spans = [otlp_span(1000 + n, 10_000 + n, None, route, "CHAIN", T0 + n, T0 + n + 1, input__value=f"q{n}")
             for n, route in enumerate(routes)]  # fmt: skip
    return write_jsonl(tmp_path / "t.jsonl", [export(spans[:15]), export(spans[15:])])


def test_sample_is_stratified_by_route_and_repeatable(tmp_path: Path) -> None:
    file = sample_file(tmp_path)
    first, report, output = run_import(tmp_path, [file], "--sample", "10", "--seed", "7")
    again, _, _ = run_import(tmp_path, [file], "--sample", "10", "--seed", "7")
    assert list(rows_by_key(first)) == list(rows_by_key(again))
    routes = Counter(row["test_case"]["categories"][0] for row in first["rows"])
    assert len(first["rows"]) == 10 and set(routes) == {"faq", "billing", "complaints"}
    strata = {stratum["name"]: (stratum["traces"], stratum["sampled"]) for stratum in report["strata"]}
    assert strata == {name: (total, routes[name]) for name, total in (("faq", 20), ("billing", 7), ("complaints", 3))}
    assert sum(sampled for _, sampled in strata.values()) == 10
    [not_drawn] = report["left_out"]
    assert not_drawn["count"] == 20 and report["seed"] == 7 and report["stratified_by"] == "route"
    assert "sampled" in output


def test_sample_seeds_and_fractions(tmp_path: Path) -> None:
    files = trace_files([sample_file(tmp_path)])
    labs = [import_traces(files, ImportOptions(sample=SampleSize(count=10), seed=seed))[0] for seed in range(5)]
    drawn = [{row.test_case.key for row in lab.rows} for lab in labs]
    assert len({frozenset(keys) for keys in drawn}) > 1  # other seeds, other samples
    lab, report = import_traces(files, ImportOptions(sample=SampleSize.parse("10%"), seed=1))
    assert len(lab.rows) == 3 and {row.test_case.categories[0] for row in lab.rows} == {"faq", "billing", "complaints"}
    assert report.sample == "0.1"
    lab, _ = import_traces(files, ImportOptions(sample=SampleSize(count=100)))
    assert len(lab.rows) == 30


# --- privacy ------------------------------------------------------------------------------------------------


def pii_file(tmp_path: Path) -> Path:
    question = f"My email is jane.doe@example.com and my card is {CARD}, why was I charged?"
    spans = [otlp_span(110, 1100, None, "rag", "CHAIN", T0, T0 + 1, input__value=question,
                       output__value="We will email jane.doe@example.com.")]  # fmt: skip
    return write_jsonl(tmp_path / "t.jsonl", [export(spans)])


def test_pii_is_masked_by_default(tmp_path: Path) -> None:
    lab, report, output = run_import(tmp_path, [pii_file(tmp_path)])
    row = lab["rows"][0]
    assert row["test_case"]["prompt"] == "My email is [PII:email] and my card is [PII:credit_card], why was I charged?"
    assert row["actual_output"] == "We will email [PII:email]."
    assert report["masked"] == {"credit_card": 1, "email": 2} and report["pii_masked"]
    assert "jane.doe" not in json.dumps(lab) and "4111" not in json.dumps(lab)
    assert "masked: credit_card 1, email 2" in output


def test_keep_pii_keeps_it(tmp_path: Path) -> None:
    lab, report, output = run_import(tmp_path, [pii_file(tmp_path)], "--keep-pii")
    prompt = lab["rows"][0]["test_case"]["prompt"]
    assert "jane.doe@example.com" in prompt and CARD in prompt
    assert report["masked"] == {} and not report["pii_masked"]
    assert "--keep-pii" in output


# --- the report ---------------------------------------------------------------------------------------------


def test_report_counts_unmapped_orphan_and_rootless(tmp_path: Path) -> None:
    spans = [
        *rag_trace(120, T0),
        otlp_span(120, 1299, 777, "late_rerank", "RERANKER", T0 + 1, T0 + 1.1),  # its parent is in no file
        otlp_span(120, 1298, 1200, "guard", None, T0 + 1.8, T0 + 1.9),
        otlp_span(121, 1211, 1210, "retrieve", "RETRIEVER", T0, T0 + 1),  # its root was never exported
        otlp_span(122, 1220, None, "noop", "CHAIN", T0, T0 + 1),  # no question anywhere
    ]  # fmt: skip
    lab, report, output = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    assert list(rows_by_key(lab)) == [trace_id(120)]
    unmapped = {(item["kind"], item["name"]): item["count"] for item in report["unmapped_spans"]}
    assert unmapped == {("EMBEDDING", "embed"): 1, ("RERANKER", "late_rerank"): 1, ("unknown", "guard"): 1}
    assert report["orphan_spans"] == 2  # the reranker, and the retriever of the rootless trace
    reasons = {left["reason"]: left["examples"] for left in report["left_out"]}
    assert reasons["root span missing from the files (an incomplete export)"] == [trace_id(121)]
    assert reasons["no question found (no input.value on the root, no user message to an LLM)"] == [trace_id(122)]
    assert "3 spans not mapped" in output and "2 spans have a parent in no file read" in output


def test_duplicate_spans_are_read_once(tmp_path: Path) -> None:
    document = export(rag_trace(130, T0))
    lab, report, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [document, document])])
    assert len(lab["rows"]) == 1 and len(lab["rows"][0]["context"]) == 2 and report["spans"] == 10
    assert report["left_out"][0]["count"] == 5


def test_folder_of_files_and_whole_file_json(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    (folder / "day2").mkdir(parents=True)
    write_jsonl(folder / "a.jsonl", [export(rag_trace(140, T0))])
    (folder / "day2" / "b.json").write_text(json.dumps(export(rag_trace(141, T0 + 5)), indent=2))
    (folder / "notes.txt").write_text("not a trace")
    lab, report, _ = run_import(tmp_path, [folder])
    assert list(rows_by_key(lab)) == [trace_id(140), trace_id(141)] and len(report["files"]) == 2


def test_ids_in_base64_as_protobuf_json_writes_them(tmp_path: Path) -> None:
    spans = rag_trace(150, T0)
    for span in spans:
        for name in ("traceId", "spanId", "parentSpanId"):
            if name in span:
                span[name] = base64.b64encode(bytes.fromhex(span[name])).decode("ascii")
    lab, _, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    [row] = lab["rows"]
    assert row["test_case"]["key"] == trace_id(150) and len(row["context"]) == 2


# --- OpenInference span JSON --------------------------------------------------------------------------------


def openinference_spans(trace: str = "ab" * 16) -> list[dict[str, Any]]:
    """The request of `rag_trace` as Phoenix exports it: nested attributes on some spans, dotted on others."""

    def span(span: str, parent: str | None, name: str, kind: str, start: str, end: str, **fields: Any) -> dict:
        return {"name": name, "context": {"trace_id": trace, "span_id": span}, "parent_id": parent, "span_kind": kind,
                "start_time": f"2026-05-28T20:26:{start}+00:00", "end_time": f"2026-05-28T20:26:{end}Z",
                "status_code": "OK", "status_message": "", "events": [], "id": "U3BhbjoxMjM=", **fields}  # fmt: skip

    return [
        span("0000000000000a00", None, "rag", "CHAIN", "40", "42", attributes={
            "input": {"value": "What is the fee?"}, "output": {"value": '{"answer": "The fee is 5 EUR."}'},
            "session": {"id": "s-1"}}),
        span("0000000000000a01", "0000000000000a00", "retrieve", "RETRIEVER", "40.100", "40.300", attributes={
            "retrieval": {"documents": [
                {"document": {"id": "fees.md", "content": "The fee is 5 EUR.", "score": 0.9}},
                {"document": {"id": "faq.md", "content": "Fees are monthly.", "score": 0.4}}]}}),
        span("0000000000000a02", "0000000000000a00", "ChatCompletion", "LLM", "40.5", "41.5", attributes={
            "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 120, "llm.token_count.completion": 30,
            "llm.cost.total": 0.002}),
        span("0000000000000a03", "0000000000000a00", "lookup_account", "TOOL", "41.5", "41.7",
             status_code="ERROR", status_message="timeout after 5 s",
             attributes={"tool": {"name": "lookup_account"}, "input": {"value": '{"account": "A-1"}'}}),
    ]  # fmt: skip


@pytest.mark.parametrize("layout", ["jsonl", "list", "page", "pages_per_line"])
def test_openinference_files_map_like_otlp(tmp_path: Path, layout: str) -> None:
    spans = openinference_spans()
    file = tmp_path / ("spans.jsonl" if layout in ("jsonl", "pages_per_line") else "spans.json")
    if layout == "jsonl":
        write_jsonl(file, spans)
    elif layout == "list":
        file.write_text(json.dumps(spans, indent=2))
    elif layout == "page":
        file.write_text(json.dumps({"data": spans, "next_cursor": None}, indent=2))
    else:
        write_jsonl(file, [{"data": spans[:2], "next_cursor": "x"}, {"data": spans[2:], "next_cursor": None}])
    lab, report, _ = run_import(tmp_path, [file], "--keep-pii", fmt="openinference")
    [row] = lab["rows"]
    assert row["test_case"]["key"] == "ab" * 16 and row["test_case"]["prompt"] == "What is the fee?"
    assert row["actual_output"] == "The fee is 5 EUR." and row["actual_duration"] == pytest.approx(2.0)
    assert [(chunk["doc_uri"], chunk["score"]) for chunk in row["context"]] == [("fees.md", 0.9), ("faq.md", 0.4)]
    assert (row["input_tokens"], row["output_tokens"], row["cost"]) == (120, 30, 0.002)
    assert row["model_name"] == "gpt-4o-mini"
    [call] = row["tool_calls"]
    assert (call["name"], call["arguments"]) == ("lookup_account", {"account": "A-1"})
    assert call["error"] == "timeout after 5 s"
    assert call["duration"] == pytest.approx(0.2)
    assert report["format"] == "openinference" and report["spans_by_kind"]["LLM"] == 1


def test_openinference_kind_from_attributes_and_lower_case_status(tmp_path: Path) -> None:
    [root, *_] = openinference_spans()
    root.pop("span_kind")
    root["attributes"]["openinference.span.kind"] = "chain"
    root["status_code"] = "error"
    root["parent_id"] = ""
    lab, report, _ = run_import(tmp_path, [write_jsonl(tmp_path / "s.jsonl", [root])], fmt="openinference")
    assert report["spans_by_kind"] == {"CHAIN": 1} and lab["rows"][0]["error"] == "the request failed (no message)"


def openinference_refusal(tmp_path: Path, change: Any, layout: str = "jsonl") -> str:
    spans = openinference_spans()
    change(spans[2])
    if layout == "jsonl":
        file = write_jsonl(tmp_path / "spans.jsonl", spans)
    else:
        file = tmp_path / "spans.json"
        file.write_text(json.dumps({"data": spans}, indent=2))
    return refused(tmp_path, file, fmt="openinference")


def test_openinference_time_without_zone_names_line_span_and_field(tmp_path: Path) -> None:
    message = openinference_refusal(tmp_path, lambda span: span.update(start_time="2026-05-28T20:26:40"))
    assert "spans.jsonl: line 3, span 0000000000000a02, start_time:" in message and "timezone" in message


def test_openinference_missing_trace_id_in_a_page_names_the_index(tmp_path: Path) -> None:
    message = openinference_refusal(tmp_path, lambda span: span["context"].pop("trace_id"), layout="page")
    assert "spans.json: line 1, data[2], span 0000000000000a02, context.trace_id:" in message


def test_openinference_end_before_start_and_bad_status(tmp_path: Path) -> None:
    message = openinference_refusal(tmp_path, lambda span: span.update(end_time="2026-05-28T20:26:39Z"))
    assert "line 3, span 0000000000000a02: end_time is before start_time" in message
    message = openinference_refusal(tmp_path, lambda span: span.update(status_code="FINE"))
    assert "line 3, span 0000000000000a02, status_code:" in message and "'ERROR'" in message


def test_openinference_file_cut_inside_a_span(tmp_path: Path) -> None:
    lines = [json.dumps(span) for span in openinference_spans()]
    file = tmp_path / "cut.jsonl"
    file.write_text("\n".join(lines[:2]) + "\n" + lines[2][: lines[2].index('"span_id"') + 40])
    message = refused(tmp_path, file, fmt="openinference")
    assert "cut.jsonl: line 3" in message and "span 0000000000000a02" in message and "truncated" in message


def test_openinference_refuses_an_otlp_file(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "otlp.jsonl", [export(rag_trace(1, T0))])
    message = refused(tmp_path, file, fmt="openinference")
    assert "otlp.jsonl: line 1" in message and "name" in message and "context" in message


# --- malformed files ----------------------------------------------------------------------------------------


def test_file_cut_inside_a_span_names_line_and_span(tmp_path: Path) -> None:
    lines = [json.dumps(export(rag_trace(n, T0 + n))) for n in (1, 2)]
    cut_at = lines[1].index('"spanId": "' + span_id(23))
    file = tmp_path / "cut.jsonl"
    file.write_text(lines[0] + "\n" + lines[1][: cut_at + 60])
    message = refused(tmp_path, file)
    assert "cut.jsonl: line 2" in message and f"span {span_id(23)}" in message and "truncated" in message


def test_whole_file_json_cut_short(tmp_path: Path) -> None:
    text = json.dumps(export(rag_trace(1, T0)), indent=2)
    file = tmp_path / "cut.json"
    file.write_text(text[: len(text) // 2])
    assert "cut.json: line " in refused(tmp_path, file)


def test_non_hex_span_id(tmp_path: Path) -> None:
    spans = rag_trace(1, T0)
    spans[2]["spanId"] = "zz" * 8
    message = refused(tmp_path, write_jsonl(tmp_path / "t.jsonl", [export(spans)]))
    assert "t.jsonl: line 1, resourceSpans[0].scopeSpans[0].spans[2].spanId, span zzzzzzzzzzzzzzzz" in message
    assert "is not a hex id" in message


def test_missing_trace_id(tmp_path: Path) -> None:
    spans = rag_trace(1, T0)
    del spans[1]["traceId"]
    message = refused(tmp_path, write_jsonl(tmp_path / "t.jsonl", [export(spans), export(rag_trace(2, T0))]))
    assert f"t.jsonl: line 1, resourceSpans[0].scopeSpans[0].spans[1], span {span_id(11)}" in message
    assert "traceId" in message


def test_end_before_start(tmp_path: Path) -> None:
    spans = rag_trace(1, T0)
    spans[3]["endTimeUnixNano"] = str(int((T0 - 1) * 1e9))
    message = refused(tmp_path, write_jsonl(tmp_path / "t.jsonl", [export(rag_trace(2, T0)), export(spans)]))
    assert f"line 2, resourceSpans[0].scopeSpans[0].spans[3], span {span_id(13)}" in message
    assert "endTimeUnixNano is before startTimeUnixNano" in message


def test_unknown_field_and_bad_enum_name_the_span(tmp_path: Path) -> None:
    spans = rag_trace(1, T0)
    spans[0]["kind"] = "SPAN_KIND_NOPE"
    message = refused(tmp_path, write_jsonl(tmp_path / "t.jsonl", [export(spans)]))
    assert f"spans[0], span {span_id(10)}" in message and "not an OTLP Span" in message


@pytest.mark.parametrize(
    ("document", "found"),
    [({"spans": []}, '{"spans": []}'), ([1, 2], "[1, 2]"), ({"resourceSpans": {}}, '{"resourceSpans": {}}')],
)
def test_document_that_is_not_an_export(tmp_path: Path, document: Any, found: str) -> None:
    message = refused(tmp_path, write_jsonl(tmp_path / "t.jsonl", [export(rag_trace(1, T0)), document]))
    assert 't.jsonl: line 2: expected an OTLP JSON export {"resourceSpans": [...]}' in message and found in message


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
@pytest.mark.parametrize("name", ["empty.jsonl", "empty.json"])
def test_empty_file(tmp_path: Path, text: str, name: str) -> None:
    file = tmp_path / name
    file.write_text(text)
    assert f"{name}: file is empty" in refused(tmp_path, file)


def test_folder_without_trace_files(tmp_path: Path) -> None:
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "readme.txt").write_text("no traces here")
    assert "nothing: the folder holds no .json or .jsonl trace file" in refused(tmp_path, folder)


def test_missing_file_and_bad_options(tmp_path: Path) -> None:
    assert "missing.jsonl: no such file or folder" in refused(tmp_path, tmp_path / "missing.jsonl")
    file = write_jsonl(tmp_path / "t.jsonl", [export(rag_trace(1, T0))])
    out = str(tmp_path / "lab.json")
    for args, expected in [
        (["--format", "zipkin"], "--format 'zipkin'"),
        (["--sample", "lots"], "--sample 'lots'"),
        (["--since", "yesterday"], "--since 'yesterday'"),
    ]:
        result = runner.invoke(app, ["traces", "import", str(file), "--out", out, *args])
        assert result.exit_code == 2 and expected in result.output, result.output


def test_reader_error_is_a_trace_file_error(tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    file.write_text('{"resourceSpans": [}\n')
    with pytest.raises(TraceFileError, match=r"t\.jsonl: line 1 column"):
        import_traces(trace_files([file]), ImportOptions())


def test_attributes_an_import_keeps_map_every_trace_as_all_of_them_do(tmp_path: Path) -> None:
    from assay.traces.mapping import map_trace, mapped_attributes
    from assay.traces.otlp import read_otlp

    calls = "llm__output_messages__0__message__tool_calls__0__tool_call__function__"
    messages = {"llm__input_messages__0__message__role": "user", "llm__input_messages__0__message__content": "Hi?",
                "llm__output_messages__0__message__role": "assistant",
                "llm__output_messages__0__message__content": "Yo."}  # fmt: skip
    spans = [
        *rag_trace(1, T0, session__id="s"),
        otlp_span(2, 20, None, "chat", "CHAIN", T0, T0 + 1, embedding__model_name="e", metadata="{}"),
        otlp_span(2, 21, 20, "ChatCompletion", "LLM", T0, T0 + 1, input__value="{}", **messages,
                  **{f"{calls}name": "f", f"{calls}arguments": "{}"}, session__id="s2", llm__token_count__prompt=3),
        otlp_span(3, 30, None, "ChatCompletion", "LLM", T0, T0 + 1, input__value="Q?", llm__model_name="m",
                  llm__token_count__prompt=4, llm__cost__total=0.1, **messages),
        otlp_span(3, 31, 30, "tool", "TOOL", T0, T0 + 1, tool_call__function__name="g",
                  tool_call__function__arguments='{"x": 1}', output__value="done", retrieval__documents__0__x="y"),
        otlp_span(3, 32, 30, "retrieve", "RETRIEVER", T0, T0 + 1, input__value="Q?", **documents(("d", "D", 1.0))),
    ]  # fmt: skip
    read = list(read_otlp(write_jsonl(tmp_path / "t.jsonl", [export(spans)])))
    for trace in {span.trace_id for span in read}:
        full = [span for span in read if span.trace_id == trace]
        kept = [replace(span, attributes=mapped_attributes(span)) for span in full]
        [root] = [span for span in full if not span.parent_id]
        [kept_root] = [span for span in kept if not span.parent_id]
        assert map_trace(kept_root, kept) == map_trace(root, full)
        assert sum(map(len, (span.attributes for span in kept))) < sum(map(len, (span.attributes for span in full)))


def test_registered_secrets_are_redacted_even_when_nothing_else_loaded_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's secret key and the judge's API key, echoed in a trace, never reach the lab, its report or the
    terminal: the import loads the settings (which registers them) before reading a local file. Fresh values,
    so no earlier test in this process can have registered them already."""
    store_secret = f"store-{uuid.uuid4().hex}"
    judge_key = f"sk-judge-{uuid.uuid4().hex}"
    monkeypatch.setenv("ASSAY_STORE__SECRET_KEY", store_secret)
    monkeypatch.setenv("ASSAY_JUDGE__API_KEY_ENV", "TRACE_TEST_JUDGE_KEY")
    monkeypatch.setenv("TRACE_TEST_JUDGE_KEY", judge_key)
    spans = [otlp_span(130, 1300, None, "rag", "CHAIN", T0, T0 + 1, input__value=f"Is {store_secret} valid?",
                       output__value=f"The judge key is {judge_key}.")]  # fmt: skip
    lab, report, output = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    written = json.dumps(lab) + json.dumps(report) + output
    assert store_secret not in written and judge_key not in written
    row = lab["rows"][0]
    assert row["test_case"]["prompt"] == "Is [REDACTED:ASSAY_STORE__SECRET_KEY] valid?"
    assert row["actual_output"] == "The judge key is [REDACTED:TRACE_TEST_JUDGE_KEY]."
    assert report["masked"]["secret"] == 2
