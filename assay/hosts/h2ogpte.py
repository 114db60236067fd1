"""h2oGPTe hosts, through the ``h2ogpte`` client package (its synchronous ``H2OGPTE`` client, run in threads).

``h2ogpte-rag`` builds one collection per test (named ``assay-<test key>``) from the test's documents in
``prepare`` (upload + ingest job), or uses an existing ``collection_id``; every case gets its own chat session
on its test's collection and is asked over the chat websocket (``session.query``); the message's references
become the retrieved context. ``h2ogpte-llm`` is the same without a collection (no retrieved context).

A multi-turn case replays its earlier user turns in the same chat session (h2oGPTe keeps the conversation
server-side; the recorded assistant turns are not injected), then the prompt; the answer is the reply to the
prompt and ``raw_response`` is the whole transcript as JSON. Tokens, cost and the LLM's name come from the
message's ``usage_stats`` metadata, summed over the turns.

``ModelHost.url`` is the server's address, ``ModelHost.secret_ref`` names the env var holding the API key (read
at call time, never stored), ``ModelHost.llm_model_name`` is the ``llm`` (unless ``settings.llm`` says
otherwise), and every setting that is not an Assay key (``ASSAY_KEYS``) goes to ``session.query(...)`` as is:
``llm``, ``llm_args``, ``rag_config``, ``system_prompt``, ``include_chat_history``, ``tags``, ``timeout``...
"""

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from assay.calls.errors import HostError, RetryableHostError
from assay.calls.network import check_resolved
from assay.calls.statuses import PERMANENT_KINDS, status_kind, token_count
from assay.hosts.base import Host, HostAnswer
from assay.hosts.h2ogpte_check import DEFAULT_CONNECT_TIMEOUT_S, check_server
from assay.models import HostSetting, HostSpec, TestCase

ASSAY_KEYS = (
    "documents_dir",
    "collection_id",
    "keep_collections",
    "collection_settings",
    "connect_timeout",
)
"""Settings Assay reads itself and does not pass to ``session.query``."""

QUERY_DEFAULTS: dict[str, Any] = {"retries": 1, "timeout": 600}
"""``session.query`` defaults unless settings say otherwise: a dropped socket fails the attempt at once
(``resolve`` retries it; the client's own reconnect would not resend the question), a bounded wait."""

_T = TypeVar("_T")

_COMMON_SETTINGS = [
    HostSetting(
        name="url", description="Address of the h2oGPTe server, e.g. https://h2ogpte.example.com.", required=True
    ),
    HostSetting(
        name="secret_ref",
        description="Env var holding the h2oGPTe API key (ModelHost.secret_ref).",
        required=True,
        secret_reference=True,
    ),
    HostSetting(name="llm_model_name", description="The LLM to ask (query's llm), unless settings.llm is given."),
    HostSetting(name="llm", description="Passed to session.query: the LLM name or index."),
    HostSetting(name="llm_args", description="Passed to session.query: temperature, max_new_tokens, ... (a dict)."),
    HostSetting(name="system_prompt", description="Passed to session.query: the system prompt."),
    HostSetting(name="timeout", description="Passed to session.query: seconds to wait for the reply.", default=600),
    HostSetting(name="retries", description="Passed to session.query: the client's reconnect attempts.", default=1),
    HostSetting(
        name="connect_timeout",
        description="Assay key: seconds to reach the server (its version check) and to open the chat websocket.",
        default=10,
    ),
    HostSetting(
        name="(any other)",
        description="Passed to session.query as is: include_chat_history, tags, "
        "metadata_filter, self_reflection_config, pre_prompt_query, prompt_query...",
    ),
]

_RAG_SETTINGS = [
    *_COMMON_SETTINGS,
    HostSetting(name="rag_config", description="Passed to session.query: e.g. {'rag_type': 'rag'} (a dict)."),
    HostSetting(name="collection_id", description="Assay key: use this existing collection; upload nothing."),
    HostSetting(
        name="documents_dir", description="Assay key: folder the tests' document paths are relative to.", default="."
    ),
    HostSetting(name="collection_settings", description="Assay key: passed to create_collection as is."),
    HostSetting(name="keep_collections", description="Assay key: keep the collections Assay created.", default=False),
]


def _h2ogpte() -> Any:
    try:
        import h2ogpte
    except ImportError:  # pragma: no cover - installed with Assay
        raise HostError("the h2ogpte package is not installed (pip install h2ogpte)", "configuration") from None
    return h2ogpte


def _translate(error: BaseException) -> Exception:
    """The client's (or the transport's) exception as a HostError or RetryableHostError with its kind."""
    from h2ogpte import errors as h2o_errors
    from h2ogpte.types import RateLimitError, SessionError

    text = f"{type(error).__name__}: {error}"
    if isinstance(error, RateLimitError):
        return RetryableHostError(f"rate limited: {error}", "rate_limited", float(error.retry_after or 0) or None)
    if isinstance(error, SessionError):
        return RetryableHostError(f"the server reported an error: {error}", "server_error")
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
        kind = status_kind(status)
        message = f"HTTP {status} ({kind}): {text}"
        return HostError(message, kind) if kind in PERMANENT_KINDS else RetryableHostError(message, kind)
    import requests
    import urllib3.exceptions as http_errors  # the client's generated REST layer speaks urllib3

    if isinstance(error, requests.Timeout | TimeoutError | http_errors.TimeoutError):
        return RetryableHostError(f"timeout: {text}", "timeout")
    if isinstance(error, requests.ConnectionError | ConnectionError | OSError | http_errors.ProtocolError):
        return RetryableHostError(f"connection failed: {text}", "connection")
    try:
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        if isinstance(error, ConnectionClosed | InvalidHandshake):
            return RetryableHostError(f"connection failed: {text}", "connection")
    except ImportError:  # pragma: no cover
        pass
    if isinstance(error, http_errors.InvalidHeader):
        return HostError(f"malformed reply: {_short(text)}", "malformed_response")
    if isinstance(error, http_errors.HTTPError):
        return RetryableHostError(f"connection failed: {text}", "connection")
    if isinstance(error, ValueError):  # a body or frame that is not JSON, or not the expected shape
        return HostError(f"malformed reply: {_short(text)}", "malformed_response")
    if isinstance(error, TypeError):
        return HostError(f"settings rejected by the client: {error}", "configuration")
    return HostError(text, "other")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else f"{text[:limit]}..."


class H2OGPTeLLM(Host):
    spec: ClassVar[HostSpec] = HostSpec(
        id="h2ogpte-llm",
        display_name="Enterprise h2oGPTe LLM",
        description="An LLM hosted by Enterprise h2oGPTe (chat session without a collection).",
        model_type="llm",
        protocol="h2oGPTe REST + chat websocket (h2ogpte client)",
        settings=_COMMON_SETTINGS,
        returns_context=False,
        returns_tokens=True,
        returns_cost=True,
        multi_turn=True,
    )
    uses_collections: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()
        self._creating = threading.Lock()
        """Held while the client is created (a server check and a request): never by ``close``, which runs on
        the event loop and must not wait for a thread still talking to a slow server."""
        self._client_cache: tuple[str, Any] | None = None
        self._sessions: list[str] = []

    # -- configuration and the client ----------------------------------------------------------------------

    def _key(self) -> str:
        return self.secret(required_for="env var with the API key") or ""

    def _client(self) -> Any:
        """The client (created once per key; creating it asks the server for its version). Runs in a thread."""
        if not self.config.url:
            raise HostError(f"host {self.config.key}: field 'url' (the h2oGPTe address) is required", "configuration")
        key = self._key()
        with self._creating:
            cached = self._client_cache
            if cached is not None and cached[0] == key:
                return cached[1]
            check_resolved(self.config.url)  # the client's own pool and websocket connect: checked before them
            check_server(self.config.key, self.config.url, key, self._connect_timeout())
            client = _h2ogpte().H2OGPTE(address=self.config.url, api_key=key)
            self._client_cache = (key, client)
            return client

    def _connect_timeout(self) -> float:
        value = self.config.settings.get("connect_timeout")
        if value is None:
            return DEFAULT_CONNECT_TIMEOUT_S
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise HostError(f"host {self.config.key}: setting 'connect_timeout' must be a positive number of seconds",
                            "configuration")  # fmt: skip
        return float(value)

    async def _call(self, function: Callable[[], _T]) -> _T:
        try:
            return await self.blocking(function)
        except (HostError, RetryableHostError):
            raise
        except Exception as error:
            raise _translate(error) from None

    def _query_settings(self) -> dict[str, Any]:
        settings = {key: value for key, value in self.config.settings.items() if key not in ASSAY_KEYS}
        if self.config.llm_model_name and "llm" not in settings:
            settings["llm"] = self.config.llm_model_name
        return {**QUERY_DEFAULTS, **settings}

    def _collection_for(self, case: TestCase) -> str | None:
        return None

    # -- answering -----------------------------------------------------------------------------------------

    async def answer(self, case: TestCase) -> HostAnswer:
        collection_id = self._collection_for(case)
        questions = [turn.content for turn in case.turns if turn.role == "user"] + [case.prompt]
        settings = self._query_settings()
        return await self._call(lambda: self._converse(collection_id, questions, settings))

    def _converse(self, collection_id: str | None, questions: list[str], settings: dict[str, Any]) -> HostAnswer:
        client = self._client()
        session_id = client.create_chat_session(collection_id)
        with self._lock:
            self._sessions.append(session_id)
        transcript: list[dict[str, Any]] = []
        usages: list[dict[str, Any]] = []
        # One websocket attempt: resolve owns the retries (the client would otherwise retry for minutes).
        open_timeout = self._connect_timeout()
        with client.connect(session_id, open_timeout=open_timeout, max_connect_retries=1) as session:
            for question in questions:
                reply = session.query(question, **settings)
                if reply is None or not isinstance(getattr(reply, "content", None), str):
                    raise HostError(f"no reply message to {_short(question, 80)!r}", "malformed_response")
                usages.append(self._usage(client, reply.id))
                transcript.append({"question": question, "answer": reply.content, "message_id": reply.id})
        last = transcript[-1]
        if not last["answer"].strip():
            raise HostError("the reply's content is empty", "empty_answer")
        context = []
        if collection_id is not None:
            references = client.list_chat_message_references(last["message_id"])
            transcript[-1]["references"] = [reference.model_dump() for reference in references]
            context = [
                {"text": reference.content, "doc_uri": reference.uri or reference.document_name, "rank": rank,
                 "score": reference.score}
                for rank, reference in enumerate(references, start=1)
            ]  # fmt: skip
        input_tokens = _sum(usage.get("input_tokens") for usage in usages)
        output_tokens = _sum(usage.get("output_tokens") for usage in usages)
        costs = [usage.get("cost") for usage in usages]
        cost = (
            round(sum(costs), 8)
            if costs and all(isinstance(value, int | float) and value >= 0 for value in costs)
            else None  # then the host file's price table, applied by resolve
        )
        model = usages[-1].get("llm") or settings.get("llm")
        return HostAnswer(
            actual_output=last["answer"],
            context=context,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost=cost,
            model_name=model if isinstance(model, str) and model else None,
            raw_response=json.dumps({"chat_session_id": session_id, "turns": transcript, "usage": usages}, default=str),
        )

    @staticmethod
    def _usage(client: Any, message_id: str) -> dict[str, Any]:
        """The message's ``usage_stats`` metadata, or nothing when the server keeps none."""
        from h2ogpte.errors import ObjectNotFoundError

        try:
            part = client.list_chat_message_meta_part(message_id, "usage_stats")
            usage = json.loads(part.content)
        except (ObjectNotFoundError, ValueError):
            return {}
        return usage if isinstance(usage, dict) else {}

    async def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
            cached = self._client_cache
        if cached is None or not sessions or self.config.settings.get("keep_collections"):
            return
        await self.blocking(cached[1].delete_chat_sessions, sessions)


def _sum(values: Any) -> int | None:
    counts = [token_count(value) for value in values]
    return None if not counts or any(count is None for count in counts) else sum(counts)  # type: ignore[misc]


class H2OGPTeRAG(H2OGPTeLLM):
    spec: ClassVar[HostSpec] = HostSpec(
        id="h2ogpte-rag",
        display_name="Enterprise h2oGPTe RAG",
        description=(
            "Enterprise h2oGPTe RAG: a collection per test with its documents, a chat session per case, references."
        ),
        model_type="rag",
        protocol="h2oGPTe REST + chat websocket (h2ogpte client)",
        settings=_RAG_SETTINGS,
        returns_context=True,
        returns_tokens=True,
        returns_cost=True,
        multi_turn=True,
    )
    uses_collections: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._collections: dict[str, str] = {}
        """Test key -> the collection Assay created for it."""

    def _collection_for(self, case: TestCase) -> str | None:
        fixed = self.config.settings.get("collection_id")
        if fixed:
            return str(fixed)
        test_key = self.case_tests.get(case.key, case.key)
        collection = self._collections.get(test_key)
        if collection is None:
            raise HostError(f"test {test_key!r} has no documents and settings.collection_id is not set: nothing "
                            "to retrieve from", "configuration")  # fmt: skip
        return collection

    async def prepare(self, cases: Sequence[TestCase]) -> None:
        if self.config.settings.get("collection_id"):
            return
        base = Path(str(self.config.settings.get("documents_dir") or "."))
        wanted = {key: documents for key, documents in self.test_documents.items() if documents}
        files: dict[str, list[Path]] = {}
        for test_key, documents in wanted.items():  # every missing file is reported before anything is uploaded
            paths = []
            for document in documents:
                if document.startswith(("http://", "https://")):
                    raise HostError(f"test {test_key!r}: document {document!r}: web pages are not supported by "
                                    "h2ogpte-rag yet; give a local file", "configuration")  # fmt: skip
                path = base / document
                if not path.is_file():
                    raise HostError(f"test {test_key!r}: document {document!r} not found (looked for {path}; "
                                    "settings.documents_dir)", "configuration")  # fmt: skip
                paths.append(path)
            files[test_key] = paths
        try:
            for test_key, paths in files.items():
                if test_key not in self._collections:
                    self._collections[test_key] = await self._call(lambda key=test_key, p=paths: self._ingest(key, p))
        except BaseException:
            await self._drop_collections()  # resolve does not call close() when prepare fails
            raise

    def _ingest(self, test_key: str, paths: list[Path]) -> str:
        client = self._client()
        settings = self.config.settings.get("collection_settings")
        collection_id = client.create_collection(
            f"assay-{test_key}", f"Assay test {test_key}", collection_settings=settings
        )
        self._collections[test_key] = collection_id  # deleted in close() even when ingestion fails
        upload_ids = []
        for path in paths:
            try:
                with path.open("rb") as handle:
                    upload_ids.append(client.upload(path.name, handle))
            except Exception as error:
                raise HostError(f"test {test_key!r}: uploading document {path.name!r} failed: {error}",
                                "other") from None  # fmt: skip
        job = client.ingest_uploads(collection_id, upload_ids)
        if job.failed or job.errors or job.canceled:
            reason = "; ".join(job.errors) or "the ingestion job failed"
            names = ", ".join(path.name for path in paths)
            raise HostError(f"test {test_key!r}: ingesting documents {names} failed: {reason}", "other")
        return collection_id

    async def _drop_collections(self) -> None:
        collections = list(self._collections.values())
        self._collections = {}
        cached = self._client_cache
        if collections and cached is not None and not self.config.settings.get("keep_collections"):
            await self.blocking(cached[1].delete_collections, collections)

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            await self._drop_collections()
