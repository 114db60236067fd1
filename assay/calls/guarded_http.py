"""The HTTP clients every host and judge uses: httpx clients whose transport applies the network policy
(``assay.calls.network``) at connect time and bounds each reply.

- The connection pool's network backend resolves the host name itself, refuses the connection when any
  address is blocked, then connects to a vetted address (TLS still checks the certificate against the name:
  httpcore passes the request's host as the server name).
- A reply is read up to ``hosts.max_reply_bytes`` after decompression (gzip and deflate are decoded here, in
  bounded steps, so a small compressed bomb cannot grow in memory); past it, ``ResponseTooLarge`` is raised
  and the connection closed.
- Redirects within the origin are followed; one to another origin raises ``RedirectRefused``.

Proxies from the environment are not used: the policy checks the address the client itself connects to.
"""

import functools
import os
import socket
import ssl
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import anyio
import httpcore
import httpx

from assay.calls.errors import HostError, RedirectRefused, ResponseTooLarge
from assay.calls.network import NetworkPolicy, current_policy, vetted_addresses

_DECODED = ("gzip", "deflate")
DEFAULT_LIMITS = httpx.Limits()


class _GuardedSyncBackend(httpcore.SyncBackend):
    def __init__(self, policy: NetworkPolicy) -> None:
        self.policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise httpcore.ConnectError(f"{host}: {error}") from error
        failure: Exception | None = None
        for address in vetted_addresses(host, [str(info[4][0]) for info in found], self.policy):
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as error:
                failure = error
        raise failure or httpcore.ConnectError(f"{host}: no address")


class _GuardedAsyncBackend(httpcore.AnyIOBackend):
    def __init__(self, policy: NetworkPolicy) -> None:
        self.policy = policy

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except TimeoutError as error:
            raise httpcore.ConnectTimeout(f"{host}: no address within {timeout}s") from error
        except OSError as error:
            raise httpcore.ConnectError(f"{host}: {error}") from error
        failure: Exception | None = None
        for address in vetted_addresses(host, [str(info[4][0]) for info in found], self.policy):
            try:
                return await super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as error:
                failure = error
        raise failure or httpcore.ConnectError(f"{host}: no address")


class _ReplyBudget:
    """Counts (and, for gzip or deflate, decodes in bounded steps) one reply's body."""

    def __init__(self, response: httpx.Response, url: str, limit: int) -> None:
        self.url, self.limit, self.received = url, limit, 0
        declared = response.headers.get("content-length", "")
        encodings = [part.strip().lower() for part in response.headers.get("content-encoding", "").split(",")]
        encodings = [part for part in encodings if part and part != "identity"]
        if len(encodings) > 1:
            raise HostError(f"the reply from {url} is encoded {len(encodings)} times: refused", "malformed_response")
        self.encoding = encodings[0] if encodings and encodings[0] in _DECODED else None
        self.decoder: Any = None
        if self.encoding is not None:
            self.decoder = zlib.decompressobj(zlib.MAX_WBITS | 32 if self.encoding == "gzip" else zlib.MAX_WBITS)
            del response.headers["content-encoding"]  # decoded here, not again by httpx
            response.headers.pop("content-length", None)
        elif declared.isdigit() and int(declared) > limit:
            self.count(int(declared))

    def count(self, size: int) -> None:
        self.received += size
        if self.received > self.limit:
            raise ResponseTooLarge(
                f"the reply from {self.url} is longer than {self.limit} bytes (setting hosts.max_reply_bytes): "
                "the rest was not read"
            )

    def feed(self, chunk: bytes) -> bytes:
        if self.decoder is None:
            self.count(len(chunk))
            return chunk
        try:
            out = self.decoder.decompress(chunk, self.limit - self.received + 1)
        except zlib.error:
            if self.encoding != "deflate" or self.received or self.decoder.unused_data:
                message = f"the reply from {self.url} is not valid {self.encoding}"
                raise HostError(message, "malformed_response") from None
            self.decoder = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, without the zlib header
            out = self.decoder.decompress(chunk, self.limit + 1)
        self.count(len(out))
        return out

    def finish(self) -> bytes:
        if self.decoder is None:
            return b""
        rest = self.decoder.flush()
        self.count(len(rest))
        return rest


class _BoundedStream(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, budget: _ReplyBudget) -> None:
        self.stream, self.budget = stream, budget

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.stream:
            yield self.budget.feed(chunk)
        yield self.budget.finish()

    def close(self) -> None:
        self.stream.close()


class _AsyncBoundedStream(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream, budget: _ReplyBudget) -> None:
        self.stream, self.budget = stream, budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.stream:
            yield self.budget.feed(chunk)
        yield self.budget.finish()

    async def aclose(self) -> None:
        await self.stream.aclose()


def _ssl_context() -> ssl.SSLContext:
    """The verifying TLS context every guarded client shares: building one loads the CA bundle (about 50 ms of
    CPU), which a client per call paid twice. Rebuilt when ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` change."""
    return _ssl_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()


def _pool_options(limits: httpx.Limits) -> dict[str, Any]:
    return {
        "ssl_context": _ssl_context(),
        "max_connections": limits.max_connections,
        "max_keepalive_connections": limits.max_keepalive_connections,
        "keepalive_expiry": limits.keepalive_expiry,
    }


class GuardedTransport(httpx.HTTPTransport):
    def __init__(self, policy: NetworkPolicy, limits: httpx.Limits = DEFAULT_LIMITS) -> None:
        super().__init__(verify=_ssl_context(), limits=limits)
        self.policy = policy
        self._pool = httpcore.ConnectionPool(**_pool_options(limits), network_backend=_GuardedSyncBackend(policy))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        try:
            budget = _ReplyBudget(response, str(request.url), self.policy.max_reply_bytes)
        except HostError:
            response.close()
            raise
        response.stream = _BoundedStream(response.stream, budget)  # type: ignore[arg-type]
        return response


class AsyncGuardedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, policy: NetworkPolicy, limits: httpx.Limits = DEFAULT_LIMITS) -> None:
        super().__init__(verify=_ssl_context(), limits=limits)
        self.policy = policy
        self._pool = httpcore.AsyncConnectionPool(**_pool_options(limits), network_backend=_GuardedAsyncBackend(policy))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        try:
            budget = _ReplyBudget(response, str(request.url), self.policy.max_reply_bytes)
        except HostError:
            await response.aclose()
            raise
        response.stream = _AsyncBoundedStream(response.stream, budget)  # type: ignore[arg-type]
        return response


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def refuse_cross_origin(response: httpx.Response) -> None:
    """A response hook: a redirect to another origin (scheme, host, port) is refused, not followed."""
    if not response.has_redirect_location:
        return
    source = response.request.url
    target = source.join(response.headers["location"])
    if _origin(target) != _origin(source):
        where = f"{target.scheme}://{target.netloc.decode()}"
        raise RedirectRefused(
            f"{source} redirected ({response.status_code}) to another origin, {where}: not followed, nothing was sent"
        )


async def _refuse_cross_origin_async(response: httpx.Response) -> None:
    refuse_cross_origin(response)


def guarded_options(asynchronous: bool, policy: NetworkPolicy | None = None, **options: Any) -> dict[str, Any]:
    """Keyword arguments for an ``httpx`` client (or a library that passes them on, like ``ollama``): the
    guarded transport, the cross-origin redirect refusal added to any ``event_hooks`` given, same-origin
    redirects followed."""
    policy = policy or current_policy()
    limits = options.pop("limits", DEFAULT_LIMITS)
    hooks = dict(options.pop("event_hooks", None) or {})
    hook: Callable[..., Any] = _refuse_cross_origin_async if asynchronous else refuse_cross_origin
    hooks["response"] = [*hooks.get("response", []), hook]
    transport = AsyncGuardedTransport(policy, limits) if asynchronous else GuardedTransport(policy, limits)
    return {"follow_redirects": True, **options, "transport": transport, "event_hooks": hooks}


def guarded_client(policy: NetworkPolicy | None = None, **options: Any) -> httpx.Client:
    """A synchronous ``httpx.Client`` under the network policy (``options`` go to the client)."""
    return httpx.Client(**guarded_options(False, policy, **options))


def guarded_async_client(policy: NetworkPolicy | None = None, **options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` under the network policy; also the ``http_client`` of every ``openai`` client."""
    return httpx.AsyncClient(**guarded_options(True, policy, **options))


OPENAI_TIMEOUT = httpx.Timeout(600.0, connect=5.0)
"""The ``openai`` client's own default (it reads the time-out from the http client it is given)."""
