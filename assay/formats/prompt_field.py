"""Which of a record's named values is the question, for formats that keep several (promptfoo ``vars``,
MLflow 3 ``inputs``), and how the other values become a test case's text variables.

``--prompt-var NAME`` names the field. Without it ``question`` is taken, else whichever one of ``query``,
``input`` and ``prompt`` the record has (two of them is ambiguous), else the record's only field: guessing
between two arbitrary fields would send the wrong text to the system under test without a word.
"""

import json
from collections.abc import Collection
from typing import Any

from assay.formats.options import PROMPT_NAMES


def prompt_field(names: Collection[str], prompt_var: str | None) -> str | None:
    """The field holding the question, or None when ``names`` do not say (the caller names the problem)."""
    if prompt_var is not None:
        return prompt_var if prompt_var in names else None
    if PROMPT_NAMES[0] in names:
        return PROMPT_NAMES[0]
    others = [name for name in PROMPT_NAMES[1:] if name in names]
    if len(others) == 1:
        return others[0]
    if not others and len(names) == 1:
        return next(iter(names))
    return None


def no_prompt_field(names: Collection[str], prompt_var: str | None, what: str) -> str:
    """Why `prompt_field` found nothing, naming the fields there are and how to choose one."""
    found = sorted(names)
    if prompt_var is not None:
        return f"no {what} named {prompt_var!r} (--prompt-var); found {found}"
    if not found:
        return f"no {what}: expected one holding the question"
    preferred = ", ".join(PROMPT_NAMES)
    return f"cannot tell which of {what} {found} is the question (looked for {preferred}); name it with --prompt-var"


def var_text(value: Any) -> str:
    """A value as the text a JavaScript template (promptfoo's nunjucks) would render: ``true``, ``3``, ``1.5``;
    lists and objects as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)
