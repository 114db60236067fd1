"""How deeply a JSON document nests, measured without recursion.

``json`` and everything that walks parsed data later (pydantic, ``json.dumps``, ``copy.deepcopy``, pickling
for Prefect) recurse once per level, so a file nested a thousand levels deep would crash them with a
`RecursionError`. Readers refuse documents deeper than a bound well below Python's recursion limit; these
helpers check the bound iteratively and find where in the text it is first crossed, for the error message.
"""

import re
from typing import Any

_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
"""A JSON string (skipped, since brackets inside it do not nest) or a bracket."""
_CONTAINERS = (dict, list)


def deeper_than(value: Any, limit: int) -> bool:
    """Whether parsed JSON ``value`` has containers nested more than ``limit`` levels deep.

    Walks one level at a time (every container at depth n, then n + 1...), which is several times faster on
    large documents than a stack of (container, depth) pairs.
    """
    level = [value] if isinstance(value, _CONTAINERS) else []
    for _ in range(limit):
        if not level:
            return False
        level = [
            child
            for container in level
            for child in (container.values() if isinstance(container, dict) else container)
            if isinstance(child, _CONTAINERS)
        ]
    return bool(level)


def offset_beyond(text: str, limit: int) -> int | None:
    """Offset in ``text`` of the first bracket that opens level ``limit + 1``; None if there is none."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        bracket = match.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > limit:
                return match.start()
        elif bracket in ("]", "}"):
            depth -= 1
    return None
