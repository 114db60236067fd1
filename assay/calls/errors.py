"""The two failures a call to a model server can end in, each with its kind (see ``HostErrorKind``).

Hosts and judges raise the same two classes, so one retry loop (``assay.calls.retry``) treats both alike.
"""

from typing import get_args

from assay.models import HostErrorKind

MAX_ERROR_CHARS = 2000
"""Error texts are evidence, not payloads: a server that answers with a megabyte of HTML keeps its first part."""


def describe_error(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """A text bounded to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters cut)"


class HostError(Exception):
    """A failure the server's answer shows is permanent (bad request, refused key, missing answer): not
    retried. ``kind`` says which."""

    def __init__(self, message: str, kind: HostErrorKind = "other") -> None:
        super().__init__(message)
        self.kind: HostErrorKind = kind
        self.attempts = 1


class BlockedAddress(HostError):
    """A connection refused by the network policy (``hosts.blocked_networks``): nothing was sent."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "blocked_address")


class RedirectRefused(HostError):
    """A redirect to another origin: not followed, so no request (and no credential) goes there."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "redirect_refused")


class ResponseTooLarge(HostError):
    """A reply longer than ``hosts.max_reply_bytes``: reading stopped at the limit, the connection was closed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "response_too_large")


class RetryableHostError(Exception):
    """A failure worth retrying (rate limit, 5xx, timeout, dropped connection) that knows its ``kind``, so the
    record says why when retries did not cure it. ``retry_after`` is the server's advice in seconds, if any."""

    def __init__(self, message: str, kind: HostErrorKind = "other", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind: HostErrorKind = kind
        self.retry_after = retry_after


def error_kind(error: BaseException) -> HostErrorKind:
    """The kind of a failure that retries did not cure."""
    kind = getattr(error, "kind", None)  # HostError, RetryableHostError and a host's own retryable errors
    if kind in get_args(HostErrorKind):
        return kind
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, ConnectionError | OSError):
        return "connection"
    return "other"
