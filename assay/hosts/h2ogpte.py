"""h2oGPTe hosts, through the ``h2ogpte`` client package (its synchronous ``H2OGPTE`` client), which runs in an
environment of its own and is asked through ``h2ogpte_bridge.py`` (assay/hosts/h2ogpte_process.py).

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
from assay.hosts.h2ogpte_process import BridgeFailure, bridge
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

RETRYABLE_KINDS = ("rate_limited", "server_error", "timeout", "connection")
"""Kinds the bridge reports that are worth another attempt (a status is judged by ``status_kind``)."""

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


def _translate(error: BaseException) -> Exception:
    """A failure the bridge reported (its HTTP status or kind) as a HostError or RetryableHostError."""
    if not isinstance(error, BridgeFailure):
        return HostError(f"{type(error).__name__}: {error}", "other")
    reply = error.reply
    message = _short(str(reply.get("message", "")))
    status = reply.get("status")
    if isinstance(status, int):
        kind = status_kind(status)
        message = f"HTTP {status} ({kind}): {message}"
        return HostError(message, kind) if kind in PERMANENT_KINDS else RetryableHostError(message, kind)
    kind = str(reply.get("kind") or "other")
    if kind in RETRYABLE_KINDS:
        retry_after = reply.get("retry_after")
        wait = float(retry_after) if isinstance(retry_after, int | float) and retry_after > 0 else None
        return RetryableHostError(message, kind, wait)
    return HostError(message, kind)


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
        """Held while the server is checked (a request): never by ``close``, which runs on the event loop and
        must not wait for a thread still talking to a slow server."""
        self._checked_key: str | None = None
        self._sessions: list[str] = []

    # -- configuration and the client ----------------------------------------------------------------------

    def _key(self) -> str:
        return self.secret(required_for="env var with the API key") or ""

    def _checked(self) -> str:
        """The API key, once the address is allowed and the server answers as h2oGPTe (asked once per key, in a
        thread): the client's first request would otherwise wait up to an hour on a server that is not one."""
        if not self.config.url:
            raise HostError(f"host {self.config.key}: field 'url' (the h2oGPTe address) is required", "configuration")
        key = self._key()
        with self._creating:
            if self._checked_key != key:
                check_resolved(self.config.url)  # the client's own pool and websocket connect: checked before them
                check_server(self.config.key, self.config.url, key, self._connect_timeout())
                self._checked_key = key
        return key

    def _ask(self, op: str, **args: Any) -> Any:
        """One operation of the client, run by the bridge (in a thread here)."""
        key = self._checked()
        return bridge().call(op, self.config.url or "", key, **args)

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

    async def prepare(self, cases: Sequence[TestCase]) -> None:
        """Start the client's process before any case: importing the client takes about 11 s, which no case's
        time-out should pay for. A missing client is then one configuration error on every case."""
        await self.blocking(lambda: bridge().wait_ready())

    # -- answering -----------------------------------------------------------------------------------------

    async def answer(self, case: TestCase) -> HostAnswer:
        collection_id = self._collection_for(case)
        questions = [turn.content for turn in case.turns if turn.role == "user"] + [case.prompt]
        settings = self._query_settings()
        return await self._call(lambda: self._converse(collection_id, questions, settings))

    def _converse(self, collection_id: str | None, questions: list[str], settings: dict[str, Any]) -> HostAnswer:
        try:
            done = self._ask("converse", collection_id=collection_id, questions=questions, settings=settings,
                             open_timeout=self._connect_timeout())  # fmt: skip
        except BridgeFailure as failure:
            self._remember(failure.reply.get("created") or {})
            raise
        self._remember(done)
        transcript, usages = done["transcript"], done["usages"]
        last = transcript[-1]
        if not last["answer"].strip():
            raise HostError("the reply's content is empty", "empty_answer")
        context = []
        if collection_id is not None:
            last["references"] = done["references"]
            context = [
                {"text": reference.get("content"), "doc_uri": reference.get("uri") or reference.get("document_name"),
                 "rank": rank, "score": reference.get("score")}
                for rank, reference in enumerate(done["references"], start=1)
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
            raw_response=json.dumps(
                {"chat_session_id": done["session_id"], "turns": transcript, "usage": usages}, default=str
            ),
        )

    def _remember(self, created: dict[str, Any]) -> None:
        """A chat session the bridge opened, to delete in ``close``."""
        if created.get("session_id"):
            with self._lock:
                self._sessions.append(created["session_id"])

    async def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
        if self._checked_key is None or not sessions or self.config.settings.get("keep_collections"):
            return
        await self.blocking(lambda: self._ask("delete_chat_sessions", ids=sessions))


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
        await super().prepare(cases)
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
        try:
            created = self._ask("ingest", name=f"assay-{test_key}", description=f"Assay test {test_key}",
                                collection_settings=self.config.settings.get("collection_settings"),
                                paths=[str(path.resolve()) for path in paths])  # fmt: skip
        except BridgeFailure as failure:
            collection_id = (failure.reply.get("created") or {}).get("collection_id")
            if collection_id:
                self._collections[test_key] = collection_id  # deleted in close() even when ingestion fails
            kind = failure.reply.get("kind")
            if kind == "upload":
                raise HostError(f"test {test_key!r}: {failure.reply.get('message')}", "other") from None
            if kind == "ingestion":
                names = ", ".join(path.name for path in paths)
                raise HostError(f"test {test_key!r}: ingesting documents {names} failed: "
                                f"{failure.reply.get('message')}", "other") from None  # fmt: skip
            raise
        return str(created["collection_id"])

    async def _drop_collections(self) -> None:
        collections = list(self._collections.values())
        self._collections = {}
        if collections and self._checked_key is not None and not self.config.settings.get("keep_collections"):
            await self.blocking(lambda: self._ask("delete_collections", ids=collections))

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            await self._drop_collections()
