"""A local Amazon Bedrock Agent Runtime on 127.0.0.1 answering ``RetrieveAndGenerate`` the way botocore expects
it (REST-JSON: ``POST /retrieveAndGenerate``, errors as HTTP status + ``x-amzn-errortype`` header + a
``{"message"}`` body), so the real ``boto3`` client talks to it through ``endpoint_url``.

It checks that each request is SigV4-signed for ``access_key_id`` with a credential scope naming ``region`` and
the ``bedrock`` signing name (the signature itself is not recomputed), knows a few knowledge bases of documents
with S3 and web URIs, retrieves them by word overlap, cites them, and keeps sessions (``sessionId``) with the
questions asked in each.

Faults are chosen as ``assay/testing/faults.py`` says (header, ``[fault:NAME]`` in ``input.text``, else
``server.plan``). Besides the generic names (``empty`` = ``output.text`` ""): ``401``
(UnrecognizedClientException), ``403`` (AccessDeniedException), ``expired`` (ExpiredTokenException), ``404``
(ResourceNotFoundException), ``400`` (ValidationException), ``424`` (DependencyFailedException), ``502``
(BadGatewayException), ``no_output`` (a 200 reply without ``output``).
"""

import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from assay.testing.faults import GENERIC_FAULTS, DroppingApp, FaultPlan, generic_fault
from assay.testing.local_app import running_app

FAULTS = (*GENERIC_FAULTS, "401", "403", "expired", "404", "400", "424", "502", "no_output")

DOCUMENTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "KB12345678": [
        (
            "The minimum common equity tier 1 capital ratio is 4.5 percent of risk weighted assets.",
            {"type": "S3", "s3Location": {"uri": "s3://assay-kb/basel/capital.pdf"}},
        ),
        (
            "The liquidity coverage ratio requires high quality liquid assets to cover 30 days of net outflows.",
            {"type": "S3", "s3Location": {"uri": "s3://assay-kb/basel/liquidity.pdf"}},
        ),
        (
            "The leverage ratio of tier 1 capital to total exposure must be at least 3 percent.",
            {"type": "WEB", "webLocation": {"url": "https://example.org/basel/leverage"}},
        ),
    ]
}
NO_ANSWER = "Sorry, I am unable to assist you with this request."

_ERRORS = {
    "401": (403, "UnrecognizedClientException", "The security token included in the request is invalid."),
    "403": (403, "AccessDeniedException", "User is not authorized to perform: bedrock:RetrieveAndGenerate."),
    "expired": (403, "ExpiredTokenException", "The security token included in the request is expired."),
    "404": (404, "ResourceNotFoundException", "Knowledge base not found."),
    "400": (400, "ValidationException", "1 validation error detected."),
    "424": (424, "DependencyFailedException", "The model dependency failed."),
    "502": (502, "BadGatewayException", "Bad gateway."),
}


@dataclass
class RecordedRequest:
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class BedrockServer:
    access_key_id: str = "AKIAASSAYTEST0000000"
    region: str = "eu-west-1"
    models: tuple[str, ...] = ("anthropic.claude-3-haiku-20240307-v1:0",)
    knowledge_bases: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=lambda: dict(DOCUMENTS))
    slow_s: float = 5.0
    retry_after_s: float = 0.0
    plan: list[str | None] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    sessions: dict[str, list[str]] = field(default_factory=dict)
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._faults = FaultPlan(self.plan)
        self.app = self._build()

    def _auth_error(self, request: Request) -> Response | None:
        header = request.headers.get("authorization", "")
        if not header:
            return _error(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        match = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/([^/]+)/([^/]+)/aws4_request,", header)
        if not match or "Signature=" not in header:
            return _error(403, "IncompleteSignatureException", "Authorization header is not a SigV4 signature.")
        key_id, region, service = match.groups()
        if key_id != self.access_key_id:
            return _error(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
        if (region, service) != (self.region, "bedrock"):
            return _error(403, "InvalidSignatureException", f"Credential should be scoped to {self.region}/bedrock.")
        return None

    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.post("/retrieveAndGenerate")
        async def retrieve_and_generate(request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                return _error(400, "SerializationException", "Could not parse the request body.")
            with self._lock:
                self.requests.append(RecordedRequest(dict(request.headers), body if isinstance(body, dict) else {}))
            refused = self._auth_error(request)
            if refused is not None:
                return refused
            text = (body.get("input") or {}).get("text") if isinstance(body, dict) else None
            fault = self._faults.next(request, text if isinstance(text, str) else None)
            if fault in _ERRORS:
                return _error(*_ERRORS[fault])
            if fault is not None and fault not in (*GENERIC_FAULTS, "no_output"):
                raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
            faulted = await generic_fault(
                fault, request, _generic_error, retry_after_s=self.retry_after_s, slow_s=self.slow_s
            )
            if faulted is not None:
                return faulted
            return self._answer(body, fault)

        return app

    def _answer(self, body: Any, fault: str | None) -> Response:
        text = (body.get("input") or {}).get("text") if isinstance(body, dict) else None
        if not isinstance(text, str):
            return _error(400, "ValidationException", "1 validation error detected: input.text must not be null")
        if len(text) > 1000:
            return _error(400, "ValidationException", "input.text must have length less than or equal to 1000")
        configuration = body.get("retrieveAndGenerateConfiguration") or {}
        if configuration.get("type") != "KNOWLEDGE_BASE":
            return _error(400, "ValidationException", "retrieveAndGenerateConfiguration.type must be KNOWLEDGE_BASE")
        kb = configuration.get("knowledgeBaseConfiguration") or {}
        if kb.get("modelArn") not in self.models:
            return _error(400, "ValidationException", f"The provided model identifier {kb.get('modelArn')} is invalid.")
        documents = self.knowledge_bases.get(kb.get("knowledgeBaseId"))
        if documents is None:
            return _error(404, "ResourceNotFoundException", f"Knowledge base {kb.get('knowledgeBaseId')} not found.")
        session_id = body.get("sessionId")
        with self._lock:
            if session_id is None:
                session_id = uuid.uuid4().hex
                self.sessions[session_id] = []
            elif session_id not in self.sessions:
                return _error(400, "ValidationException", f"Session with Id {session_id} is not valid.")
            self.sessions[session_id].append(text)
            turn = len(self.sessions[session_id])
        if fault == "no_output":
            return JSONResponse({"sessionId": session_id})
        vector = (kb.get("retrievalConfiguration") or {}).get("vectorSearchConfiguration") or {}
        limit = vector.get("numberOfResults", 2)
        words = _words(text)
        scored = sorted(
            ((len(words & _words(doc)), index) for index, (doc, _) in enumerate(documents)), key=lambda p: (-p[0], p[1])
        )
        found = [documents[index] for overlap, index in scored[:limit] if overlap > 0]
        if fault == "empty":
            return JSONResponse({"output": {"text": ""}, "citations": [], "sessionId": session_id})
        answer = f"{found[0][0]} (turn {turn})" if found else NO_ANSWER
        citations = []
        if found:
            references = [
                {
                    "content": {"text": doc, "type": "TEXT"},
                    "location": location,
                    "metadata": {"x-amz-bedrock-kb-chunk-id": f"chunk-{position}"},
                }
                for position, (doc, location) in enumerate(found)
            ]
            part = {"textResponsePart": {"text": answer, "span": {"start": 0, "end": len(answer) - 1}}}
            citations.append({"generatedResponsePart": part, "retrievedReferences": references})
        return JSONResponse({"output": {"text": answer}, "citations": citations, "sessionId": session_id})


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 2}


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(
        {"message": message},
        status_code=status,
        headers={"x-amzn-errortype": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                 "x-amzn-requestid": uuid.uuid4().hex, **(headers or {})},
    )  # fmt: skip


def _generic_error(status: int, message: str, headers: dict[str, str] | None) -> Response:
    code = {429: "ThrottlingException", 503: "ServiceUnavailableException"}.get(status, "InternalServerException")
    return _error(status, code, message, headers)


@contextmanager
def serve_bedrock(server: BedrockServer | None = None) -> Iterator[BedrockServer]:
    """Run ``server`` on a free 127.0.0.1 port; ``server.url`` is its endpoint URL (for ``endpoint_url``)."""
    server = server or BedrockServer()
    with running_app(DroppingApp(server.app), lifespan="off") as base_url:
        server.url = base_url
        yield server
