"""Escaping text that files and models supply, for the terminal (Rich) and for Markdown reports."""

import io

from assay.artifacts.corpus_patch import CorpusPatch, FaqEntry
from assay.artifacts.prompt_extension import PromptExtension, PromptRule
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from assay.escaping import for_markdown_cell, for_markdown_text, for_terminal, visible_controls

EXAMPLES = settings(max_examples=300, derandomize=True, database=None)
HOSTILE = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(list("[]/\\|<>&`*_~#\n\r\x1b\x07\u202e")))


def rendered(markup: str) -> str:
    out = io.StringIO()
    Console(file=out, width=10_000, color_system=None, highlight=False).print(markup, end="")
    return out.getvalue()


@EXAMPLES
@given(HOSTILE)
def test_the_terminal_shows_exactly_the_text_with_controls_made_visible(text: str) -> None:
    text = text.replace("\t", " ")  # Rich expands tabs to the next stop: not a change of content
    shown = rendered(f"[bold]{for_terminal(text)}[/bold]")
    assert shown == visible_controls(text)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown


def test_rich_markup_and_ansi_are_printed_literally() -> None:
    assert rendered(f"[bold]{for_terminal('[/]')}[/bold]") == "[/]"
    assert rendered(for_terminal("[bold red]PASS[/bold red]")) == "[bold red]PASS[/bold red]"
    assert rendered(for_terminal("\x1b[31mred")) == "\\x1b[31mred"


@EXAMPLES
@given(HOSTILE)
def test_a_markdown_cell_is_one_cell_of_one_row_without_html_or_links(text: str) -> None:
    cell = for_markdown_cell(text)
    assert "\n" not in cell and "\r" not in cell and "|" not in cell
    assert "<" not in cell.replace("<br>", "") and ">" not in cell.replace("<br>", "")
    assert "](" not in cell and "[" not in cell and "`" not in cell


def test_markdown_text_cannot_start_a_block_or_a_link() -> None:
    assert for_markdown_text("# Title\n- item") == "&#35; Title - item"
    assert for_markdown_text("[click](javascript:alert(1))") == "&#91;click&#93;(javascript:alert(1))"
    assert for_markdown_text("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert for_markdown_text("model_key and 2.5% AER") == "model_key and 2.5% AER"


def test_corpus_patch_and_prompt_extension_escape_what_they_embed() -> None:
    entry = FaqEntry(
        question="<img src=x onerror=alert(1)>\n# heading",
        answer="[x](javascript:alert(1))",
        topic="<b>cards</b>",
        reasons=["r"],
        source_case_keys=["k"],
        models=["m"],
    )
    patch = CorpusPatch(title="FAQ <script>", run_id="run\n# injected", entries=[entry]).markdown()
    assert "<img" not in patch and "<script" not in patch and "<b>" not in patch and "](javascript:" not in patch
    assert not any(line.startswith("# injected") or line.startswith("# heading") for line in patch.splitlines())
    rule = PromptRule(id="r", section="S", title="T", text="Expect [x](javascript:1) <i>", traces=[])
    text = PromptExtension(title="Rules\n# more", rules=[rule]).text()
    assert "](javascript:" not in text and "<i>" not in text and "\n# more" not in text


def test_text_after_a_label_keeps_its_leading_dash() -> None:
    """ "- Fails: --fail-on high ..." cannot start a block after its label; V1 showed the escaped dash as &#45;."""
    from assay.escaping import for_markdown_text

    assert for_markdown_text("--fail-on high: 2 high problems") == "&#45;-fail-on high: 2 high problems"
    assert for_markdown_text("--fail-on high: 2 high problems", after_label=True) == "--fail-on high: 2 high problems"
    assert for_markdown_text("<b>*x*</b>", after_label=True) == for_markdown_text("<b>*x*</b>")


def test_prefect_markdown_escapes_with_backslashes_which_the_default_ui_reads() -> None:
    """Prefect's V1 shows numeric entities (``&#124;``) as they are: a Prefect artifact's text is backslash-escaped
    instead, a pipe too, so a table cell keeps it as text and the row keeps its cells."""
    from assay.escaping import for_prefect_markdown

    escaped = for_prefect_markdown("a|b [x](javascript:alert(1)) <script> *bold* \\| \x1b[31m\nnext")
    assert escaped == "a\\|b \\[x\\](javascript:alert(1)) \\<script> \\*bold\\* \\\\\\| \\\\x1b\\[31m next"
    assert "&#" not in escaped
    assert for_prefect_markdown("interval [-0.4, -0.1]; model_key") == "interval \\[-0.4, -0.1\\]; model_key"
