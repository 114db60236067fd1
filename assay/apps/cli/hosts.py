"""``assay hosts check FILE`` (one probe prompt to a configured host) and ``assay serve-sample``."""

import asyncio
import json
import ssl
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay.apps.cli.common import console, errors, user_errors
from assay.escaping import for_terminal

if TYPE_CHECKING:
    from assay.models import ModelHost

DEFAULT_PROBE = "What are your opening hours?"
PROBE_TIMEOUT_S = 60.0
ANSWER_CHARS = 300


def load_host_file(path: Path):  # type: ignore[no-untyped-def]
    from assay.apps.cli.inputs import host_file

    return host_file(path, "FILE")


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def diagnose(error: BaseException) -> str:
    """What a failed probe most likely means, in one line."""
    chain = _chain(error)
    text = " ".join(f"{type(item).__name__}: {item}" for item in chain)
    lowered = text.lower()
    kinds = {getattr(item, "kind", None) for item in chain}
    statuses = {getattr(item, "status_code", None) for item in chain}
    if kinds & {"blocked_address", "redirect_refused", "response_too_large"}:
        return "network policy: refused by the [hosts] settings (blocked_networks, max_reply_bytes); see above"
    if any(isinstance(item, ssl.SSLError) for item in chain) or "certificate" in lowered or "ssl" in lowered:
        return "TLS: the secure connection failed (certificate or protocol); check the URL scheme and certificates"
    if (
        "name or service not known" in lowered
        or "nodename nor servname" in lowered
        or "getaddrinfo" in lowered
        or "temporary failure in name resolution" in lowered
    ):
        return "DNS: the host name in the URL does not resolve"
    if (
        any(isinstance(item, ConnectionRefusedError) for item in chain)
        or "connection refused" in lowered
        or ("connect call failed" in lowered)
    ):
        return "connection refused: nothing listens at that address and port (is the server running?)"
    if "auth" in kinds or statuses & {401, 403}:
        return "401/403: the server refused the credential; check secret_ref / headers and the env var's value"
    if "not_found" in kinds or 404 in statuses:
        return "404: the URL path or the model name is not known to the server"
    if "malformed_response" in kinds or "empty_answer" in kinds:
        return "schema mismatch: the reply is not what this host type expects (see the reply quoted above)"
    if "rate_limited" in kinds or 429 in statuses:
        return "429: the server is rate limiting; try again later or lower the concurrency"
    if "server_error" in kinds or any(isinstance(status, int) and status >= 500 for status in statuses):
        return "5xx: the server failed while answering"
    if "configuration" in kinds:
        return "configuration: fix the host file (see above)"
    if any(isinstance(item, TimeoutError) for item in chain) or "timeout" in lowered or "timed out" in lowered:
        return "timeout: no reply in time"
    if any(isinstance(item, ConnectionError | OSError) for item in chain) or "connect" in lowered:
        return "connection: the connection failed or was dropped"
    return "unexpected failure (see the message above)"


def check(
    file: Annotated[Path, typer.Argument(help="Host configuration file (.json or .toml).")],
    prompt: Annotated[
        str | None, typer.Option(help="Probe prompt; default: the host's probe_prompt setting, else a stock one.")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help=f"Seconds to wait for the reply; default: the host file's calls.timeout_s, else {PROBE_TIMEOUT_S:g}.",
        ),
    ] = None,
) -> None:
    """Send one probe prompt to the host in FILE and show what came back; exit 1 when it fails."""
    from assay.apps.serve_sample import _default_embedder
    from assay.hosts import create_host
    from assay.hosts.base import answered_row
    from assay.models import TestCase

    with user_errors():
        config = load_host_file(file)
        host = create_host(config, _default_embedder)
    question = prompt or config.settings.get("probe_prompt") or DEFAULT_PROBE
    case = TestCase(key="probe", prompt=str(question))
    console.print(f"host [bold]{for_terminal(config.key)}[/] ({for_terminal(config.type)}) {for_terminal(config.url)}")
    console.print(f"probe: {for_terminal(case.prompt)}")

    async def probe():  # type: ignore[no-untyped-def]
        host.case_tests = {case.key: "probe"}
        try:
            await host.prepare([case])
            return await host.answer(case)
        finally:
            await host.close()
            host.release_threads()

    limit, limit_source = _probe_timeout(timeout, config)
    started = time.perf_counter()
    try:
        answer = asyncio.run(asyncio.wait_for(probe(), timeout=limit))
    except Exception as error:
        from assay.redaction import redact

        if isinstance(error, TimeoutError) and not str(error):  # asyncio's own, with no message
            where = config.url or f"the {config.type} host"
            error = TimeoutError(f"no reply from {where} within {limit:g}s ({limit_source})")
        message = redact(" ".join(f"{type(error).__name__}: {error}".split()))
        errors.print(f"[bold red]failed:[/] {for_terminal(message[:1000])}", highlight=False, soft_wrap=True)
        errors.print(f"[bold]diagnosis:[/] {for_terminal(diagnose(error))}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from None
    latency = time.perf_counter() - started
    row = answered_row(host, "probe", case, answer, latency, attempts=1)
    text = answer.actual_output
    short = text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + "..."
    console.print(f"answer: {for_terminal(short)}", soft_wrap=True)
    uris = sorted({chunk.doc_uri for chunk in answer.context if chunk.doc_uri})
    found = f"{len(answer.context)} chunk(s)" if answer.context else "none"
    if uris:
        found += f" from {for_terminal(', '.join(uris[:5]))}"
    console.print(f"context found: {found}", soft_wrap=True)
    tokens = f"input {_or_dash(row.input_tokens)}, output {_or_dash(row.output_tokens)}"
    source = f"counted with {row.token_count_source}" if row.token_count_source else "reported by the server"
    console.print(f"tokens: {tokens} ({source})")
    console.print(f"latency: {latency:.3f}s")
    console.print(f"model name: {for_terminal(answer.model_name or '-')}")
    if row.cost is not None:
        origin = "from the price table" if row.cost_source == "price_table" else "reported"
        console.print(f"cost: {json.dumps(row.cost)} ({origin})")


def _probe_timeout(given: float | None, config: "ModelHost") -> tuple[float, str]:
    """The probe's time limit and where it comes from: ``--timeout``, else the host file's ``calls.timeout_s``."""
    if given is not None:
        return given, "--timeout"
    if config.calls is not None and "timeout_s" in config.calls.model_fields_set:
        return config.calls.timeout_s, "the host file's calls.timeout_s"
    return PROBE_TIMEOUT_S, "the default; set --timeout or calls.timeout_s in the host file"


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def serve_sample(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
) -> None:
    """Serve the built-in sample RAG over HTTP: OpenAI-compatible /v1/chat/completions and an in-house /rag."""
    from assay.apps.serve_sample import serve

    console.print(
        f"sample RAG on http://{for_terminal(host)}:{port}: POST /rag, POST /v1/chat/completions "
        "(try examples/hosts/http-rag.json)"
    )
    serve(host, port)
