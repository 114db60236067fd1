"""What the ``openai`` client raises, as Assay's failures: shared by every host and judge using the client."""

import openai

from assay.calls.errors import HostError, RetryableHostError
from assay.calls.statuses import PERMANENT_KINDS, retry_after, status_kind


def openai_failure(
    error: openai.APIConnectionError | openai.APIStatusError, prefix: str = ""
) -> HostError | RetryableHostError:
    """The Assay failure for what the ``openai`` client raised: time-outs, dropped connections, 429 and 5xx
    are retryable, other statuses permanent; each with its kind (shared by every host using the client)."""
    if isinstance(error, openai.APITimeoutError):
        return RetryableHostError(f"{prefix}timeout: {error}", "timeout")
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error
        return RetryableHostError(f"{prefix}connection failed: {type(cause).__name__}: {cause}", "connection")
    kind = status_kind(error.status_code)
    message = f"{prefix}HTTP {error.status_code} ({kind}): {error.message}"
    if kind in PERMANENT_KINDS:
        return HostError(message, kind)
    return RetryableHostError(message, kind, retry_after(error.response))


def unreadable_reply(body: str, prefix: str = "") -> RetryableHostError:
    """A 200 reply whose body is not JSON: most often cut short (a proxy's or server's dropped stream), so it
    is retried within the call policy's budget, as a 5xx is; the last one is recorded when none cured it."""
    return RetryableHostError(f"{prefix}the reply is not JSON (cut short?): {body[:200]!r}", "malformed_response")


def no_choices(prefix: str = "") -> RetryableHostError:
    """A 200 reply whose ``choices`` list is empty: the server produced no answer this time, retried as a 5xx."""
    return RetryableHostError(f"{prefix}the reply's 'choices' is empty", "empty_answer")
