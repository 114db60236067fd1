"""Rules of the local test judge: one function per judge template id, turning the template's inputs (the
``<tag>...</tag>`` blocks of the prompt) into a deterministic verdict of the template's JSON schema.

They are crude on purpose (word overlap, keyword lists, regexes): the point is a judge whose verdict is
derived from the request, so a wrong prompt, a swapped input or a lost case shows up in the tests. Each
family lives in its own module here; every module in the package is imported, so adding one registers it.
"""

import importlib
import pkgutil
import re
from collections.abc import Callable
from typing import Any

Verdict = dict[str, Any]
Rule = Callable[[dict[str, str]], Verdict]

RULES: dict[str, Rule] = {}

_STOPWORD_TEXT = (
    "a an the and or but if of to in on at for with by from as is are was were be been being it its this that "
    "these those there their they them he she his her you your we our i my me not no do does did can could will "
    "would should may might must has have had than then so such which who whom what when where why how all any "
    "each other some into over under about after before also only just more most very"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split(" "))
_TAG = re.compile(r"<([a-z_][a-z0-9_]*)>\n?(.*?)\n?</\1>", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


def rule(*template_ids: str) -> Callable[[Rule], Rule]:
    def register(function: Rule) -> Rule:
        for template_id in template_ids:
            if template_id in RULES:
                raise ValueError(f"two rules for judge template {template_id!r}")
            RULES[template_id] = function
        return function

    return register


def sections(text: str) -> dict[str, str]:
    """The ``<tag>...</tag>`` blocks of a prompt (first occurrence of each tag wins)."""
    found: dict[str, str] = {}
    for match in _TAG.finditer(text):
        found.setdefault(match.group(1), match.group(2).strip())
    return found


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    return {word for word in words(text) if word not in STOPWORDS and len(word) > 1}


def coverage(part: str, whole: str) -> float:
    """Share of ``part``'s content words that occur in ``whole`` (1.0 when ``part`` has none)."""
    mine = content_words(part)
    return 1.0 if not mine else len(mine & content_words(whole)) / len(mine)


def sentences(text: str) -> list[str]:
    return [sentence.strip() for sentence in _SENTENCE.split(text.strip()) if sentence.strip()]


def numbered(text: str) -> list[str]:
    """Items of a list rendered as ``1. item`` lines (claims, chunks, statements); falls back to lines."""
    items = re.findall(r"^\s*\d+[.)]\s*(.+)$", text, flags=re.MULTILINE)
    return items or [line.strip() for line in text.splitlines() if line.strip()]


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
