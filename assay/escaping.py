"""Text that a model or a file supplied, made safe for the medium it is shown in.

Model keys, names, questions, answers, reasons and error messages come from files and from the systems
under test. Printed as they are, they can restyle or break the terminal (Rich markup such as ``[/]`` or
``[bold red]PASS[/bold red]``, raw ANSI escape sequences) and inject into Markdown reports (``<script>``,
``[x](javascript:...)`` links, newlines and ``|`` that break a table). Every writer passes such text
through the function for its medium; text the code itself wrote (headings, numbers) needs nothing.
"""

import html
import re

from rich.markup import escape as escape_rich_markup

# C0 controls (ESC starts ANSI sequences), DEL, C1 controls, and the bidirectional overrides that can make
# text display in another order than it is stored. Newline and tab are handled per medium.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAK = re.compile(r"\r\n|[\n\r\u0085\u2028\u2029]")
# Characters with a meaning in Markdown inline text: replaced by HTML entities, so no escaped form such as
# "\](javascript:" is left for a renderer to read as a link. An underscore inside a word (model_key) means
# nothing to Markdown and is kept readable.
_MARKDOWN_ENTITIES = {
    "[": "&#91;",
    "]": "&#93;",
    "`": "&#96;",
    "*": "&#42;",
    "~": "&#126;",
    "\\": "&#92;",
    "|": "&#124;",
    "_": "&#95;",
}
_MARKDOWN_SPECIAL = re.compile(r"[\[\]`*~\\|]|(?<![^\W_])_|_(?![^\W_])")
# A line that starts like a heading, list item or rule ("# ", "- ", "+ ", "---", "===", "1. ") would turn the
# text into a block; the marker's punctuation is replaced by its entity. (">" is already "&gt;".)
_BLOCK_START = re.compile(r"^(\s*\d{0,9})([#+=.)-])(?=[\s#+=-]|$)")


def visible_controls(text: str) -> str:
    r"""Control characters (but newline and tab) shown as visible escapes such as ``\x1b``, so they can
    neither drive the terminal nor hide or reorder text."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def short_line(text: object, limit: int) -> str:
    """One line (runs of white space, line breaks too, as one space) of at most ``limit`` characters, cut
    with an ellipsis."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def for_terminal(text: object) -> str:
    """For a Rich console print with markup on: control characters made visible, Rich markup escaped."""
    return escape_rich_markup(visible_controls(str(text)))


def for_markdown_text(text: object, *, after_label: bool = False) -> str:
    """For inline Markdown (a list item, a heading, a sentence): one line, no HTML, no links, no emphasis,
    and no block structure (a leading ``#`` or ``-`` is shown as it is). ``after_label``: the text follows a
    label on its line ("- Fails: ..."), where it cannot start a block, so a leading "-" ("--fail-on") is left as
    it is (Prefect's V1 shows an escaped one as ``&#45;``)."""
    single_line = _LINE_BREAK.sub(" ", visible_controls(str(text)))
    escaped = _MARKDOWN_SPECIAL.sub(
        lambda match: _MARKDOWN_ENTITIES[match.group()], html.escape(single_line, quote=False)
    )
    if after_label:
        return escaped
    return _BLOCK_START.sub(lambda match: f"{match.group(1)}&#{ord(match.group(2))};", escaped)


def for_markdown_cell(text: object) -> str:
    """For a Markdown table cell: like :func:`for_markdown_text`, line breaks kept as ``<br>`` and ``|``
    escaped, so the row stays one row with the same number of cells."""
    return "<br>".join(for_markdown_text(line) for line in _LINE_BREAK.split(str(text)))


# What can turn one line of text into Markdown mid-line (emphasis, code, links and images, HTML and autolinks,
# strikethrough); an underscore inside a word ("answer_similarity") is no emphasis in CommonMark.
# V1 also turns e-mail addresses, "scheme://" and "www." into links (GFM autolinks): an escaped "@", ":" before
# "//" or "." after "www" stops that.
_MARKDOWN_INLINE = re.compile(r"[\\`*\[\]<~@]|(?<![^\W_])_|_(?![^\W_])|:(?=//)|(?<=\bwww)\.", re.IGNORECASE)


def for_field_description(text: object) -> str:
    """For a Prefect form field's description, which the default UI (V1) draws as Markdown and V2 as plain
    text: one line, control characters visible, inline Markdown and autolinks backslash-escaped (no link,
    e-mail link, image, emphasis or HTML in V1; V2 shows the backslash before such a character). Start it with
    a plain label ("Question: ...") so no block marker can lead it."""
    single = " ".join(visible_controls(str(text)).split())
    return _MARKDOWN_INLINE.sub(lambda match: "\\" + match.group(), single)


def for_prefect_markdown(text: object) -> str:
    r"""For a Prefect Markdown artifact (a table cell, or text after a label on its line). Prefect's default UI
    (V1) draws Markdown token by token and decodes only ``&lt; &gt; &amp; &quot; &#39;``: a numeric entity such
    as ``&#124;`` (what :func:`for_markdown_cell` writes, right for GitHub and files) shows as it is. So the text
    is escaped as for a field description (backslashes, which every renderer reads), and a ``|`` as ``\|``,
    which GFM reads as a pipe inside its table cell."""
    return for_field_description(text).replace("|", "\\|")
