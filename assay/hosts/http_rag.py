"""``http-rag``: any in-house RAG endpoint over HTTP, configured without code.

``ModelHost.url`` is the endpoint; ``ModelHost.settings`` (validated by ``HttpRagSettings`` when the host is
created) say how to ask and how to read the reply:

- ``method`` (POST), ``headers`` (a value may reference an environment variable as ``${NAME}``: resolved at
  call time and registered for redaction, never stored), ``timeout_s``;
- ``body``: a JSON template. Its strings may hold ``{{prompt}}``, ``{{conversation}}`` (the case's earlier
  turns as a list of ``{role, content}``) and ``{{variables.NAME}}``. A string that is exactly
  ``{{conversation}}`` (or ``{{variables}}``) becomes the list (the object) itself; inside a longer string the
  value is substituted as text (JSON for a list);
- ``mapping``: JSONPath (jsonpath-ng, extended syntax) into the reply: ``answer`` (required), ``contexts`` (a
  list, or every match), ``context_text`` / ``context_doc_uri`` / ``context_score`` (relative to each context
  item; without ``context_text`` a string item is the text), ``input_tokens``, ``output_tokens``, ``cost``,
  ``model_name``.

Failures: a reply that is not JSON, or whose answer path selects nothing, is ``malformed_response`` (naming
the path and the top-level keys received); 401/403 ``auth``; 404 ``not_found``; other 4xx ``client_error``;
429 and 5xx raise ``RetryableHttpError`` and time-outs ``TimeoutError``, so ``resolve`` retries them.
"""

import asyncio
import json
import os
import re
from typing import Any, ClassVar, Literal

import httpx
from jsonpath_ng.exceptions import JsonPathParserError
from jsonpath_ng.ext import parse as parse_jsonpath
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.calls.errors import HostError
from assay.calls.guarded_http import guarded_async_client
from assay.calls.statuses import retry_after
from assay.formats.explain import preview
from assay.hosts.base import Host, HostAnswer
from assay.models import HostErrorKind, ModelHost, RetrievedChunk, TestCase
from assay.models.hosts import HostSetting, HostSpec
from assay.redaction import redact, register_env_secret

DEFAULT_BODY: dict[str, Any] = {"question": "{{prompt}}", "history": "{{conversation}}"}
MAX_JSONPATH_CHARS = 1_000
"""A mapping path longer than this is a mistake or an attack, not a reply's shape."""
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class HttpRagMapping(BaseModel):
    """JSONPath expressions into the reply."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1)
    contexts: str | None = None
    context_text: str | None = None
    context_doc_uri: str | None = None
    context_score: str | None = None
    input_tokens: str | None = None
    output_tokens: str | None = None
    cost: str | None = None
    model_name: str | None = None

    @field_validator("*")
    @classmethod
    def _parses(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if len(value) > MAX_JSONPATH_CHARS:
            raise ValueError(f"a JSONPath expression of {len(value)} characters; at most {MAX_JSONPATH_CHARS}")
        try:
            parse_jsonpath(value).find({})  # a path nested too deep fails here, not on every reply
        except RecursionError:
            raise ValueError("the JSONPath expression is nested too deeply to evaluate") from None
        except (JsonPathParserError, Exception) as error:
            raise ValueError(f"not a valid JSONPath expression: {preview(value)} ({error})") from None
        return value


class HttpRagSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: Literal["GET", "POST", "PUT", "PATCH"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: dict[str, Any] = Field(default_factory=lambda: dict(DEFAULT_BODY))
    mapping: HttpRagMapping
    timeout_s: float = Field(default=60.0, gt=0)
    probe_prompt: str | None = Field(default=None, description="What `assay hosts check` asks.")


class RetryableHttpError(Exception):
    """A status worth retrying (429, 5xx): a plain exception, so ``resolve`` retries it. ``kind`` says which,
    ``retry_after`` is the server's ``Retry-After`` in seconds when it sent one."""

    def __init__(self, message: str, kind: HostErrorKind, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind: HostErrorKind = kind
        self.retry_after = retry_after


def _settings_error(config: ModelHost, error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    return f"host {config.key}: settings.{field}: {first['msg']}"


class HttpRag(Host):
    spec: ClassVar[HostSpec] = HostSpec(
        id="http-rag",
        display_name="HTTP RAG endpoint",
        description="Any in-house RAG endpoint over HTTP: a JSON body template and JSONPath mappings, no code.",
        model_type="rag",
        protocol="HTTP + JSON (configurable template and JSONPath mapping)",
        settings=[
            HostSetting(name="url", description="The endpoint (ModelHost.url).", required=True),
            HostSetting(name="method", description="HTTP method.", default="POST"),
            HostSetting(
                name="headers",
                description="Request headers; a value may reference an env var as ${NAME} (resolved per call).",
                secret_reference=True,
            ),
            HostSetting(
                name="body",
                description="JSON body template with {{prompt}}, {{conversation}}, {{variables.NAME}}.",
                default=DEFAULT_BODY,
            ),
            HostSetting(
                name="mapping",
                description="JSONPath into the reply: answer (required), contexts, context_text, context_doc_uri, "
                "context_score, input_tokens, output_tokens, cost, model_name.",
                required=True,
            ),
            HostSetting(name="timeout_s", description="Seconds per HTTP call.", default=60.0),
            HostSetting(name="probe_prompt", description="What `assay hosts check` asks."),
        ],
        returns_context=True,
        returns_tokens=True,
        returns_cost=True,
        multi_turn=True,
    )

    def __init__(self, config: ModelHost, embedder: Any = None) -> None:
        super().__init__(config, embedder)
        if not config.url:
            raise ValueError(f"host {config.key}: url: the http-rag host needs the endpoint URL")
        try:
            self.settings = HttpRagSettings.model_validate(config.settings)
        except ValidationError as error:
            raise ValueError(_settings_error(config, error)) from None
        mapping = self.settings.mapping
        self._paths = {
            name: parse_jsonpath(expression)
            for name, expression in mapping.model_dump().items()
            if expression is not None
        }

    # -- request -----------------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        def resolve_env(match: re.Match[str]) -> str:
            name = match.group(1)
            value = os.environ.get(name)
            if value is None:
                raise HostError(
                    f"host {self.config.key}: settings.headers: environment variable {name} is not set",
                    "configuration",
                )
            register_env_secret(name)
            return value

        return {key: _ENV_REFERENCE.sub(resolve_env, value) for key, value in self.settings.headers.items()}

    def render_body(self, case: TestCase) -> Any:
        return render_template(self.settings.body, case)

    # -- call --------------------------------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        """One client per event loop (a lab's ``resolve``), whose connection pool every call reuses: a client
        per call cost a TLS context and a new connection per case."""
        loop = asyncio.get_running_loop()
        cached = getattr(self, "_cached_client", None)
        if cached is None or cached[0] is not loop:
            cached = self._cached_client = (loop, guarded_async_client(timeout=self.settings.timeout_s))
        return cached[1]

    async def close(self) -> None:
        cached, self._cached_client = getattr(self, "_cached_client", None), None
        if cached is not None and cached[0] is asyncio.get_running_loop():
            await cached[1].aclose()

    async def answer(self, case: TestCase) -> HostAnswer:
        body = self.render_body(case)
        headers = self._headers()
        method = self.settings.method
        try:
            client = self._client()
            if method == "GET":
                params = {key: _text(value) for key, value in body.items()} if isinstance(body, dict) else None
                response = await client.request(method, self.config.url, headers=headers, params=params)
            else:
                response = await client.request(method, self.config.url, headers=headers, json=body)
        except httpx.TimeoutException as error:
            raise TimeoutError(f"{self.config.url}: no reply within {self.settings.timeout_s}s") from error
        except httpx.TransportError as error:
            raise ConnectionError(f"{self.config.url}: {type(error).__name__}: {error}") from error
        self._check_status(response)
        return self.parse(response.text)

    def _check_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        text = redact(response.text[:500])
        message = f"{self.config.url} answered HTTP {status}: {text}"
        if status in (401, 403):
            raise HostError(message, "auth")
        if status == 404:
            raise HostError(message, "not_found")
        if status == 429:
            raise RetryableHttpError(message, "rate_limited", retry_after(response))
        if status >= 500:
            raise RetryableHttpError(message, "server_error", retry_after(response))
        raise HostError(message, "client_error")

    # -- reply -------------------------------------------------------------------------------------------

    def parse(self, raw: str) -> HostAnswer:
        """The answer in the reply ``raw`` (JSON text), read through the mapping."""
        try:
            data = json.loads(raw)
        except ValueError:
            raise HostError(f"{self.config.url}: the reply is not JSON: {raw[:200]!r}", "malformed_response") from None
        answer_matches = self._paths["answer"].find(data)
        if not answer_matches:
            raise HostError(
                f"{self.config.url}: mapping.answer {self.settings.mapping.answer!r} selects nothing in the reply; "
                f"top-level keys received: {_top_keys(data)}",
                "malformed_response",
            )
        answer = answer_matches[0].value
        if not isinstance(answer, str):
            raise HostError(
                f"{self.config.url}: mapping.answer {self.settings.mapping.answer!r} selects a "
                f"{type(answer).__name__}, not a text",
                "malformed_response",
            )
        if not answer.strip():
            raise HostError(f"{self.config.url}: the answer is empty", "empty_answer")
        try:
            return HostAnswer(
                actual_output=answer,
                context=self._contexts(data),
                input_tokens=self._number("input_tokens", data, as_int=True),
                output_tokens=self._number("output_tokens", data, as_int=True),
                cost=self._number("cost", data, as_int=False),
                model_name=self._scalar("model_name", data),
                raw_response=raw,
            )
        except ValidationError as error:  # e.g. negative tokens, a NaN score
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise HostError(
                f"{self.config.url}: the mapped reply is invalid: {where}: {first['msg']}", "malformed_response"
            ) from None

    def _scalar(self, name: str, data: Any) -> str | None:
        path = self._paths.get(name)
        if path is None:
            return None
        matches = path.find(data)
        return None if not matches or matches[0].value is None else str(matches[0].value)

    def _number(self, name: str, data: Any, as_int: bool) -> int | float | None:
        value = self._scalar(name, data)
        if value is None:
            return None
        try:
            return int(float(value)) if as_int else float(value)
        except ValueError:
            raise HostError(
                f"{self.config.url}: mapping.{name} selects {value[:50]!r}, not a number", "malformed_response"
            ) from None

    def _contexts(self, data: Any) -> list[RetrievedChunk]:
        path = self._paths.get("contexts")
        if path is None:
            return []
        matches = path.find(data)
        items = (
            matches[0].value
            if len(matches) == 1 and isinstance(matches[0].value, list)
            else [match.value for match in matches]
        )
        chunks = []
        for rank, item in enumerate(items):
            text = self._relative("context_text", item)
            if text is None:
                if not isinstance(item, str):
                    raise HostError(
                        f"{self.config.url}: context {rank} is a {type(item).__name__}: set mapping.context_text",
                        "malformed_response",
                    )
                text = item
            uri = self._relative("context_doc_uri", item)
            score = self._relative("context_score", item)
            try:
                score_value = None if score is None else float(score)
            except (TypeError, ValueError):
                raise HostError(
                    f"{self.config.url}: mapping.context_score selects {score!r} in context {rank}, not a number",
                    "malformed_response",
                ) from None
            chunks.append(RetrievedChunk(text=str(text), doc_uri=str(uri or ""), rank=rank, score=score_value))
        return chunks

    def _relative(self, name: str, item: Any) -> Any:
        path = self._paths.get(name)
        if path is None:
            return None
        matches = path.find(item)
        return matches[0].value if matches else None


def render_template(template: Any, case: TestCase) -> Any:
    """``template`` with its placeholders filled from ``case`` (see the module docstring)."""
    conversation = [{"role": turn.role, "content": turn.content} for turn in case.turns]  # the documented shape

    def value_of(name: str) -> Any:
        if name == "prompt":
            return case.prompt
        if name == "conversation":
            return conversation
        if name == "variables":
            return dict(case.variables)
        if name.startswith("variables."):
            variable = name.removeprefix("variables.")
            if variable not in case.variables:
                raise HostError(
                    f"the body template uses {{{{{name}}}}} and case {case.key} has no variable {variable!r}",
                    "configuration",
                )
            return case.variables[variable]
        raise HostError(
            f"settings.body: unknown placeholder {{{{{name}}}}} (use prompt, conversation, variables.NAME)",
            "configuration",
        )

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        if isinstance(node, str):
            whole = _PLACEHOLDER.fullmatch(node.strip())
            if whole:
                return value_of(whole.group(1))
            return _PLACEHOLDER.sub(lambda match: _text(value_of(match.group(1))), node)
        return node

    return walk(template)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _top_keys(data: Any) -> str:
    if isinstance(data, dict):
        keys = list(data)
        shown = ", ".join(repr(key) for key in keys[:20])
        return shown + (f" and {len(keys) - 20} more" if len(keys) > 20 else "") if keys else "none (an empty object)"
    return f"none (the reply is a JSON {type(data).__name__}, not an object)"
