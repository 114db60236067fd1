"""A small bank-assistant RAG app traced the way production apps are: the OpenTelemetry SDK, OpenInference's
instrumentation of the ``openai`` client (its LLM spans are the library's, not ours), and the app's own
CHAIN, RETRIEVER and TOOL spans with OpenInference attributes. Its spans are exported as OTLP JSON Lines in
the form the OpenTelemetry Collector's file exporter writes (hex ids, enums as numbers)."""

import base64
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

CORPUS = {
    "fees.md": "Replacing a lost card costs 5 EUR. Replacement cards arrive within five working days.",
    "limits.md": "The daily cash withdrawal limit is 500 EUR. Limits can be raised in the app for one day.",
    "rates.md": "Savings accounts pay a variable interest rate, published daily on the rates page.",
}
RATE = {"product": "savings", "rate": "2.1%"}
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND


def answer_from_context(body: dict[str, Any]) -> dict[str, Any]:
    """The model behind the local server: answers with the first sentence of the context it was given."""
    system = next(message["content"] for message in body["messages"] if message["role"] == "system")
    context = system.split("Context:\n", 1)[1].strip()
    first = re.split(r"(?<=\.)\s", context, maxsplit=1)[0] if context else "I do not know."
    return {"content": first}


class BankAssistant:
    def __init__(self, base_url: str, provider: TracerProvider) -> None:
        self.client = OpenAI(base_url=base_url, api_key="sk-test-not-a-secret", max_retries=0)
        self.tracer = provider.get_tracer("bank-assistant")

    def ask(self, question: str, session_id: str) -> str:
        attributes = {KIND: OpenInferenceSpanKindValues.CHAIN.value,
                      SpanAttributes.INPUT_VALUE: question, SpanAttributes.SESSION_ID: session_id}  # fmt: skip
        with self.tracer.start_as_current_span("answer-question", attributes=attributes) as span:
            documents = self._retrieve(question)
            extra = self._rate() if "rate" in question.lower() else ""
            context = "\n".join(CORPUS[doc] for doc, _ in documents) + extra
            reply = self.client.chat.completions.create(
                model="local-model",
                messages=[{"role": "system", "content": f"Answer from the context.\nContext:\n{context}"},
                          {"role": "user", "content": question}],
            )  # fmt: skip
            answer = reply.choices[0].message.content or ""
            span.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
            return answer

    def _retrieve(self, question: str) -> list[tuple[str, float]]:
        words = set(re.findall(r"\w+", question.lower()))
        scored = [(doc, len(words & set(re.findall(r"\w+", text.lower()))) / len(words))
                  for doc, text in CORPUS.items()]  # fmt: skip
        found = sorted((item for item in scored if item[1] > 0), key=lambda item: -item[1])[:2]
        attributes: dict[str, Any] = {KIND: OpenInferenceSpanKindValues.RETRIEVER.value,
                                      SpanAttributes.INPUT_VALUE: question}  # fmt: skip
        for index, (doc, score) in enumerate(found):
            prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{index}.document"
            attributes |= {f"{prefix}.id": doc, f"{prefix}.content": CORPUS[doc], f"{prefix}.score": score}
        with self.tracer.start_as_current_span("retrieve", attributes=attributes):
            return found

    def _rate(self) -> str:
        arguments = {"product": "savings"}
        attributes = {KIND: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: "lookup_rate",
                      SpanAttributes.INPUT_VALUE: json.dumps(arguments)}  # fmt: skip
        with self.tracer.start_as_current_span("lookup_rate", attributes=attributes) as span:
            span.set_attribute(SpanAttributes.OUTPUT_VALUE, json.dumps(RATE))
            span.set_status(Status(StatusCode.OK))
            return f" Today's savings rate is {RATE['rate']}."


@contextmanager
def traced(service: str) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A tracer provider for ``service`` with the openai client instrumented, uninstrumented afterwards."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def write_otlp_json(exporter: InMemorySpanExporter, path: Path, batch: int = 4) -> int:
    """The finished spans as the Collector's file exporter writes them: one ExportTraceServiceRequest a line,
    in batches; returns the number of spans written."""
    spans = exporter.get_finished_spans()
    with path.open("w", encoding="utf-8") as file:
        for start in range(0, len(spans), batch):
            request = MessageToDict(encode_spans(spans[start : start + batch]), use_integers_for_enums=True)
            for resource in request["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        for name in ("traceId", "spanId", "parentSpanId"):
                            if name in span:
                                span[name] = base64.b64decode(span[name]).hex()
            file.write(json.dumps(request) + "\n")
    return len(spans)
