"""A local h2oGPTe server on 127.0.0.1, faithful enough that the real ``h2ogpte`` client (1.7.5) talks to it:
only the endpoints the ``h2ogpte-rag`` and ``h2ogpte-llm`` hosts call.

- ``GET /rpc/meta`` (the client calls it when it is created), ``PUT /rpc/fs`` (upload, multipart),
- REST under ``/api/v1``: ``POST /collections``, ``POST /uploads/{ids}/ingest/job``, ``GET /jobs/{id}``,
  ``POST /chats`` (``?collection_id=``), ``GET /messages/{id}/references``, ``GET /messages/{id}/meta``
  (``info_type=usage_stats``), ``POST /collections/delete_job``, ``POST /chats/delete_job``,
- the chat websocket ``/ws?currentSessionID=...``: a ``cq`` query is acknowledged (``cx``), then answered
  (``ca``) with ``answer: <question>`` and, in a session on a collection, references to its documents.

Auth: ``Authorization: Bearer <api_key>`` on every request and the websocket handshake, else 401 (403 on the
websocket). Faults (``assay/testing/faults.py``): ``plan`` (and a ``[fault:NAME]`` marker in the question) is
consumed per websocket query: ``429`` = a ``ce`` rate-limit error with ``retry_after``, ``500``/``503`` = a ``ce``
error, ``slow``, ``drop`` = the socket closed, ``garbage`` = a non-JSON text frame, ``empty`` = an answer with
empty content. ``rest_plan`` (or an ``x-fault`` header) is consumed per REST call of the answer path (chat
session, references, meta) with the generic HTTP faults plus ``401``/``404``. A document whose name contains
``fail`` makes its ingestion job fail.
"""

import asyncio
import json
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, Response

from assay.testing.faults import GENERIC_FAULTS, DroppingApp, FaultPlan, generic_fault
from assay.testing.local_app import running_app

VERSION = "1.7.5"


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class H2OGPTeServer:
    api_key: str = "h2o-test-key"
    slow_s: float = 3.0
    retry_after_s: float = 0.0
    plan: list[str | None] = field(default_factory=list)
    rest_plan: list[str | None] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    uploads: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, str | None] = field(default_factory=dict)
    deleted_collections: list[str] = field(default_factory=list)
    deleted_sessions: list[str] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._faults = FaultPlan(self.plan)
        self._rest_faults = FaultPlan(self.rest_plan)
        self._jobs: dict[str, dict[str, Any]] = {}
        self._messages: dict[str, dict[str, Any]] = {}
        self.app = self._build()

    # -- helpers -----------------------------------------------------------------------------------------

    def _record(self, request: Request, body: Any) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(request.method, request.url.path, dict(request.headers), body))

    def _authorized(self, headers: Any) -> bool:
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def _job(self, kind: str, errors: list[str] | None = None) -> dict[str, Any]:
        now = datetime.now(UTC).isoformat()
        job = {
            "id": str(uuid.uuid4()), "name": kind, "overall_status": "failed" if errors else "completed",
            "status": "failed" if errors else "completed", "passed_percentage": 0.0 if errors else 1.0,
            "failed_percentage": 1.0 if errors else 0.0, "progress": 1.0, "created_at": now, "updated_at": now,
            "kind": kind, "statuses": [], "errors": errors or [], "duration": "0s", "duration_seconds": 0.0,
            "start_time": None,
        }  # fmt: skip
        with self._lock:
            self._jobs[job["id"]] = job
        return job

    async def _rest_fault(self, request: Request) -> Response | None:
        fault = self._rest_faults.next(request)
        if fault is None or fault == "empty":
            return None
        if fault == "401":
            return _error(401, "Unauthorized")
        if fault == "404":
            return _error(404, "Not found")
        if fault not in GENERIC_FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        # Retry-After in whole seconds, as HTTP says (the client's urllib3 refuses "0.0")
        retry_after = int(self.retry_after_s)
        return await generic_fault(fault, request, _generic_error, retry_after_s=retry_after, slow_s=self.slow_s)

    # -- the app -----------------------------------------------------------------------------------------

    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.middleware("http")
        async def auth(request: Request, call_next: Any) -> Response:
            body_bytes = await request.body()
            try:
                body: Any = json.loads(body_bytes) if body_bytes else None
            except ValueError:
                body = body_bytes.decode(errors="replace")
            self._record(request, body)
            if not self._authorized(request.headers):
                return _error(401, "Unauthorized: invalid API key")
            return await call_next(request)

        @app.get("/rpc/meta")
        async def meta() -> Response:
            ui = {"logo": "", "chat_logo": "", "primary_color": "", "chat_name": "h2oGPTe", "greeting": "",
                  "show_private_button": False, "show_workers_status": False, "show_live_logs": False,
                  "show_eval": False, "show_extractors": False, "public_mode": False}  # fmt: skip
            return JSONResponse({
                "version": VERSION, "build": "local", "username": "assay", "user_id": "u1", "subject": "u1",
                "email": "assay@example.com", "is_guest": False, "license_expired": False,
                "license_expiry_date": "2099-01-01", "global_configs": [], "user_configs": [], "picture": None,
                "groups": None, "workspaces": None, "permissions": [], "ui_config": ui,
            })  # fmt: skip

        @app.put("/rpc/fs")
        async def upload(request: Request) -> Response:
            raw = (await request.body()).decode(errors="replace")
            match = re.search(r'name="file"; filename="([^"]*)"', raw)
            if match is None:
                return _error(400, "no file in the upload")
            upload_id = str(uuid.uuid4())
            with self._lock:
                self.uploads[upload_id] = match.group(1)
            return JSONResponse({"id": upload_id})

        @app.post("/api/v1/collections")
        async def create_collection(request: Request) -> Response:
            body = await request.json()
            now = datetime.now(UTC).isoformat()
            collection = {
                "id": str(uuid.uuid4()), "name": body["name"], "description": body.get("description") or "",
                "embedding_model": "bge", "document_count": 0, "document_size": 0, "created_at": now,
                "updated_at": now, "user_count": 1, "is_public": False, "username": "assay", "sessions_count": 0,
                "status": "completed", "documents": [],
            }  # fmt: skip
            with self._lock:
                self.collections[collection["id"]] = collection
            return JSONResponse({k: v for k, v in collection.items() if k != "documents"}, status_code=201)

        @app.post("/api/v1/uploads/{upload_ids}/ingest/job")
        async def ingest_uploads(upload_ids: str, collection_id: str) -> Response:
            collection = self.collections.get(collection_id)
            if collection is None:
                return _error(404, f"collection {collection_id} not found")
            names = [self.uploads[upload_id] for upload_id in upload_ids.split(",") if upload_id in self.uploads]
            failed = [name for name in names if "fail" in name]
            if not failed:
                collection["documents"].extend(names)
            job = self._job("IngestUploadsJob", [f"could not parse {name}" for name in failed])
            return JSONResponse(job, status_code=201)

        @app.get("/api/v1/jobs/{job_id}")
        async def get_job(job_id: str) -> Response:
            job = self._jobs.get(job_id)
            return JSONResponse(job) if job else _error(404, f"job {job_id} not found")

        @app.post("/api/v1/chats")
        async def create_chat_session(request: Request) -> Response:
            faulted = await self._rest_fault(request)
            if faulted is not None:
                return faulted
            collection_id = request.query_params.get("collection_id")
            if collection_id and collection_id not in self.collections:
                return _error(404, f"collection {collection_id} not found")
            session_id = str(uuid.uuid4())
            with self._lock:
                self.sessions[session_id] = collection_id
            now = datetime.now(UTC).isoformat()
            return JSONResponse({"id": session_id, "updated_at": now, "collection_id": collection_id}, 201)

        @app.get("/api/v1/messages/{message_id}/references")
        async def references(message_id: str, request: Request) -> Response:
            faulted = await self._rest_fault(request)
            if faulted is not None:
                return faulted
            message = self._messages.get(message_id)
            if message is None:
                return _error(404, f"message {message_id} not found")
            return JSONResponse(message["references"])

        @app.get("/api/v1/messages/{message_id}/meta")
        async def meta_part(message_id: str, request: Request) -> Response:
            message = self._messages.get(message_id)
            if message is None:
                return _error(404, f"message {message_id} not found")
            info_type = request.query_params.get("info_type")
            if info_type not in (None, "usage_stats"):
                return JSONResponse([])
            return JSONResponse([{"message_type": "usage_stats", "content": json.dumps(message["usage"])}])

        @app.post("/api/v1/collections/delete_job")
        async def delete_collections(request: Request) -> Response:
            ids = (await request.json()).get("collection_ids") or []
            with self._lock:
                self.deleted_collections.extend(ids)
                for collection_id in ids:
                    self.collections.pop(collection_id, None)
            return JSONResponse(self._job("DeleteCollectionsJob"), status_code=201)

        @app.post("/api/v1/chats/delete_job")
        async def delete_sessions(request: Request) -> Response:
            ids = (await request.json()).get("session_ids") or []
            with self._lock:
                self.deleted_sessions.extend(ids)
            return JSONResponse(self._job("DeleteChatSessionsJob"), status_code=201)

        @app.websocket("/ws")
        async def chat(websocket: WebSocket) -> None:
            if not self._authorized(websocket.headers):
                await websocket.close(code=1008)  # before accept: the handshake is refused (HTTP 403)
                return
            session_id = websocket.query_params.get("currentSessionID", "")
            await websocket.accept()
            try:
                while True:
                    query = json.loads(await websocket.receive_text())
                    with self._lock:
                        self.queries.append(query)
                    if not await self._answer(websocket, session_id, query):
                        return
            except WebSocketDisconnect:
                return

        return app

    async def _answer(self, websocket: WebSocket, session_id: str, query: dict[str, Any]) -> bool:
        """Acknowledge and answer one query; False when the socket was closed on purpose."""
        question = str(query.get("body") or "")
        fault = self._faults.next(websocket, question)  # type: ignore[arg-type]
        message_id, answer_id = str(uuid.uuid4()), str(uuid.uuid4())
        base = {"session_id": session_id, "correlation_id": query.get("correlation_id")}
        await websocket.send_text(json.dumps({**base, "t": "cx", "message_id": message_id, "username": "assay",
                                              "body": question}))  # fmt: skip
        reply = {"session_id": session_id, "message_id": answer_id, "reply_to_id": message_id, "error": ""}
        if fault == "slow":
            await asyncio.sleep(self.slow_s)
        elif fault == "drop":
            await websocket.close(code=1011)
            return False
        elif fault == "garbage":
            await websocket.send_text("<html>502 Bad Gateway</html>{not json")
            return True
        elif fault == "429":
            await websocket.send_text(
                json.dumps(
                    {
                        **reply,
                        "t": "ce",
                        "body": "",
                        "error": "Rate limit reached.",
                        "error_type": "rate_limit",
                        "retry_after": self.retry_after_s,
                    }
                )
            )
            return True
        elif fault in ("500", "503"):
            await websocket.send_text(
                json.dumps({**reply, "t": "ce", "body": "", "error": f"{fault}: the LLM backend had an error"})
            )
            return True
        content = "" if fault == "empty" else f"answer: {question}"
        collection_id = self.sessions.get(session_id)
        documents = self.collections.get(collection_id, {}).get("documents", []) if collection_id else []
        references = [
            {"document_id": f"doc-{rank}", "document_name": name, "chunk_id": rank, "pages": "[1]",
             "score": round(0.9 - rank / 10, 3), "content": f"chunk of {name} about {question}",
             "collection_id": collection_id, "were_references_deleted": False, "uri": None}
            for rank, name in enumerate(documents)
        ]  # fmt: skip
        llm = query.get("llm") or "h2oai/h2o-danube3-4b-chat"
        usage = {"llm": llm, "input_tokens": len(question.split()) + 10, "output_tokens": len(content.split()),
                 "cost": 0.0001, "response_time": 0.01}  # fmt: skip
        with self._lock:
            self._messages[answer_id] = {"references": references, "usage": usage}
        await websocket.send_text(json.dumps({**reply, "t": "cp", "body": content[:3]}))
        await websocket.send_text(json.dumps({**reply, "t": "ca", "body": content}))
        return True


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"code": status, "message": message, "error": message}  # REST errors read message, /rpc ones error
    return JSONResponse(body, status_code=status, headers=headers)


def _generic_error(status: int, message: str, headers: dict[str, str] | None) -> Response:
    return _error(status, message, headers)


@contextmanager
def serve_h2ogpte(server: H2OGPTeServer | None = None) -> Iterator[H2OGPTeServer]:
    """Run ``server`` on a free 127.0.0.1 port; ``server.url`` is its address (``http://127.0.0.1:PORT``)."""
    server = server or H2OGPTeServer()
    with running_app(DroppingApp(server.app), lifespan="off") as base_url:
        server.url = base_url
        yield server
