"""`assay traces import --format otlp-json` on traces written by the OpenTelemetry GenAI conventions' own writers,
each checked field by field against counts made by hand (see `tests.traces.genai_app` for the requests):
OpenLLMetry's openai instrumentation as it writes today (``gen_ai.input.messages``...) and in its event mode
(log records), the OpenTelemetry ``openai-v2`` instrumentation (log records), and OpenLLMetry 0.47.5's older
indexed ``gen_ai.prompt.N.*`` attributes (a kept file, see ``data/generate_openllmetry_indexed.py``)."""

from pathlib import Path
from typing import Any

import pytest

from assay.testing.openai_server import OpenAIServer, serve_openai
from tests.traces.genai_app import FEE_DOCUMENTS, SERVICE, TOOL_RESULT, USAGE_DETAILS, responder, run_bot
from tests.traces.test_trace_files import run_import

DATA = Path(__file__).parent / "data"
ABSENT = "the last model reply was a tool call (get_weather), not an answer"
PARIS = {"city": "Paris"}
# by hand, from the local server's rules: fee 2 + 5 words in, 5 out; weather 6 in, 10 out (its tool call's JSON);
# agent 4 in and 10 out, then 4 + 0 + 3 in and 5 out
TOKENS = {"fee": (7, 5), "weather": (6, 10), "agent": (11, 15)}
CALLS = {"fee": 1, "weather": 1, "agent": 2}


@pytest.fixture(scope="module")
def server() -> Any:
    with serve_openai(OpenAIServer(responder=responder, usage_details=USAGE_DETAILS)) as running:
        yield running


@pytest.fixture(scope="module")
def openllmetry(server: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """The bot's requests traced by OpenLLMetry as it writes by default: (folder, spans, log records)."""
    folder = tmp_path_factory.mktemp("openllmetry") / "traces"
    return folder, *run_bot(server.url, "openllmetry", folder)


def _cases(lab: dict) -> dict[str, dict]:
    by_prompt = {"How much is the fee?": "fee", "What is the weather in Paris?": "weather",
                 "Weather in Paris today?": "agent"}  # fmt: skip
    return {by_prompt[row["test_case"]["prompt"]]: row for row in lab["rows"]}


def _check_requests(rows: dict[str, dict], *, cached: bool, reasoning: bool, model: str | None) -> None:
    """What every writer's three requests must import as."""
    fee, weather, agent = rows["fee"], rows["weather"], rows["agent"]
    assert fee["actual_output"] == "The fee is 5 EUR." and "answer_absent" not in fee
    assert agent["actual_output"] == "It is sunny in Paris." and "answer_absent" not in agent
    for name, row in rows.items():
        assert (row["input_tokens"], row["output_tokens"]) == TOKENS[name], name
        assert row.get("cached_input_tokens") == (3 * CALLS[name] if cached else None), name
        assert row.get("reasoning_tokens") == (2 * CALLS[name] if reasoning else None), name
        assert row["model_key"] == SERVICE and row.get("model_name") == model and row["error"] is None
    # a reply that is a tool call: the call is the outcome, the answer absent (never the reply's JSON)
    assert weather["actual_output"] is None and weather["answer_absent"] == ABSENT
    [final] = weather["tool_calls"]
    assert (final["name"], final["arguments"], final["final_reply"], final["output"]) == ("get_weather", PARIS,
                                                                                          True, None)  # fmt: skip
    # the tool ran in a sub-agent: the call stays with it
    [ran] = agent["tool_calls"]
    assert (ran["name"], ran["arguments"], ran["output"], ran["agent"]) == ("get_weather", PARIS, TOOL_RESULT,
                                                                            "invoke_agent forecaster")  # fmt: skip
    assert "final_reply" not in ran and fee["tool_calls"] == []
    assert [(chunk["doc_uri"], chunk["text"], chunk["score"]) for chunk in fee["context"]] == [
        (document["id"], document["content"], document["score"]) for document in FEE_DOCUMENTS]  # fmt: skip
    assert (fee["session_id"], fee["user_id"]) == ("s-1", "u-7")
    assert "session_id" not in weather and "user_id" not in agent
    assert fee["test_case"]["categories"] == ["answer-fee"]
    assert agent["test_case"]["categories"] == ["invoke_agent weather-agent"]


def test_openllmetry_current_attributes(openllmetry: tuple[Path, int, int], tmp_path: Path) -> None:
    folder, spans, logs = openllmetry
    assert logs == 0  # attribute mode: the messages are on the spans
    lab, report, output = run_import(tmp_path, [folder], "--keep-pii")
    rows = _cases(lab)
    _check_requests(rows, cached=True, reasoning=True, model="local-model-2026-01-01")
    assert rows["weather"]["test_case"]["categories"] == ["openai.chat"]
    assert report["spans"] == spans == 3 + 1 + 5 and report["cases"] == 3
    assert report["spans_by_kind"] == {"AGENT": 2, "LLM": 4, "RETRIEVER": 1, "TOOL": 1, "unknown": 1}
    assert report["conventions"] == {"otel-genai": 3}
    assert {row["test_case"]["generator"] for row in lab["rows"]} == {"production traces (otlp-json: otel-genai)"}
    assert "conventions read (cases): otel-genai 3" in output


def test_openllmetry_event_mode_log_records(server: Any, tmp_path: Path) -> None:
    _, logs = run_bot(server.url, "openllmetry-events", tmp_path / "traces")
    # by hand: fee 2 messages + 1 choice, weather 1 + 1, agent 1 + 1 and 3 + 1
    assert logs == 3 + 2 + 2 + 4
    lab, report, _ = run_import(tmp_path, [tmp_path / "traces"], "--keep-pii")
    rows = _cases(lab)
    _check_requests(rows, cached=True, reasoning=True, model="local-model-2026-01-01")
    assert report["log_events"] == logs
    assert report["conventions"] == {"otel-genai": 2, "otel-genai-events": 3}
    assert rows["weather"]["test_case"]["generator"] == "production traces (otlp-json: otel-genai-events)"


def test_opentelemetry_openai_v2_log_records(server: Any, tmp_path: Path) -> None:
    _, logs = run_bot(server.url, "openai-v2", tmp_path / "traces")
    assert logs == 3 + 2 + 2 + 4
    lab, report, _ = run_import(tmp_path, [tmp_path / "traces"], "--keep-pii")
    rows = _cases(lab)
    _check_requests(rows, cached=False, reasoning=False, model="local-model-2026-01-01")
    assert rows["weather"]["test_case"]["categories"] == ["chat local-model"]
    assert report["conventions"] == {"otel-genai": 2, "otel-genai-events": 3}


def test_openllmetry_older_indexed_attributes_from_a_kept_file(tmp_path: Path) -> None:
    lab, report, _ = run_import(tmp_path, [DATA / "openllmetry-0.47.5-indexed.jsonl"], "--keep-pii")
    rows = {row["test_case"]["prompt"]: row for row in lab["rows"]}
    fee, weather, agent = (rows[prompt] for prompt in ("How much is the fee?", "What is the weather in Paris?",
                                                       "Weather in Paris today?"))  # fmt: skip
    assert (fee["actual_output"], fee["input_tokens"], fee["output_tokens"]) == ("The fee is 5 EUR.", 7, 5)
    assert (fee["session_id"], fee["user_id"], fee["reasoning_tokens"]) == ("s-1", "u-7", 0)
    assert (weather["actual_output"], weather["answer_absent"]) == (None, ABSENT)
    [final] = weather["tool_calls"]
    assert (final["name"], final["arguments"], final["final_reply"]) == ("get_weather", PARIS, True)
    assert (agent["actual_output"], agent["input_tokens"], agent["output_tokens"]) == ("It is sunny in Paris.", 11, 15)
    [ran] = agent["tool_calls"]
    assert (ran["name"], ran["arguments"], ran["output"]) == ("get_weather", PARIS, TOOL_RESULT)
    assert {row["model_name"] for row in lab["rows"]} == {"local-model-2026-01-01"}
    assert report["conventions"] == {"otel-genai-indexed": 3, "otel-genai": 1}  # the app's own tool span


def test_route_from_an_attribute_of_the_root(openllmetry: tuple[Path, int, int], tmp_path: Path) -> None:
    lab, _, _ = run_import(tmp_path, [openllmetry[0]], "--route-from", "attribute:gen_ai.agent.name")
    routes = {name: row["test_case"]["categories"] for name, row in _cases(lab).items()}
    # the agent's root names it; the others have no such attribute and keep their span's name
    assert routes == {"fee": ["answer-fee"], "weather": ["openai.chat"], "agent": ["weather-agent"]}


def test_a_tool_call_reply_is_never_scored_as_an_answer(openllmetry: tuple[Path, int, int], tmp_path: Path) -> None:
    """Answer-level evaluators leave the request that ended on a tool call unscored, saying so; agent-level ones
    score its call."""
    from assay.evaluators import Services, build_evaluator, run_evaluator

    from assay.formats.native import import_native

    run_import(tmp_path, [openllmetry[0]])
    lab = import_native(tmp_path / "out" / "lab.json")
    weather = next(row.test_case.key for row in lab.rows if row.answer_absent)
    answers = run_evaluator(build_evaluator("looping_detection", Services()), lab)
    reasons = {row.test_case_key: row.unscored_reason for row in answers.rows}
    assert reasons[weather] == f"missing input: actual_output ({ABSENT})"
    assert [reason for key, reason in reasons.items() if key != weather] == [None, None]
    agents = run_evaluator(build_evaluator("agent_sanity", Services()), lab)
    scored = {row.test_case_key: row for row in agents.rows}
    assert scored[weather].unscored_reason is None and scored[weather].scores
