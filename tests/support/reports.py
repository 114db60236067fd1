"""Reading an exported HTML report the way a person reads it: one section, and its visible text."""

import re

SECTION_ID = r'<section id="([^"]+)"'


def report_section(html: str, section_id: str) -> str:
    """The HTML of a top-level ``<section id=...>`` without subsections (its title included); fails naming the
    section ids the report has when it lacks this one."""
    found = re.search(rf'<section id="{re.escape(section_id)}"[^>]*>(.*?)</section>', html, re.DOTALL)
    assert found, f"no section {section_id!r} in the report; it has {re.findall(SECTION_ID, html)}"
    return found.group(1)


def visible_text(fragment: str) -> str:
    """The text of an HTML fragment, tags dropped and whitespace collapsed (entities left as written)."""
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


def interval_text(value: float | None, low: float | None, high: float | None) -> str:
    """A figure as the validity tables print it: '0.867 [0.600, 1.000]', or 'not computable'."""
    if value is None:
        return "not computable"
    return f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")


def unpacked(html: str) -> str:
    """The report with its packed parts (the eval eye's rows, figure JSON) unpacked in place, as the page's
    script shows them; plotly.js itself is dropped."""
    import base64
    import gzip

    def expand(found: re.Match[str]) -> str:
        return f"{found.group(1)}>{gzip.decompress(base64.b64decode(found.group(2))).decode('utf-8')}"

    html = re.sub(r'<script type="application/octet-stream" id="plotly-packed">.*?</script>', "", html, flags=re.S)
    return re.sub(r'(<div [^>]*?)data-(?:packed|figure)="([A-Za-z0-9+/=]+)"[^>]*>', expand, html)
