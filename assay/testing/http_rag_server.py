"""A local in-house RAG endpoint (the shape most banks' RAG services have) with the shared fault injection, for
the http-rag host: ``POST /rag`` takes ``{"question", "history"}`` and answers ``{"answer", "sources": [{"text",
"uri", "score"}], "usage": {"input", "output"}, "model"}``. ``empty`` answers with an empty ``answer``."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from assay.testing.faults import DroppingApp, FaultPlan, generic_fault
from assay.testing.local_app import running_app

MAPPING = {
    "answer": "$.answer",
    "contexts": "$.sources[*]",
    "context_text": "$.text",
    "context_doc_uri": "$.uri",
    "context_score": "$.score",
    "input_tokens": "$.usage.input",
    "output_tokens": "$.usage.output",
    "model_name": "$.model",
}
"""The host settings' mapping for this endpoint."""


@dataclass
class HttpRagServer:
    slow_s: float = 5.0
    retry_after_s: float = 0.0
    plan: list[str | None] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._faults = FaultPlan(self.plan)
        self.app = FastAPI()
        self.app.post("/rag")(self._rag)

    async def _rag(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        question = str(body.get("question", ""))
        fault = self._faults.next(request, question)
        faulted = await generic_fault(fault, request, _error, retry_after_s=self.retry_after_s, slow_s=self.slow_s)
        if faulted is not None:
            return faulted
        answer = "" if fault == "empty" else f"Our policy on '{question}' is in the handbook."
        return JSONResponse({
            "answer": answer,
            "sources": [{"text": "Branches open at 9.", "uri": "docs/hours.md", "score": 0.8}],
            "usage": {"input": len(question.split()), "output": len(answer.split())},
            "model": "bank-rag-v3",
        })  # fmt: skip


def _error(status: int, message: str, headers: dict[str, str] | None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


@contextmanager
def serve_http_rag(server: HttpRagServer | None = None) -> Iterator[HttpRagServer]:
    server = server or HttpRagServer()
    with running_app(DroppingApp(server.app), lifespan="off") as base_url:
        server.url = f"{base_url}/rag"
        yield server
