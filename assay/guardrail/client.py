"""Python clients of the guardrail service, for RAG applications: ``Client`` (sync) and ``AsyncClient``.

Both return the service's own ``CheckResult`` model, so an application branches on ``result.verdict`` with
types, and both raise ``GuardrailError`` (status code and the service's message) for any failed request,
so a guardrail that cannot answer is never mistaken for one that allowed the answer."""

from collections.abc import Sequence
from typing import Any

import httpx

from assay.calls.errors import HostError
from assay.calls.guarded_http import guarded_async_client, guarded_client
from assay.models.guardrail import CheckRequest, CheckResult

DEFAULT_TIMEOUT = 10.0


class GuardrailError(RuntimeError):
    """The service refused or failed a request, or could not be reached; ``status`` is None when unreachable."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _payload(question: str, answer: str, context: Sequence[str] | None) -> dict[str, Any]:
    request = CheckRequest(question=question, answer=answer, context=None if context is None else list(context))
    return request.model_dump(mode="json", exclude_none=True)


def _result(response: httpx.Response) -> CheckResult:
    _raise_for_status(response)
    return CheckResult.model_validate_json(response.content)


def _raise_for_status(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        message = response.json().get("error") or response.json().get("detail")
    except ValueError:
        message = response.text[:200]
    raise GuardrailError(
        f"guardrail {response.request.method} {response.request.url.path} failed with {response.status_code}: "
        f"{message}",
        status=response.status_code,
    )


def _unreachable(base_url: str, error: httpx.HTTPError | HostError) -> GuardrailError:
    return GuardrailError(f"guardrail at {base_url} unreachable: {type(error).__name__}: {error}")


class Client:
    """``with Client("http://127.0.0.1:8700") as guard: guard.check(question, answer, context)``."""

    def __init__(self, base_url: str, *, timeout: float = DEFAULT_TIMEOUT, **httpx_options: Any) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = guarded_client(base_url=self.base_url, timeout=timeout, **httpx_options)

    def check(self, question: str, answer: str, context: Sequence[str] | None = None) -> CheckResult:
        try:
            response = self._http.post("/check", json=_payload(question, answer, context))
        except (httpx.HTTPError, HostError) as error:
            raise _unreachable(self.base_url, error) from error
        return _result(response)

    def ready(self) -> bool:
        """True once the service has loaded its models; False while it warms up or cannot be reached."""
        try:
            return self._http.get("/readyz").status_code == 200
        except (httpx.HTTPError, HostError):
            return False

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient:
    """``async with AsyncClient(url) as guard: await guard.check(question, answer, context)``."""

    def __init__(self, base_url: str, *, timeout: float = DEFAULT_TIMEOUT, **httpx_options: Any) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = guarded_async_client(base_url=self.base_url, timeout=timeout, **httpx_options)

    async def check(self, question: str, answer: str, context: Sequence[str] | None = None) -> CheckResult:
        try:
            response = await self._http.post("/check", json=_payload(question, answer, context))
        except (httpx.HTTPError, HostError) as error:
            raise _unreachable(self.base_url, error) from error
        return _result(response)

    async def ready(self) -> bool:
        try:
            return (await self._http.get("/readyz")).status_code == 200
        except (httpx.HTTPError, HostError):
            return False

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
