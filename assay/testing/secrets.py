"""Looking for a secret in what a run wrote: its exact text and the derived copies a host may echo."""

import re
from collections.abc import Iterable
from pathlib import Path

MIN_DERIVED_CHARS = 12
"""The shortest prefix of a secret that must never be stored (issue 25)."""
_SEPARATORS = re.compile(r"[\s\u200b-\u200d\u2060\ufeff\u00ad]+|\\u(?:200[bcd]|2060|feff|00ad)", re.IGNORECASE)
"""Whitespace and zero-width characters, raw or JSON-escaped (a JSON file may hold ``\\u200b``)."""


def derived_copies(secret: str) -> list[str]:
    """The forms an audit found stored: cut short, upper-cased, split by zero-width characters or by spaces."""
    return [secret[: len(secret) * 4 // 5], secret.upper(), "\u200b".join(secret), " ".join(secret)]


def files_holding(secret: str, paths: Iterable[Path]) -> list[str]:
    """The files from which the secret's first ``MIN_DERIVED_CHARS`` characters can be read back, in any case,
    whatever whitespace or zero-width characters were put between them."""
    return [str(path) for path in paths if text_holds(secret, path.read_bytes().decode("utf-8", "replace"))]


def text_holds(secret: str, text: str) -> bool:
    """Whether the secret's first ``MIN_DERIVED_CHARS`` characters can be read back from ``text``, as above."""
    return secret[:MIN_DERIVED_CHARS].casefold() in _SEPARATORS.sub("", text).casefold()
