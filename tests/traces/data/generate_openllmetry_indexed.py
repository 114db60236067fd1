"""Writes ``openllmetry-0.47.5-indexed.jsonl``: spans of OpenLLMetry's openai instrumentation (Traceloop's
``opentelemetry-instrumentation-openai``, Apache-2.0) at 0.47.5, the last series that wrote the older indexed
``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes, exported as OTLP JSON by the OpenTelemetry SDK's
own encoder. That release cannot share Assay's environment with the current one (which writes
``gen_ai.input.messages``, and which the tests drive live), so its file is kept, written by this script:

    python3.11 -m venv /tmp/openllmetry-0.47 && /tmp/openllmetry-0.47/bin/pip install \
        "opentelemetry-instrumentation-openai==0.47.5" "openai>=1.60,<2" opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-common
    .venv/bin/python -c "..."  # a fake OpenAI server: assay.testing.openai_server, see test_genai_traces.py
    /tmp/openllmetry-0.47/bin/python tests/traces/data/generate_openllmetry_indexed.py URL OUT

Three requests: an app span around a chat call that answers; a bare chat call whose reply is a tool call (the
request ends on it); an app span around a chat call asking for a tool, the app's own execute_tool span, and a
chat call that answers from the tool's result.
"""

import base64
import json
import sys

from google.protobuf.json_format import MessageToDict
from openai import OpenAI
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

WEATHER_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}

url, out = sys.argv[1], sys.argv[2]
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = provider.get_tracer("weather-bot")
client = OpenAI(base_url=url, api_key="sk-test-not-a-secret", max_retries=0)

with tracer.start_as_current_span("answer-fee", attributes={"session.id": "s-1", "user.id": "u-7"}):
    client.chat.completions.create(
        model="local-model",
        messages=[
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "How much is the fee?"},
        ],
    )
client.chat.completions.create(
    model="local-model", tools=[WEATHER_TOOL], messages=[{"role": "user", "content": "What is the weather in Paris?"}]
)
with tracer.start_as_current_span("weather-agent"):
    question = {"role": "user", "content": "Weather in Paris today?"}
    first = client.chat.completions.create(model="local-model", tools=[WEATHER_TOOL], messages=[question])
    call = first.choices[0].message.tool_calls[0]
    with tracer.start_as_current_span(
        "execute_tool get_weather",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": call.function.arguments,
            "gen_ai.tool.call.result": "sunny, 24 C",
        },
    ):
        pass
    client.chat.completions.create(
        model="local-model",
        tools=[WEATHER_TOOL],
        messages=[
            question,
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "sunny, 24 C"},
        ],
    )
provider.shutdown()

request = MessageToDict(encode_spans(exporter.get_finished_spans()), use_integers_for_enums=True)
for resource in request["resourceSpans"]:
    for scope in resource["scopeSpans"]:
        for span in scope["spans"]:
            for name in ("traceId", "spanId", "parentSpanId"):
                if name in span:
                    span[name] = base64.b64decode(span[name]).hex()
with open(out, "w", encoding="utf-8") as file:
    file.write(json.dumps(request) + "\n")
