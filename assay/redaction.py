"""Secret values never leave the process: not in errors, log lines, test labs, results or artifacts.

A host's error body may echo the credential it was sent ("401: invalid key sk-..."), an S3 error may name
the access key, and those messages travel into test-lab rows, problems, the object store and Prefect's
results. Configuration only ever holds the *name* of a secret (``ModelHost.secret_ref``) and ``SecretStr``
settings, so redaction works on values: every secret the process reads is registered here, and ``redact``
replaces each registered value, and the forms it takes on the wire (URL-encoded, JSON-escaped, inside
base64 such as HTTP basic auth), with ``[REDACTED:<name>]``.

Values shorter than ``MIN_SECRET_CHARS`` are not registered: replacing "abc" everywhere would mangle text
while protecting nothing a guess would not find.
"""

import base64
import json
import logging
import os
import re
import threading
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

if TYPE_CHECKING:  # config registers its secrets here, so importing it at run time would be circular
    from assay.config import Settings

MIN_SECRET_CHARS = 6
SECRET_NAME = re.compile(r"key|token|secret|password|credential|auth", re.IGNORECASE)
"""A setting or field named like this may hold a credential: its value is masked, never echoed."""
"""Shorter values are not redacted (see the module docstring)."""

_lock = threading.Lock()
_names: dict[str, str] = {}
"""Every form of every registered value -> the name the placeholder shows."""
_pattern: re.Pattern[str] | None = None


def register_secret(value: str | SecretStr | None, name: str) -> None:
    """Redact ``value`` from now on wherever ``redact`` runs; ``name`` (an env var, a setting) says which
    secret was there without saying what it was."""
    global _pattern
    plain = value.get_secret_value() if isinstance(value, SecretStr) else value
    if plain is None or len(plain) < MIN_SECRET_CHARS:
        return
    with _lock:
        for form in _forms(plain):
            _names.setdefault(form, name)
        alternatives = sorted(_names, key=len, reverse=True)  # longest first: a form inside another loses
        _pattern = re.compile("|".join(re.escape(form) for form in alternatives))


def register_env_secret(env_name: str | None) -> None:
    """Register the value of the environment variable ``env_name`` (a ``secret_ref``), when it is set."""
    if env_name:
        register_secret(os.environ.get(env_name), env_name)


def register_settings_secrets(settings: "Settings") -> None:
    """Register the credentials of Assay's settings: the object store's keys and the LLM judge's API key
    (read from the variable ``judge.api_key_env`` names)."""
    register_secret(settings.store.access_key, "ASSAY_STORE__ACCESS_KEY")
    register_secret(settings.store.secret_key, "ASSAY_STORE__SECRET_KEY")
    register_env_secret(settings.judge.api_key_env)


def _forms(value: str) -> set[str]:
    """The value as written, URL-encoded, JSON-escaped, and as it appears inside base64 at each of the three
    byte alignments (basic auth encodes "user:secret", so the secret may start anywhere in a 3-byte group)."""
    forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), json.dumps(value)[1:-1]}
    raw = value.encode()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode()
        # Only the characters whose 6 bits all come from the value: the others depend on its neighbours.
        first, last = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6
        forms.add(encoded[first:last])
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def _placeholder(match: re.Match[str]) -> str:
    return f"[REDACTED:{_names[match.group()]}]"


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``[REDACTED:<name>]``."""
    pattern = _pattern
    return text if pattern is None else pattern.sub(_placeholder, text)


def redact_data(data: Any) -> Any:
    """A copy of a JSON-like document (dicts, lists, tuples, strings; keys too) with secrets redacted: the
    last safety net before a document is written anywhere."""
    return _walk(data, redact) if _pattern is not None else data


def _walk(data: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(data, str):
        return clean(data)
    if isinstance(data, dict):
        return {_walk(key, clean): _walk(value, clean) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return type(data)(_walk(item, clean) for item in data)
    return data


def redact_record(record: logging.LogRecord) -> None:
    """Redact a log record in place: its message and its traceback. A record that holds a secret carries the
    redacted text from then on (formatted message, no arguments; traceback text, which formatters use in
    place of ``exc_info``); any other record is left as it was."""
    if _pattern is None:
        return
    try:
        message = record.getMessage()
    except Exception:  # a malformed call is the logging module's to report, not ours to hide
        return
    if (clean := redact(message)) != message:
        record.msg, record.args = clean, None
    traceback = record.exc_text or (logging.Formatter().formatException(record.exc_info) if record.exc_info else None)
    if traceback and (clean := redact(traceback)) != traceback:
        record.exc_text = clean
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


class RedactSecrets(logging.Filter):
    """A handler filter for records that bypass the record factory (``logging.makeLogRecord`` from a queue or
    a socket): redacts them and lets them through."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


_installed = False


def install_log_redaction() -> None:
    """Redact every log record the process creates, Prefect's included, whatever handler ships it (console,
    file, Prefect's API log handler): the record factory runs for every record, before any handler. The
    handlers present on the root and "prefect" loggers also get ``RedactSecrets``. Idempotent."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        make_record = logging.getLogRecordFactory()

        def redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            redact_record(record)
            return record

        logging.setLogRecordFactory(redacting_factory)
    for logger in (logging.getLogger(), logging.getLogger("prefect")):
        for handler in logger.handlers:
            if not any(isinstance(existing, RedactSecrets) for existing in handler.filters):
                handler.addFilter(RedactSecrets())
