"""A small weather bot traced by the OpenTelemetry GenAI conventions' own writers: the ``openai`` client
instrumented by OpenLLMetry (Traceloop's ``opentelemetry-instrumentation-openai``: current ``gen_ai.*``
attributes, or its event mode) or by the OpenTelemetry ``openai-v2`` instrumentation (messages as log records),
and the app's own spans with GenAI attributes (a retrieval, an agent with a sub-agent that executes a tool).
Spans and log records are exported as OTLP JSON Lines, as the Collector's file exporter writes them.

Three requests, whose figures the tests count by hand from the local server's rules (input tokens: the words
of every message sent; output tokens: the words of the reply, or of its tool calls' JSON):
- ``fee``: an app span (conversation and user ids) around a retrieval and a chat call that answers;
- ``weather``: a bare chat call whose reply is a tool call: the request ends on it;
- ``agent``: an agent span around a chat call asking for a tool, a sub-agent running the tool, and a chat call
  answering from the tool's result.
"""

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from openai import OpenAI
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as genai

from tests.traces.rag_app import write_otlp_json

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "weather-bot"
USAGE_DETAILS = {"prompt_tokens_details": {"cached_tokens": 3}, "completion_tokens_details": {"reasoning_tokens": 2}}
"""What the local server reports of every call: 3 input tokens read from the cache, 2 output tokens reasoned."""
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip
FEE_DOCUMENTS = [{"id": "fees.md", "score": 0.9, "content": "The fee is 5 EUR."},
                 {"id": "faq.md", "score": 0.4, "content": "Fees are charged monthly."}]  # fmt: skip
TOOL_RESULT = "sunny, 24 C"


def responder(body: dict[str, Any]) -> dict[str, Any]:
    """The model: asks for the weather tool when a user asks about the weather, answers from the tool's result,
    and states the fee otherwise."""
    last = body["messages"][-1]
    if last["role"] == "user" and "weather" in str(last["content"]).lower():
        return {"tool_calls": [CALL]}
    if last["role"] == "tool":
        return {"content": "It is sunny in Paris."}
    return {"content": "The fee is 5 EUR."}


class WeatherBot:
    def __init__(self, base_url: str, provider: TracerProvider) -> None:
        self.client = OpenAI(base_url=base_url, api_key="sk-test-not-a-secret", max_retries=0)
        self.tracer = provider.get_tracer(SERVICE)

    def fee(self) -> None:
        ids = {genai.GEN_AI_CONVERSATION_ID: "s-1", "user.id": "u-7"}
        with self.tracer.start_as_current_span("answer-fee", attributes=ids):
            retrieval = {genai.GEN_AI_OPERATION_NAME: "retrieval", genai.GEN_AI_RETRIEVAL_QUERY_TEXT: "fee",
                         genai.GEN_AI_RETRIEVAL_DOCUMENTS: json.dumps(FEE_DOCUMENTS)}  # fmt: skip
            with self.tracer.start_as_current_span("retrieval fees", attributes=retrieval):
                pass
            self._chat([{"role": "system", "content": "Answer briefly."},
                        {"role": "user", "content": "How much is the fee?"}])  # fmt: skip

    def weather(self) -> None:
        self._chat([{"role": "user", "content": "What is the weather in Paris?"}])

    def agent(self) -> None:
        agent = {genai.GEN_AI_OPERATION_NAME: "invoke_agent", genai.GEN_AI_AGENT_NAME: "weather-agent"}
        with self.tracer.start_as_current_span("invoke_agent weather-agent", attributes=agent):
            question = {"role": "user", "content": "Weather in Paris today?"}
            self._chat([question])
            forecaster = {genai.GEN_AI_OPERATION_NAME: "invoke_agent", genai.GEN_AI_AGENT_NAME: "forecaster"}
            with self.tracer.start_as_current_span("invoke_agent forecaster", attributes=forecaster):
                tool = {genai.GEN_AI_OPERATION_NAME: "execute_tool", genai.GEN_AI_TOOL_NAME: "get_weather",
                        genai.GEN_AI_TOOL_CALL_ID: CALL["id"],
                        genai.GEN_AI_TOOL_CALL_ARGUMENTS: CALL["function"]["arguments"],
                        genai.GEN_AI_TOOL_CALL_RESULT: TOOL_RESULT}  # fmt: skip
                with self.tracer.start_as_current_span("execute_tool get_weather", attributes=tool):
                    pass
            self._chat([question, {"role": "assistant", "content": None, "tool_calls": [CALL]},
                        {"role": "tool", "tool_call_id": CALL["id"], "content": TOOL_RESULT}])  # fmt: skip

    def _chat(self, messages: list[dict[str, Any]]) -> None:
        self.client.chat.completions.create(model="local-model", messages=messages, tools=[WEATHER_TOOL])


@contextmanager
def instrumented(instrumentor: Any, **options: Any) -> Iterator[tuple[TracerProvider, InMemorySpanExporter,
                                                                      InMemoryLogRecordExporter]]:  # fmt: skip
    """Tracer and logger providers for the bot, the openai client instrumented by ``instrumentor``."""
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    resource = Resource.create({"service.name": SERVICE})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    instrumentor.instrument(tracer_provider=provider, logger_provider=logger_provider, **options)
    try:
        yield provider, spans, logs
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        logger_provider.shutdown()


def write_otlp_logs(exporter: InMemoryLogRecordExporter, path: Path) -> int:
    """The finished log records as the Collector's file exporter writes them (one ExportLogsServiceRequest, hex
    ids), no file when there are none; returns the number written."""
    records = exporter.get_finished_logs()
    if not records:
        return 0
    request = MessageToDict(encode_logs(records), use_integers_for_enums=True)
    for resource in request.get("resourceLogs", []):
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for name in ("traceId", "spanId"):
                    if name in record:
                        record[name] = base64.b64decode(record[name]).hex()
    path.write_text(json.dumps(request) + "\n", encoding="utf-8")
    return len(records)


def _instrumentor(writer: str) -> Any:
    if writer == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as OpenAIV2Instrumentor

        return OpenAIV2Instrumentor()
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor(use_attributes=writer != "openllmetry-events")


def run_bot(url: str, writer: str, folder: Path) -> tuple[int, int]:
    """The three requests traced into ``folder`` (spans.jsonl, logs.jsonl) by ``writer`` (``openllmetry``,
    ``openllmetry-events``, ``openai-v2``), in a process of their own as an app runs: an instrumentation
    undone in a process leaves wrappers behind (OpenLLMetry's emit each event again through the earlier
    one). Returns (spans, log records) written."""
    environment = {**os.environ, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    command = [sys.executable, "-m", "tests.traces.genai_app", writer, url, str(folder)]
    done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    spans, logs = json.loads(done.stdout.strip().splitlines()[-1])
    return spans, logs


def main(writer: str, url: str, folder: Path) -> None:
    folder.mkdir(parents=True)
    with instrumented(_instrumentor(writer)) as (provider, spans, logs):
        bot = WeatherBot(url, provider)
        bot.fee()
        bot.weather()
        bot.agent()
        written = write_otlp_json(spans, folder / "spans.jsonl"), write_otlp_logs(logs, folder / "logs.jsonl")
    print(json.dumps(written))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
