"""MLflow traces as MLflow records and serialises them: a small RAG app traced with MLflow's own API (``@mlflow.trace``
with a retriever returning ``Document``s, a chat model reporting token usage and its model, a tool, sessions),
each finished trace written with ``Trace.to_json()``; ``assay traces import --format mlflow`` turns them into a lab
and ``assay evaluate`` scores it offline.

No tracking server runs: MLflow logs the traces to a local tracking store (its file store) and ``mlflow.search_traces``
reads them back, so every span, id and attribute is MLflow's own.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlflow
import pytest
from mlflow.entities import Document, SpanType, Trace
from mlflow.tracing.constant import SpanAttributeKey
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.traces.mlflow import read_mlflow
from assay.traces.spans import TraceFileError
from tests.support.prefect_server import PrefectServer

runner = CliRunner()
CORPUS = {
    "kb/fees.md": "Replacing a lost card costs 5 EUR.",
    "kb/limits.md": "The daily cash withdrawal limit is 1000 EUR.",
}
RATE = {"product": "savings", "rate": 2.5}
MODEL = "gpt-4o-mini"
REQUESTS = [
    ("s-1", "How much does replacing a lost card cost?"),
    ("s-1", "What is the daily cash withdrawal limit?"),
    ("s-2", "What is the savings interest rate?"),
]
FAILING = "Please close my account"
OFFLINE_EVALUATORS = "looping_detection,pii_leakage,latency,token_count"


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(query: str) -> list[Document]:
    words = set(query.lower().split())
    scored = [(len(words & set(text.lower().split())) / len(words), uri, text) for uri, text in CORPUS.items()]
    return [Document(page_content=text, metadata={"doc_uri": uri, "score": score}, id=uri.split("/")[1])
            for score, uri, text in sorted(scored, reverse=True)]  # fmt: skip


@mlflow.trace(span_type=SpanType.TOOL, name="lookup_rate")
def lookup_rate(product: str) -> dict[str, Any]:
    return RATE


@mlflow.trace(span_type=SpanType.CHAT_MODEL, name="chat")
def chat(messages: list[dict[str, str]], model: str = MODEL) -> dict[str, Any]:
    answer = messages[0]["content"]  # answers with the context it is given
    usage = {"input_tokens": len(messages[-1]["content"].split()), "output_tokens": len(answer.split())}
    mlflow.get_current_active_span().set_attributes({
        SpanAttributeKey.CHAT_USAGE: {**usage, "total_tokens": sum(usage.values())}, SpanAttributeKey.MODEL: model,
    })  # fmt: skip
    return {"choices": [{"message": {"role": "assistant", "content": answer}}], "model": model}


@mlflow.trace(span_type=SpanType.AGENT, name="answer-question")
def ask(question: str, session: str) -> str:
    mlflow.update_current_trace(session_id=session, user="customer-7")
    if question == FAILING:
        raise RuntimeError("the account service is down")
    documents = retrieve(question)
    context = documents[0].page_content
    if "rate" in question:
        context = f"The {RATE['product']} rate is {lookup_rate('savings')['rate']}%."
    reply = chat([{"role": "system", "content": context}, {"role": "user", "content": question}])
    return reply["choices"][0]["message"]["content"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Trace]]:
    """The traces of every request as MLflow stores them: logged to a local tracking store and read back with
    ``mlflow.search_traces``, oldest first."""
    store = tmp_path_factory.mktemp("mlruns")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_TRACKING_URI", store.as_uri())
        patch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # the file store: no database server needed
        patch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
        patch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
        mlflow.tracing.reset()
        try:
            experiment = mlflow.set_experiment("bank-assistant")
            for session, question in REQUESTS:
                ask(question, session)
            with pytest.raises(RuntimeError):
                ask(FAILING, "s-3")
            traces = mlflow.search_traces(
                locations=[experiment.experiment_id], order_by=["timestamp_ms ASC"], return_type="list"
            )
        finally:
            mlflow.tracing.reset()
    assert len(traces) == len(REQUESTS) + 1
    yield traces


@pytest.fixture(scope="module")
def imported(recorded: list[Trace], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("mlflow")
    file = folder / "traces.jsonl"
    file.write_text("".join(trace.to_json() + "\n" for trace in recorded), encoding="utf-8")
    out = folder / "lab.json"
    result = runner.invoke(app, ["traces", "import", str(file), "--format", "mlflow", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lab = json.loads(out.read_text())
    report = json.loads((folder / "lab.import.json").read_text())
    rows = {row["test_case"]["prompt"]: row for row in lab["rows"]}
    return {"folder": folder, "file": file, "out": out, "lab": lab, "rows": rows, "report": report}


def test_each_request_becomes_a_case_with_what_mlflow_recorded(recorded: list[Trace], imported: dict) -> None:
    rows, report = imported["rows"], imported["report"]
    assert report["traces"] == report["cases"] == 4 and report["cases_with_error"] == 1
    assert report["spans_by_kind"] == {"AGENT": 4, "LLM": 3, "RETRIEVER": 3, "TOOL": 1}
    assert report["unmapped_spans"] == [] and report["left_out"] == []
    fee = rows[REQUESTS[0][1]]
    assert fee["test_case"]["key"] == recorded[0].info.trace_id and fee["test_case"]["key"].startswith("tr-")
    assert fee["actual_output"] == CORPUS["kb/fees.md"] and fee["error"] is None
    assert [chunk["doc_uri"] for chunk in fee["context"]] == ["kb/fees.md", "kb/limits.md"]
    assert fee["context"][0]["text"] == CORPUS["kb/fees.md"] and fee["context"][0]["score"] > 0
    assert (fee["input_tokens"], fee["output_tokens"]) == (len(REQUESTS[0][1].split()), 7)
    assert fee["model_name"] == MODEL and fee["test_case"]["categories"] == ["answer-question"]
    root = recorded[0].data.spans[0]
    assert fee["actual_duration"] == pytest.approx((root.end_time_ns - root.start_time_ns) / 1e9)
    assert fee["actual_duration"] > 0


def test_sessions_and_tool_calls(recorded: list[Trace], imported: dict) -> None:
    rows = imported["rows"]
    turns = rows[REQUESTS[1][1]]["test_case"]["turns"]
    assert turns == [  # the earlier answer with the passages it was given: conversation-level groundedness
        {"role": "user", "content": REQUESTS[0][1], "context": []},
        {"role": "assistant", "content": CORPUS["kb/fees.md"],
         "context": [chunk["text"] for chunk in rows[REQUESTS[0][1]]["context"]]},
    ]  # fmt: skip
    assert CORPUS["kb/fees.md"] in turns[1]["context"]
    assert rows[REQUESTS[2][1]]["test_case"]["turns"] == [] and imported["report"]["sessions"] == 1
    [call] = rows[REQUESTS[2][1]]["tool_calls"]
    tool_span = next(span for span in recorded[2].data.spans if span.name == "lookup_rate")
    assert call["name"] == "lookup_rate" and call["arguments"] == {"product": "savings"}
    assert json.loads(call["output"]) == RATE and call["error"] is None and call["span_id"] == tool_span.span_id
    assert rows[REQUESTS[2][1]]["actual_output"] == "The savings rate is 2.5%."


def test_a_failed_request_keeps_its_question_and_error(imported: dict) -> None:
    failed = imported["rows"][FAILING]
    assert failed["actual_output"] is None and failed["context"] == []
    assert failed["error"] == "the request failed: RuntimeError: the account service is down"


@pytest.mark.parametrize("shape", ["one trace", "list", "artifact"])
def test_every_shape_mlflow_writes_reads_the_same(shape: str, recorded: list[Trace], tmp_path: Path) -> None:
    trace = recorded[2]
    documents = {
        "one trace": trace.to_json(pretty=True),
        "list": json.dumps([json.loads(item.to_json()) for item in recorded]),
        "artifact": json.dumps(trace.data.to_dict()),  # the spans MLflow keeps as the trace's traces.json artifact
    }
    path = tmp_path / "traces.json"
    path.write_text(documents[shape], encoding="utf-8")
    spans = [span for span in read_mlflow(path) if span.trace_id == trace.info.trace_id]
    assert [span.span_id for span in spans] == [span.span_id for span in trace.data.spans]
    root = spans[0]
    assert root.kind == "AGENT" and root.parent_id is None and root.status == "OK"
    assert json.loads(root.attributes["input.value"]) == {"question": REQUESTS[2][1], "session": "s-2"}
    assert root.attributes["output.value"] == "The savings rate is 2.5%."
    if shape != "artifact":  # the session is trace metadata, which the artifact does not hold
        assert (root.attributes["session.id"], root.attributes["user.id"]) == ("s-2", "customer-7")


def test_mlflow_2_traces_are_read(tmp_path: Path) -> None:
    span = {"name": "rag", "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "01" * 8}, "parent_id": None,
            "start_time": 1_700_000_000_000_000_000, "end_time": 1_700_000_000_500_000_000, "status_code": "OK",
            "status_message": "", "events": [],
            "attributes": {"mlflow.traceRequestId": '"tr-1"', "mlflow.spanType": '"CHAIN"',
                           "mlflow.spanInputs": '{"query": "Hi?"}', "mlflow.spanOutputs": '"Hello."'}}  # fmt: skip
    info = {"request_id": "tr-1", "experiment_id": "0", "timestamp_ms": 1_700_000_000_000, "execution_time_ms": 500,
            "status": "OK", "request_metadata": {"mlflow.trace.session": "s"}, "tags": {}}  # fmt: skip
    trace = {"info": info, "data": {"spans": [span], "request": '{"query": "Hi?"}', "response": '"Hello."'}}
    assert Trace.from_dict(json.loads(json.dumps(trace))).info.trace_id == "tr-1"  # MLflow reads it as MLflow 2's
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    [read] = read_mlflow(path)
    assert (read.trace_id, read.span_id, read.kind, read.duration_s) == ("tr-1", "01" * 8, "CHAIN", 0.5)
    assert (read.attributes["input.value"], read.attributes["session.id"]) == ('{"query": "Hi?"}', "s")


def _refused(path: Path, tmp_path: Path) -> str:
    out = tmp_path / "refused" / "lab.json"
    result = runner.invoke(app, ["traces", "import", str(path), "--format", "mlflow", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    return " ".join(result.output.split())


def _without_span_id(document: dict[str, Any]) -> None:
    del document["data"]["spans"][1]["span_id"]


def _ends_before_it_starts(document: dict[str, Any]) -> None:
    document["data"]["spans"][1]["end_time_unix_nano"] = 1


def _spans_not_a_list(document: dict[str, Any]) -> None:
    document["data"]["spans"] = {"span": 1}


@pytest.mark.parametrize(
    ("damage", "where", "expected"),
    [
        (_without_span_id, "line 2, data.spans[1], span_id", "field required"),
        (_ends_before_it_starts, "line 2, data.spans[1], span {id}", "ends before it starts"),
        (_spans_not_a_list, "line 2, data.spans", "expected a list of spans"),
    ],
)
def test_a_malformed_trace_names_the_file_line_and_span(
    damage: Any, where: str, expected: str, recorded: list[Trace], tmp_path: Path
) -> None:
    documents = [json.loads(trace.to_json()) for trace in recorded[:2]]
    span_id = documents[1]["data"]["spans"][1]["span_id"]
    damage(documents[1])
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    message = _refused(path, tmp_path)
    assert f"damaged.jsonl: {where.format(id=span_id)}" in message and expected in message, message


def test_a_truncated_file_names_the_span_it_cut(recorded: list[Trace], tmp_path: Path) -> None:
    whole = recorded[0].to_json()
    last = json.loads(whole)["data"]["spans"][-1]["span_id"]
    for name, text in [("cut.jsonl", whole + "\n" + whole[:-40]), ("cut.json", whole[:-40])]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        message = _refused(path, tmp_path)
        line = 2 if name.endswith(".jsonl") else 1
        assert f"{name}: line {line} column" in message and f"(in or after span {last})" in message, message
        assert "cut short (truncated)" in message, message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"resourceSpans": []}', 'line 1: expected an MLflow trace {"info": {...}, "data": {"spans": [...]}}'),
        ('[{"info": {}, "data": {"spans": []}}, 7]', "line 1, [1]: expected an MLflow trace"),
        ('{"info": [], "data": {"spans": []}}', "line 1, info: expected an object"),
        ('{"data": {"spans": ["x"]}}', "line 1, data.spans[0]: expected an MLflow span"),
        ("not json", "line 1 column 1: invalid JSON"),
    ],
)
def test_what_is_not_an_mlflow_trace_is_refused(text: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(text, encoding="utf-8")
    assert f"other.json: {expected}" in _refused(path, tmp_path)
    with pytest.raises(TraceFileError):
        list(read_mlflow(path))


@pytest.fixture(scope="module")
def evaluated(imported: dict[str, Any], prefect_server: PrefectServer) -> tuple[Any, Path]:
    out = imported["folder"] / "evaluation"
    with prefect_server.reporting():
        result = runner.invoke(
            app, ["evaluate", "--lab", str(imported["out"]), "--evaluators", OFFLINE_EVALUATORS, "--out", str(out)]
        )
    return result, out


@pytest.mark.slow
def test_the_imported_lab_is_evaluated_offline(evaluated: tuple[Any, Path], imported: dict) -> None:
    result, out = evaluated
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    [model] = summary["models"]
    assert (model["answered"], model["host_failures"]) == (3, 1)
    for evaluator in OFFLINE_EVALUATORS.split(","):
        results = json.loads((out / evaluator / "results.json").read_text())["results"]
        assert len(results) == 4, evaluator
    metrics = summary["metrics"][model["key"]]
    assert set(OFFLINE_EVALUATORS.split(",")) <= set(metrics)
    tokens = json.loads((out / "token_count" / "results.json").read_text())["results"]
    fee = next(row for row in tokens if row["input"] == REQUESTS[0][1])
    expected = imported["rows"][REQUESTS[0][1]]
    assert fee["total_token_count"] == expected["input_tokens"] + expected["output_tokens"]
