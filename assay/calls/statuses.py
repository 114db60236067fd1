"""What an HTTP status (or a protocol's equivalent) means for a call, shared by every host that speaks HTTP."""

from typing import Any

from assay.models import HostErrorKind

PERMANENT_KINDS: tuple[HostErrorKind, ...] = ("auth", "not_found", "client_error")
"""Failures a retry cannot cure: raised as ``HostError``; the others as ``RetryableHostError``."""


def status_kind(status: int) -> HostErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limited"
    if status >= 500:
        return "server_error"
    return "client_error"


def retry_after(source: Any) -> float | None:
    """The server's ``Retry-After`` in seconds, from a response (anything with ``headers``) or a headers
    mapping; ``None`` when absent or not a number of seconds."""
    headers = getattr(source, "headers", source)
    try:
        value = headers.get("retry-after")
        return None if value is None else max(float(value), 0.0)
    except (AttributeError, TypeError, ValueError):
        return None


def token_count(value: Any) -> int | None:
    """A token figure from a reply, when it is one (a non-negative integer, not a boolean)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
