"""A person's name as given in a form, a file or an option: decisions, labels and approvals are credited to it,
so it must be a name a reader of the record can see.

Runs of white space become one space. Control characters (NUL, escapes) and format characters (zero-width
spaces and joiners, word joiners, the BOM, direction marks) are dropped: they show nothing. What is left must
hold a visible character; letters that draw as blank (the braille blank U+2800, the Hangul fillers U+115F,
U+1160, U+3164 and U+FFA0) are not visible, so "\u3164" or "\u2800\u2800" is no name, and neither is "\u200b".
"""

import unicodedata

BLANK_LETTERS = frozenset("\u2800\u115f\u1160\u3164\uffa0")
"""Characters Unicode classes as letters or symbols that render as empty space."""
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def person_name(text: object) -> str:
    """The name as it will be recorded; ``""`` when nothing visible is left (the caller refuses it)."""
    kept = "".join(
        char for char in str(text) if char.isspace() or unicodedata.category(char) not in _INVISIBLE_CATEGORIES
    )
    name = " ".join(kept.split())
    return name if any(not char.isspace() and char not in BLANK_LETTERS for char in name) else ""
