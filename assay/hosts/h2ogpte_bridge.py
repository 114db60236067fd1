"""The h2oGPTe client's side of the h2ogpte hosts, run by the interpreter that has the ``h2ogpte`` package.

``h2ogpte`` 1.7.5 pins ``websockets==11.0.3`` and Prefect needs 15 or newer, so the client lives in an
environment of its own (``make install`` builds ``.venv-h2ogpte``) and Assay talks to it through this script:
``python -I h2ogpte_bridge.py``, one JSON object per line on stdin and stdout. It imports nothing from Assay
(Assay is not installed there) and nothing but the standard library and the client's own packages.

A request is ``{"id": n, "op": ..., "url": ..., "api_key": ..., "args": {...}}``; its reply is ``{"id": n,
"ok": result}`` or ``{"id": n, "error": {"message", "status" | "kind", "retry_after", "created"}}``, where
``status`` is the HTTP status the client reported (Assay maps it to a failure kind) and ``created`` names what
was made before the failure (a chat session, a collection) so that Assay still deletes it. Requests run on
threads, so a host's concurrent cases are concurrent here too; one client is kept per address and key. The
first line written is ``{"ready": true}`` once the client is imported (about 11 s: its generated REST layer).
"""

import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import h2ogpte
from h2ogpte import errors as h2o_errors
from h2ogpte.types import RateLimitError, SessionError

MAX_THREADS = 256
_write_lock = threading.Lock()
_clients: dict[tuple[str, str], Any] = {}
_clients_lock = threading.Lock()


class Failure(Exception):
    """A failure this script classified itself (``kind``)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class AfterCreating(Exception):
    """A failure (``error``) after something was created on the server (``created``), which Assay deletes."""

    def __init__(self, error: BaseException, created: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error, self.created = error, created


def client(url: str, api_key: str) -> Any:
    with _clients_lock:
        found = _clients.get((url, api_key))
        if found is None:
            found = _clients[(url, api_key)] = h2ogpte.H2OGPTE(address=url, api_key=api_key)
        return found


def converse(h2o: Any, collection_id: str | None, questions: list[str], settings: dict[str, Any],
             open_timeout: float) -> dict[str, Any]:  # fmt: skip
    """One chat session: every question in turn, then the last reply's references and each reply's usage."""
    session_id = h2o.create_chat_session(collection_id)
    try:
        transcript: list[dict[str, Any]] = []
        usages: list[dict[str, Any]] = []
        # One websocket attempt: Assay owns the retries (the client would otherwise retry for minutes).
        with h2o.connect(session_id, open_timeout=open_timeout, max_connect_retries=1) as session:
            for question in questions:
                reply = session.query(question, **settings)
                if reply is None or not isinstance(getattr(reply, "content", None), str):
                    raise Failure(f"no reply message to {question[:80]!r}", "malformed_response")
                usages.append(usage(h2o, reply.id))
                transcript.append({"question": question, "answer": reply.content, "message_id": reply.id})
        references = []
        if collection_id is not None and transcript[-1]["answer"].strip():
            references = [item.model_dump() for item in h2o.list_chat_message_references(transcript[-1]["message_id"])]
    except Exception as error:
        raise AfterCreating(error, {"session_id": session_id}) from None
    return {"session_id": session_id, "transcript": transcript, "usages": usages, "references": references}


def usage(h2o: Any, message_id: str) -> dict[str, Any]:
    """The message's ``usage_stats`` metadata, or nothing when the server keeps none."""
    try:
        found = json.loads(h2o.list_chat_message_meta_part(message_id, "usage_stats").content)
    except (h2o_errors.ObjectNotFoundError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def ingest(h2o: Any, name: str, description: str, collection_settings: Any, paths: list[str]) -> dict[str, Any]:
    """A collection with these files uploaded and ingested; a failure names the file or the job's errors."""
    collection_id = h2o.create_collection(name, description, collection_settings=collection_settings)
    created = {"collection_id": collection_id}
    try:
        upload_ids = []
        for path in paths:
            try:
                with open(path, "rb") as handle:
                    upload_ids.append(h2o.upload(path.rsplit("/", 1)[-1], handle))
            except Exception as error:
                raise Failure(f"uploading document {path.rsplit('/', 1)[-1]!r} failed: {error}", "upload") from None
        job = h2o.ingest_uploads(collection_id, upload_ids)
        if job.failed or job.errors or job.canceled:
            raise Failure("; ".join(job.errors) or "the ingestion job failed", "ingestion")
    except Exception as error:
        raise AfterCreating(error, created) from None
    return created


def classify(error: BaseException) -> dict[str, Any]:
    """The client's (or its transport's) exception as a status or a kind Assay knows."""
    import requests
    import urllib3.exceptions as http_errors  # the client's generated REST layer speaks urllib3
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    text = f"{type(error).__name__}: {error}"
    if isinstance(error, Failure):
        return {"kind": error.kind, "message": str(error)}
    if isinstance(error, RateLimitError):
        return {"kind": "rate_limited", "message": f"rate limited: {error}", "retry_after": error.retry_after}
    if isinstance(error, SessionError):
        return {"kind": "server_error", "message": f"the server reported an error: {error}"}
    status = None
    if isinstance(error, h2o_errors.UnauthorizedError | h2o_errors.ForbiddenError):
        status = 401
    elif isinstance(error, h2o_errors.ObjectNotFoundError):
        status = 404
    elif isinstance(error, h2o_errors.InvalidArgumentError | h2o_errors.FailedError):
        status = 400
    elif isinstance(error, h2o_errors.InternalServerError | h2o_errors.NotImplementedError):
        status = 500
    elif isinstance(error, h2o_errors.HTTPError):
        status = error.status_code
    if status is not None:
        return {"status": status, "message": text}
    if isinstance(error, requests.Timeout | TimeoutError | http_errors.TimeoutError):
        return {"kind": "timeout", "message": f"timeout: {text}"}
    if isinstance(error, requests.ConnectionError | ConnectionError | OSError | http_errors.ProtocolError):
        return {"kind": "connection", "message": f"connection failed: {text}"}
    if isinstance(error, ConnectionClosed | InvalidHandshake):
        return {"kind": "connection", "message": f"connection failed: {text}"}
    if isinstance(error, http_errors.InvalidHeader):
        return {"kind": "malformed_response", "message": f"malformed reply: {text}"}
    if isinstance(error, http_errors.HTTPError):
        return {"kind": "connection", "message": f"connection failed: {text}"}
    if isinstance(error, ValueError):  # a body or frame that is not JSON, or not the expected shape
        return {"kind": "malformed_response", "message": f"malformed reply: {text}"}
    if isinstance(error, TypeError):
        return {"kind": "configuration", "message": f"settings rejected by the client: {error}"}
    return {"kind": "other", "message": text}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    args = request.get("args") or {}
    try:
        h2o = client(request["url"], request["api_key"])
        op = request["op"]
        if op == "converse":
            result: Any = converse(h2o, args["collection_id"], args["questions"], args["settings"],
                                   args["open_timeout"])  # fmt: skip
        elif op == "ingest":
            result = ingest(h2o, args["name"], args["description"], args["collection_settings"], args["paths"])
        elif op == "delete_chat_sessions":
            h2o.delete_chat_sessions(args["ids"])
            result = None
        elif op == "delete_collections":
            h2o.delete_collections(args["ids"])
            result = None
        else:
            raise Failure(f"unknown operation {op!r}", "other")
        return {"id": request["id"], "ok": result}
    except Exception as error:  # every failure goes back to Assay, classified
        created = error.created if isinstance(error, AfterCreating) else {}
        reply = classify(error.error if isinstance(error, AfterCreating) else error)
        return {"id": request.get("id"), "error": {**reply, "created": created}}


def answer(request: dict[str, Any]) -> None:
    send(handle(request))


def send(message: dict[str, Any]) -> None:
    line = json.dumps(message, default=str)
    with _write_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main() -> None:
    send({"ready": True, "h2ogpte": getattr(h2ogpte, "__version__", "unknown")})
    with ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="h2ogpte-bridge") as pool:
        for line in sys.stdin:
            if line.strip():
                pool.submit(answer, json.loads(line))


if __name__ == "__main__":
    main()
