"""``bedrock-kb``: an Amazon Bedrock knowledge base, asked through ``retrieve_and_generate`` with ``boto3``.

Configuration (``ModelHost``):
- ``llm_model_name``: the model that generates the answer, as a model id or ARN (Bedrock's ``modelArn``).
- ``url``: optional endpoint override (a VPC endpoint, a local test server); empty: AWS's regional endpoint.
- ``settings.region`` and ``settings.knowledge_base_id`` are required; ``settings.profile`` picks a profile of
  the AWS config files. Credentials come ONLY from the AWS credential chain (env vars, profile, instance or
  task role): never from the host file. ``secret_ref`` is not used.
- ``retrievalConfiguration``, ``generationConfiguration`` and ``orchestrationConfiguration`` go into
  ``retrieveAndGenerateConfiguration.knowledgeBaseConfiguration`` as is; ``retrieveAndGenerateConfiguration``
  is merged (deeply) over the configuration Assay builds; every other setting that is not an Assay key
  (``ASSAY_KEYS``) is a top-level argument of ``retrieve_and_generate`` as is (``sessionConfiguration``,
  ``userContext``...). botocore checks them against the service model: a setting it does not know is a
  ``configuration`` error naming it.

boto3 is synchronous: each call runs on the host's threads (``Host.blocking``) on one client per host (boto3
clients are thread-safe), created lazily; its read time-out is at most the call policy's, so a call given up on
does not hold a thread longer. botocore's own retries are off (``total_max_attempts=1``): ``resolve`` counts and
spaces them. Bedrock reports no token counts (nor a model name): ``resolve`` counts the tokens of what was sent
(``sent_text``: the user turns and the prompt) and of the answer, and prices them from the host file's table.

A case with ``turns`` is replayed in one Bedrock session: each earlier user turn is asked in order (the
recorded assistant turns cannot be injected: Bedrock keeps its own replies), then the prompt; the answer to the
prompt is the case's answer and ``raw_response`` holds the whole transcript.
"""

import json
import threading
from typing import Any, ClassVar

import boto3
import botocore.exceptions as aws_errors
import httpx
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config
from botocore.parsers import ResponseParserError

from assay.calls.errors import HostError, RetryableHostError
from assay.calls.guarded_http import guarded_client
from assay.calls.statuses import PERMANENT_KINDS, retry_after, status_kind
from assay.hosts.base import Host, HostAnswer
from assay.models import HostErrorKind, HostSetting, HostSpec, ModelHost, RetrievedChunk, TestCase
from assay.redaction import register_env_secret

ASSAY_KEYS = ("region", "knowledge_base_id", "profile", "connect_timeout_s", "read_timeout_s", "max_pool_connections")
"""Settings Assay reads itself and does not pass to ``retrieve_and_generate``."""

KB_CONFIGURATION_KEYS = ("retrievalConfiguration", "generationConfiguration", "orchestrationConfiguration")
"""Settings that belong inside ``retrieveAndGenerateConfiguration.knowledgeBaseConfiguration``."""

AWS_SECRET_ENV_VARS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
"""Credentials of the AWS chain read from the environment: registered for redaction like a ``secret_ref``."""

_CODE_KINDS: dict[str, HostErrorKind] = {
    "AccessDeniedException": "auth",
    "UnrecognizedClientException": "auth",
    "ExpiredTokenException": "auth",
    "InvalidSignatureException": "auth",
    "MissingAuthenticationTokenException": "auth",
    "ResourceNotFoundException": "not_found",
    "ThrottlingException": "rate_limited",
    "ServiceQuotaExceededException": "client_error",
    "InternalServerException": "server_error",
    "ServiceUnavailableException": "server_error",
    "DependencyFailedException": "server_error",
    "BadGatewayException": "server_error",
    "ValidationException": "client_error",
    "ConflictException": "client_error",
}

_LOCATION_KEYS = (
    ("s3Location", "uri"),
    ("webLocation", "url"),
    ("confluenceLocation", "url"),
    ("salesforceLocation", "url"),
    ("sharePointLocation", "url"),
    ("oneDriveLocation", "url"),
    ("googleDriveLocation", "url"),
    ("kendraDocumentLocation", "uri"),
    ("customDocumentLocation", "id"),
    ("sqlLocation", "query"),
)

_SETTINGS = [
    HostSetting(
        name="llm_model_name",
        description="Model that generates the answer: a Bedrock model id or ARN (sent as modelArn).",
        required=True,
    ),
    HostSetting(name="url", description="Endpoint override (ModelHost.url); empty: the region's AWS endpoint."),
    HostSetting(name="region", description="AWS region of the knowledge base, e.g. eu-west-1.", required=True),
    HostSetting(name="knowledge_base_id", description="Id of the Bedrock knowledge base.", required=True),
    HostSetting(
        name="profile",
        description="AWS profile (config files) to take credentials from; none: the default AWS credential chain.",
    ),
    HostSetting(name="connect_timeout_s", description="Assay key: seconds to open a connection.", default=10),
    HostSetting(name="read_timeout_s", description="Assay key: seconds to wait for a reply.", default=120),
    HostSetting(name="max_pool_connections", description="Assay key: HTTP connections kept open.", default=32),
    HostSetting(
        name="retrievalConfiguration",
        description="Into knowledgeBaseConfiguration as is (also generationConfiguration, orchestrationConfiguration).",
    ),
    HostSetting(
        name="retrieveAndGenerateConfiguration",
        description="Merged deeply over the retrieveAndGenerateConfiguration Assay builds.",
    ),
    HostSetting(
        name="(any other)",
        description="A top-level argument of retrieve_and_generate as is: sessionConfiguration, userContext...",
    ),
]


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in: nested objects merged key by key, other values replaced."""
    result = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _merged(result[key], value)
        else:
            result[key] = value
    return result


def _doc_uri(location: Any) -> str:
    if not isinstance(location, dict):
        return ""
    for field, key in _LOCATION_KEYS:
        value = location.get(field)
        if isinstance(value, dict) and isinstance(value.get(key), str) and value[key]:
            return value[key]
    return ""


def _score(reference: dict[str, Any]) -> float | None:
    """Bedrock's relevance score when the reply carries one (in the reference or its metadata)."""
    metadata = reference.get("metadata") if isinstance(reference.get("metadata"), dict) else {}
    for value in (reference.get("score"), metadata.get("score"), metadata.get("x-amz-bedrock-kb-score")):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None



class _BufferedBody:
    """The reply body as botocore reads it (``raw.stream()``), already read within the reply limit."""

    def __init__(self, content: bytes) -> None:
        self.content = content

    def stream(self, **_: Any) -> list[bytes]:
        return [self.content]


class _GuardedSender:
    """botocore's ``before-send`` handler: the signed request goes through Assay's guarded HTTP client (the
    network policy checked on the address connected to, the reply bounded, no redirect followed) instead of
    botocore's own connection pool; its failures are raised as botocore's, so they map as before."""

    def __init__(self, connect_timeout: float, read_timeout: float, max_connections: int) -> None:
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        # as botocore's urllib3 pool: more connections open when needed, ``max_connections`` kept alive; a hard
        # cap below the host's concurrency would queue requests and spend their time-out waiting for a slot
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=max_connections)
        self.http = guarded_client(timeout=timeout, limits=limits, follow_redirects=False)

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
        url = request.url
        body = request.body.read() if hasattr(request.body, "read") else request.body
        try:
            response = self.http.request(request.method, url, headers=list(request.headers.items()), content=body)
        except httpx.ConnectTimeout as error:
            raise aws_errors.ConnectTimeoutError(endpoint_url=url, error=error) from error
        except httpx.TimeoutException as error:
            raise aws_errors.ReadTimeoutError(endpoint_url=url, error=error) from error
        except httpx.ConnectError as error:
            raise aws_errors.EndpointConnectionError(endpoint_url=url, error=error) from error
        except httpx.TransportError as error:  # the connection dropped while the request was under way
            raise aws_errors.ConnectionClosedError(endpoint_url=url, error=error) from error
        return AWSResponse(url, response.status_code, response.headers, _BufferedBody(response.content))

class BedrockKnowledgeBase(Host):
    spec: ClassVar[HostSpec] = HostSpec(
        id="bedrock-kb",
        display_name="Amazon Bedrock knowledge base",
        description=(
            "An Amazon Bedrock knowledge base (retrieve_and_generate via boto3, AWS credential chain); "
            "citations become retrieved context."
        ),
        model_type="rag",
        protocol="AWS Bedrock Agent Runtime RetrieveAndGenerate (REST-JSON, SigV4)",
        settings=_SETTINGS,
        returns_context=True,
        returns_tokens=False,
        returns_cost=False,
        multi_turn=True,
    )

    def __init__(self, config: ModelHost, embedder: Any = None) -> None:
        super().__init__(config, embedder)
        for name in AWS_SECRET_ENV_VARS:
            register_env_secret(name)
        self._lock = threading.Lock()
        self._aws_client: Any = None
        self._sender: _GuardedSender | None = None

    def _setting(self, name: str) -> str:
        value = self.config.settings.get(name)
        if not isinstance(value, str) or not value.strip():
            raise HostError(f"host {self.config.key}: setting {name!r} is required", "configuration")
        return value.strip()

    def _number(self, name: str, default: float) -> float:
        value = self.config.settings.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise HostError(f"host {self.config.key}: setting {name!r} must be a positive number", "configuration")
        return value

    def _check_config(self) -> tuple[str, str]:
        if not self.config.llm_model_name:
            raise HostError(
                f"host {self.config.key}: field 'llm_model_name' (the Bedrock model id or ARN) is required",
                "configuration",
            )
        return self._setting("region"), self._setting("knowledge_base_id")

    def _client(self) -> Any:
        """The host's boto3 client, created on first use (called in a worker thread)."""
        with self._lock:
            if self._aws_client is not None:
                return self._aws_client
            region, _ = self._check_config()
            profile = self.config.settings.get("profile") or None
            config = Config(
                retries={"total_max_attempts": 1, "mode": "standard"},
                connect_timeout=self._number("connect_timeout_s", 10),
                read_timeout=min(self._number("read_timeout_s", 120), self.policy.timeout_s),
                max_pool_connections=int(self._number("max_pool_connections", 32)),
            )
            try:
                session = boto3.session.Session(profile_name=profile, region_name=region)
            except aws_errors.ProfileNotFound:
                raise HostError(
                    f"host {self.config.key}: setting 'profile': AWS profile {profile!r} is not configured",
                    "configuration",
                ) from None
            self._aws_client = session.client(
                "bedrock-agent-runtime", region_name=region, endpoint_url=self.config.url or None, config=config
            )
            self._sender = _GuardedSender(config.connect_timeout, config.read_timeout, config.max_pool_connections)
            self._aws_client.meta.events.register("before-send.bedrock-agent-runtime", self._sender)
            return self._aws_client

    def _request(self, text: str, session_id: str | None) -> dict[str, Any]:
        _, knowledge_base_id = self._check_config()
        settings = {key: value for key, value in self.config.settings.items() if key not in ASSAY_KEYS}
        kb_configuration: dict[str, Any] = {
            "knowledgeBaseId": knowledge_base_id,
            "modelArn": self.config.llm_model_name,
        }
        for key in KB_CONFIGURATION_KEYS:
            if key in settings:
                kb_configuration[key] = settings.pop(key)
        configuration = {"type": "KNOWLEDGE_BASE", "knowledgeBaseConfiguration": kb_configuration}
        extra = settings.pop("retrieveAndGenerateConfiguration", None)
        if extra is not None:
            if not isinstance(extra, dict):
                raise HostError(
                    f"host {self.config.key}: setting 'retrieveAndGenerateConfiguration' must be an object",
                    "configuration",
                )
            configuration = _merged(configuration, extra)
        request = {**settings, "input": {"text": text}, "retrieveAndGenerateConfiguration": configuration}
        if session_id is not None:
            request["sessionId"] = session_id
        return request

    def _call(self, text: str, session_id: str | None) -> dict[str, Any]:
        """One ``retrieve_and_generate`` call, its failures mapped to Assay's kinds (runs in a worker thread)."""
        client = self._client()
        request = self._request(text, session_id)
        try:
            response = client.retrieve_and_generate(**request)
        except aws_errors.ClientError as error:
            raise self._client_error(error) from None
        except aws_errors.NoCredentialsError:
            raise HostError(
                f"host {self.config.key}: no AWS credentials found in the AWS credential chain (environment "
                "variables AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, setting 'profile', shared config files, "
                "instance or task role)",
                "configuration",
            ) from None
        except aws_errors.PartialCredentialsError as error:
            raise HostError(f"host {self.config.key}: incomplete AWS credentials: {error}", "configuration") from None
        except aws_errors.ParamValidationError as error:
            message = f"host {self.config.key}: settings rejected by the Bedrock service model: {error}"
            raise HostError(message, "configuration") from None
        except (aws_errors.ReadTimeoutError, aws_errors.ConnectTimeoutError) as error:
            raise RetryableHostError(f"timeout: {error}", "timeout") from None
        except (aws_errors.HTTPClientError, aws_errors.EndpointConnectionError) as error:
            raise RetryableHostError(f"connection failed: {type(error).__name__}: {error}", "connection") from None
        except ResponseParserError as error:
            raise HostError(f"the reply could not be parsed: {error}", "malformed_response") from None
        return response

    def _client_error(self, error: aws_errors.ClientError) -> Exception:
        details = error.response.get("Error", {}) if isinstance(error.response, dict) else {}
        metadata = error.response.get("ResponseMetadata", {}) if isinstance(error.response, dict) else {}
        code = str(details.get("Code") or "")
        status = metadata.get("HTTPStatusCode")
        status = status if isinstance(status, int) else 500
        kind = _CODE_KINDS.get(code) or status_kind(status)
        if status >= 500 and kind == "client_error":
            kind = "server_error"
        message = f"HTTP {status} {code or 'error'} ({kind}): {details.get('Message') or error}"
        if kind in PERMANENT_KINDS:
            return HostError(message, kind)
        headers = metadata.get("HTTPHeaders") or {}  # botocore lower-cases the names
        return RetryableHostError(message, kind, retry_after(headers))

    def _parse(self, response: Any) -> tuple[str, list[RetrievedChunk], dict[str, Any]]:
        """The answer, its citations as context, and the reply as received (less botocore's metadata)."""
        if not isinstance(response, dict):
            raise HostError("the reply is not an object", "malformed_response")
        body = {key: value for key, value in response.items() if key != "ResponseMetadata"}
        output = body.get("output")
        if not isinstance(output, dict) or not isinstance(output.get("text"), str):
            seen = json.dumps(body, default=str)[:200]
            raise HostError(f"the reply has no 'output.text': {seen}", "malformed_response")
        text = output["text"]
        if not text.strip():
            raise HostError("the reply's answer (output.text) is empty", "empty_answer")
        context: list[RetrievedChunk] = []
        citations = body.get("citations") if isinstance(body.get("citations"), list) else []
        for citation in citations:
            references = citation.get("retrievedReferences") if isinstance(citation, dict) else None
            for reference in references if isinstance(references, list) else []:
                if not isinstance(reference, dict):
                    continue
                content = reference.get("content") if isinstance(reference.get("content"), dict) else {}
                chunk_text = content.get("text")
                if not isinstance(chunk_text, str):
                    continue
                context.append(
                    RetrievedChunk(
                        text=chunk_text,
                        doc_uri=_doc_uri(reference.get("location")),
                        rank=len(context),
                        score=_score(reference),
                    )
                )
        return text, context, body

    @staticmethod
    def _questions(case: TestCase) -> list[str]:
        """What is asked, in order: the earlier user turns, then the prompt."""
        return [*(turn.content for turn in case.turns if turn.role == "user"), case.prompt]

    def sent_text(self, case: TestCase) -> str:
        return "\n".join(self._questions(case))

    async def answer(self, case: TestCase) -> HostAnswer:
        self._check_config()
        questions = self._questions(case)
        session_id: str | None = None
        transcript: list[dict[str, Any]] = []
        text, context, body = "", [], {}
        for index, question in enumerate(questions):
            response = await self.blocking(self._call, question, session_id)
            try:
                text, context, body = self._parse(response)
            except HostError as error:
                if index < len(questions) - 1:
                    raise HostError(f"conversation turn {index + 1}: {error}", error.kind) from None
                raise
            returned = body.get("sessionId")
            session_id = returned if isinstance(returned, str) and returned else session_id
            transcript.append({"question": question, "answer": text, "response": body})
        if len(transcript) == 1:
            raw = json.dumps(body, default=str)
        else:
            raw = json.dumps({"sessionId": session_id, "turns": transcript}, default=str)
        # Bedrock reports no model name (model_name stays None); the configured modelArn is in the host config.
        return HostAnswer(actual_output=text, context=context, raw_response=raw)

    async def close(self) -> None:
        with self._lock:
            client, self._aws_client = self._aws_client, None
            sender, self._sender = self._sender, None
        if client is not None:
            client.close()
        if sender is not None:
            sender.http.close()
