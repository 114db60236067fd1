"""Is this URL an h2oGPTe server? Asked before the ``h2ogpte`` client is created, with a bounded wait.

The client's first request (``GET /rpc/meta``, its version check) waits up to an hour, and a server that is
not h2oGPTe (a web page, an OpenAI-compatible server, nothing at all) makes it fail with a bare error:
``assay hosts check`` hung for minutes, then printed ``TimeoutError:``. The same request, made here under the
network policy and the host's connect time-out, fails in seconds and says which URL answered what, and what
was expected.
"""

import httpx

from assay.calls.errors import HostError, RetryableHostError
from assay.calls.guarded_http import guarded_client
from assay.calls.statuses import PERMANENT_KINDS, status_kind

DEFAULT_CONNECT_TIMEOUT_S = 10.0
META_PATH = "/rpc/meta"
META_EXPECTED = "a JSON object with the server's 'version' (what an h2oGPTe server answers)"


def check_server(host_key: str, url: str, api_key: str, timeout: float) -> None:
    """Return when ``GET {url}/rpc/meta`` answers as h2oGPTe does; else raise the failure with its kind."""
    meta_url = f"{url.rstrip('/ ')}{META_PATH}"
    where = f"host {host_key}: GET {meta_url}"
    try:
        with guarded_client(timeout=timeout) as http:
            response = http.get(meta_url, headers={"Authorization": f"Bearer {api_key}"})
    except httpx.TimeoutException:
        message = f"{where}: no reply within {timeout:g}s (settings.connect_timeout); expected {META_EXPECTED}"
        raise RetryableHostError(message, "timeout") from None
    except httpx.HTTPError as error:
        raise RetryableHostError(f"{where}: connection failed: {type(error).__name__}: {error}", "connection") from None
    status = response.status_code
    kind = status_kind(status) if status >= 400 else "malformed_response"
    if kind == "auth":
        raise HostError(f"{where}: HTTP {status}: the server refused the API key (secret_ref)", "auth")
    try:
        meta = response.json() if status == 200 else None
    except ValueError:
        meta = None
    if isinstance(meta, dict) and isinstance(meta.get("version"), str):
        return
    kind = "not_found" if kind == "client_error" else kind
    answered = f"HTTP {status} {response.headers.get('content-type', '(no content type)')}: {response.text[:200]!r}"
    message = f"{where}: expected {META_EXPECTED}, got {answered}; is 'url' the address of an h2oGPTe server?"
    if kind in (*PERMANENT_KINDS, "malformed_response"):
        raise HostError(message, kind)
    raise RetryableHostError(message, kind)
