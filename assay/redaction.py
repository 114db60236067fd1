"""Secret values never leave the process: not in errors, log lines, test labs, results or artifacts.

A host's error body may echo the credential it was sent ("401: invalid key sk-..."), an S3 error may name
the access key, and those messages travel into test-lab rows, problems, the object store and Prefect's
results. Configuration only ever holds the *name* of a secret (``ModelHost.secret_ref``) and ``SecretStr``
settings, so redaction works on values: every secret the process reads is registered here, and ``redact``
replaces each registered value, and the forms it takes on the wire (URL-encoded, JSON-escaped, inside
base64 such as HTTP basic auth), with ``[REDACTED:<name>]``.

A host may also echo a *derived* copy: cut short ("invalid key sk-live-9Qw3Ez7Rt5Yu..."), upper-cased, or with
zero-width characters (U+200B..U+200D, U+2060, U+FEFF, the soft hyphen U+00AD; raw or JSON-escaped) or
whitespace between its characters. For a value of ``MIN_DERIVED_CHARS`` or more, any prefix of at least that
many characters is redacted in any case, with any of those characters in between. Suffixes and middle pieces
are not: a masked key is conventionally shown by its last four characters (``sk-...abcd``), which identify it
without giving it away. Values shorter than ``MIN_DERIVED_CHARS`` are matched exactly (in their wire forms),
since a case-insensitive match of a short value would mangle ordinary text.

Redaction runs on every string of every row before it is stored, so it is built once per set of secrets:
one compiled pattern, and a prefilter that answers "no secret here" for most text at C speed: the text,
case-folded with those characters removed, is scanned once for any form's literal text. The cost, 10k rows
of about 600 characters with three secrets (33 literal forms): 0.37 s here, 0.51 s with a pound sign in each.

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
"""Shorter values are not redacted (see the module docstring)."""
MIN_DERIVED_CHARS = 12
"""Values this long have their prefixes of this length or more, case-folded and split copies redacted too."""
SECRET_NAME = re.compile(r"key|token|secret|password|credential|auth", re.IGNORECASE)
"""A setting or field named like this may hold a credential: its value is masked, never echoed."""
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
"""Zero-width characters and the soft hyphen: a copy of a secret with these inside still reads as the secret."""
_SEPARATOR = f"(?:[{INVISIBLE}\\s]|\\\\u(?:200[bcd]|2060|feff|00ad))*"
"""Between two characters of a derived copy: invisible characters or whitespace, raw or JSON-escaped (a raw
response body keeps ``\\u200b`` as six characters)."""
_ESCAPED_INVISIBLE = re.compile(rb"\\u(?:200[bcd]|2060|feff|00ad)")
_ASCII_SPACE = bytes(code for code in range(128) if chr(code).isspace())
_ASCII_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
_WIDE_SEPARATORS = re.compile(
    b"|".join(re.escape(chr(code).encode()) for code in range(128, 0x3001) if chr(code).isspace())
    + b"|"
    + b"|".join(re.escape(char.encode()) for char in INVISIBLE)
)
"""What ``_SEPARATOR`` skips beyond ASCII whitespace, as UTF-8 (every whitespace character is below U+3001)."""

_lock = threading.Lock()
_names: dict[str, str] = {}
"""Every registered value -> the name the placeholder shows."""


class _Redactor:
    """Everything ``redact`` needs for one set of secrets, built once when that set changes."""

    def __init__(self, names: dict[str, str]) -> None:
        exact = {form: name for value, name in names.items() for form in _forms(value)}
        derived = {value: name for value, name in names.items() if len(value) >= MIN_DERIVED_CHARS}
        # Longest first: a form inside another loses; the exact wire forms before the derived patterns, which
        # would stop a URL-encoded value at its first escape.
        alternatives = [(re.escape(form), exact[form]) for form in sorted(exact, key=len, reverse=True)]
        alternatives += [(_derived_pattern(value), derived[value]) for value in sorted(derived, key=len, reverse=True)]
        self.group_names = {f"s{index}": name for index, (_, name) in enumerate(alternatives)}
        self.pattern = re.compile("|".join(f"(?P<s{index}>{form})" for index, (form, _) in enumerate(alternatives)))
        # What the prefilter looks for in the normalised text: each exact form (normalising a text keeps every
        # substring's normalised form in it) and each derived value's shortest prefix; none inside another.
        needles = {_normalise(form) for form in exact} | {_normalise(value[:MIN_DERIVED_CHARS]) for value in derived}
        needles = {needle for needle in needles if not any(other != needle and other in needle for other in needles)}
        # Searched one by one with ``in`` (a C substring search at memory speed): an alternation of dozens of
        # literals makes ``re`` try each at every position, several times slower.
        self.needles = tuple(sorted(needles, key=len, reverse=True))
        self.shortest = min(map(len, needles))

    def redact(self, text: str) -> str:
        if not self._may_hold_a_secret(text):
            return text
        return self.pattern.sub(self._placeholder, text)

    def _may_hold_a_secret(self, text: str) -> bool:
        """False only when no form can match: one scan for literal needles (which ``re`` does fast, by their
        first bytes), before the slower pattern. Short ASCII text (keys, labels) is never normalised."""
        if len(text) < self.shortest and text.isascii():
            return False
        normalised = _normalise(text)
        return any(needle in normalised for needle in self.needles)

    def _placeholder(self, match: re.Match[str]) -> str:
        return f"[REDACTED:{self.group_names[match.lastgroup or '']}]"


_pattern: _Redactor | None = None
"""None until a secret is registered: nothing to redact."""


def register_secret(value: str | SecretStr | None, name: str) -> None:
    """Redact ``value`` from now on wherever ``redact`` runs; ``name`` (an env var, a setting) says which
    secret was there without saying what it was."""
    global _pattern
    plain = value.get_secret_value() if isinstance(value, SecretStr) else value
    if plain is None or len(plain) < MIN_SECRET_CHARS:
        return
    with _lock:
        if plain in _names:
            return
        _names[plain] = name
        _pattern = _Redactor(_names)


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
    byte alignments (basic auth encodes "user:secret", so the secret may start anywhere in a 3-byte group);
    and the copies a model asked to "hide" a key makes of it (``_disguises``)."""
    forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), json.dumps(value)[1:-1]}
    forms |= _disguises(value)
    raw = value.encode()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode()
        # Only the characters whose 6 bits all come from the value: the others depend on its neighbours.
        first, last = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6
        forms.add(encoded[first:last])
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def _disguises(value: str) -> set[str]:
    """Reversed, dashed between every character, hex (either case), ROT13, full-width and HTML character
    references (decimal and hex): what an echoed secret was seen turned into. Each is matched whole; a copy
    disguised two ways at once, or only in part, is not (docs/explanation/reliability-security.md lists what is
    and is not redacted)."""
    rot13 = value.translate(_ROT13)
    full_width = "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in value)
    hexed = value.encode().hex()
    return {
        value[::-1], "-".join(value), hexed, hexed.upper(), rot13, full_width,
        "".join(f"&#{ord(char)};" for char in value), "".join(f"&#x{ord(char):x};" for char in value),
    } - {value}  # fmt: skip


_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm"
)


def _derived_pattern(value: str) -> str:
    """Case-insensitive: the first ``MIN_DERIVED_CHARS`` characters, then as many of the following ones as
    the text goes on with, any invisible or whitespace characters in between."""
    chars = [re.escape(char) for char in value]
    required = _SEPARATOR.join(chars[:MIN_DERIVED_CHARS])
    return "(?i:" + required + "".join(f"(?:{_SEPARATOR}{char})?" for char in chars[MIN_DERIVED_CHARS:]) + ")"


def _normalise(text: str) -> bytes:
    """``text`` case-folded without what ``_SEPARATOR`` skips, as UTF-8. Both paths work on bytes: ASCII
    text (most text) is lowered and stripped by one ``bytes.translate``; other text is case-folded as a string,
    then stripped of ASCII whitespace and of the wider separators (a byte pattern that rarely matches). A
    per-character ``str.translate`` table was eight times slower on text with one pound sign in it."""
    if text.isascii():
        normalised = text.encode("ascii").translate(_ASCII_LOWER, _ASCII_SPACE)
    else:
        folded = text.casefold().encode("utf-8", "surrogatepass").translate(None, _ASCII_SPACE)
        normalised = _WIDE_SEPARATORS.sub(b"", folded)
    return _ESCAPED_INVISIBLE.sub(b"", normalised) if b"\\u" in normalised else normalised


def redact(text: str) -> str:
    """``text`` with every registered secret (and derived copy) replaced by ``[REDACTED:<name>]``."""
    redactor = _pattern
    return text if redactor is None else redactor.redact(text)


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
