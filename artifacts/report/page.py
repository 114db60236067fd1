"""The one HTML page layout every Assay report uses (evaluation, MRM run, comparison): a left navigation, one
``<section>`` per report section, plotly.js and the styles inlined so the file opens offline, prints, and can
be archived or mailed as a single file. Bulky parts (plotly.js, figures, the eval eye's rows) are embedded
gzipped (``packed``) and unpacked by the page, which keeps a sample MRM report under 3 MB.

Everything a system under test said is hostile input. Templates autoescape; data handed to page scripts goes
through ``json_script`` (``<``, ``>``, ``&`` and line separators escaped, so no string can close the tag);
text shown inside a plotly figure goes through ``figure_text`` (plotly renders a subset of HTML in labels)."""

import base64
import gzip
import html
import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@dataclass
class Section:
    """One navigable part of a report. ``html`` is already rendered (by a template, so escaped);
    ``children`` are sub-sections shown nested in the navigation."""

    id: str
    title: str
    html: Markup
    children: list["Section"] = field(default_factory=list)


@cache
def environment() -> Environment:
    """Templates live in ``artifacts/report/templates``; autoescaping is on for every template."""
    env = Environment(
        loader=PackageLoader("assay.artifacts.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["clean"] = clean_text
    env.filters["json_script"] = json_script
    env.filters["number"] = format_number
    env.filters["text_block"] = text_block
    env.filters["verdict_cell"] = verdict_cell
    env.filters["threshold"] = threshold_text
    env.filters["run_status"] = run_status
    return env


def render(template: str, **context: Any) -> Markup:
    """One template rendered to safe markup, to be placed in a ``Section``."""
    return Markup(environment().get_template(template).render(**context))


def clean_text(value: Any) -> str:
    """Text for display: ANSI escape sequences and control characters removed (escaping is the template's)."""
    if value is None:
        return ""
    return _CONTROL.sub("", _ANSI.sub("", str(value)))


def figure_text(value: Any, limit: int = 80) -> str:
    """Text placed in a plotly label or hover: cleaned, shortened, and HTML-escaped (plotly renders tags)."""
    text = " ".join(clean_text(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=True)


def json_script(data: Any) -> Markup:
    """JSON safe to place inside ``<script type="application/json">``: nothing in it can end the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    return Markup("".join(_JSON_ESCAPES.get(character, character) for character in text))


# The eval eye places these in every row of every case (tens of thousands of times at 1,000 cases): as Python
# filters they cost a fifth of what the same markup cost as Jinja macros.
_VERDICT_CLASSES = {"pass": "pass", "fail": "fail", "unscored": "unscored"}
_TRUNCATED = Markup(
    '<p class="muted truncated">(truncated, {} characters; the full text is in interpretation.json and the CSV)</p>'
)


def text_block(value: Any, limit: int) -> Markup:
    """A text for display, cut at ``limit`` characters with a note saying how long it was."""
    text = clean_text(value)
    block = Markup('<div class="text-block">{}</div>\n').format(text[:limit])
    return block + _TRUNCATED.format(len(text)) if len(text) > limit else block


def verdict_cell(verdict: Any) -> Markup:
    """A verdict coloured by its class: pass, fail, unscored, anything else muted."""
    return Markup('<span class="{}">{}</span>\n').format(_VERDICT_CLASSES.get(verdict, "muted"), verdict)


def threshold_text(value: Any, source: Any) -> Markup:
    """A threshold and who or what set it ("none" when the metric has none)."""
    if value is None:
        return Markup('<span class="muted">none</span>')
    number = Markup.escape(format_number(value))
    return number + Markup(' <span class="muted">({})</span>').format(clean_text(source)) if source else number


def run_status(status: Any) -> str:
    """The run record's status as a reader says it: a finished run ("complete") reads "completed"."""
    if status == "complete":
        return "completed"
    return clean_text(status) if status else "not recorded"


def format_number(value: Any, digits: int = 3) -> str:
    """A score for a table cell: None is "unscored", never 0."""
    if value is None:
        return "unscored"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


FIGURE_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}


def packed(text: str) -> str:
    """Text gzipped and base64-encoded, for the page to unpack when it needs it (``assayUnpack`` in
    page.html.j2). A sample MRM report held 12 MB of plotly.js, figure JSON and eval-eye rows as plain text;
    packed it is a quarter of that and opens without parsing what the reader has not reached. ``mtime=0``:
    the same run still renders to the same bytes. Base64 has no character that could end an element."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def figure_html(figure: Any, *, height: int | None = None) -> Markup:
    """A plotly figure as a ``<div>`` holding its packed JSON; the page draws it once plotly.js is unpacked.
    Only data is packed, never script: what a figure shows is text that ``figure_text`` escaped."""
    if height is not None:
        figure.update_layout(height=height)
    figure.update_layout(margin={"l": 40, "r": 20, "t": 40, "b": 40}, template="plotly_white")
    return Markup('<div class="plotly-graph-div" data-figure="{}"></div>').format(packed(figure.to_json()))


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return packed(get_plotlyjs())


def render_page(
    title: str,
    sections: list[Section],
    *,
    subtitle: str = "",
    data: dict[str, Any] | None = None,
    with_charts: bool = True,
    generated_at: str | None = None,
) -> str:
    """A complete, self-contained HTML document. ``data`` is embedded as JSON (``<script id="report-data">``)
    for the page's own scripts, e.g. the eval eye's filters. The page holds no clock time unless
    ``generated_at`` is given: the same run renders to the same bytes, so a resumed run republishes nothing."""
    return (
        environment()
        .get_template("page.html.j2")
        .render(
            title=title,
            subtitle=subtitle,
            sections=sections,
            data=data,
            plotly_js=_plotly_js() if with_charts else None,
            figure_config=FIGURE_CONFIG,
            generated_at=generated_at,
        )
    )
