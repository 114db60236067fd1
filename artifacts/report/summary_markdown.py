"""A report's first lines as Markdown, for the Prefect UI's Artifacts tab: what a reader needs before opening
the HTML (the problems by severity and the primary metrics that fail most), then where the HTML is and how to
fetch the stored, hash-checked copy. Pure, from the report's interpretation."""

from typing import Any

from assay.escaping import for_markdown_text

SHOWN_METRICS = 5


def report_summary_markdown(title: str, run_id: str, path: str, store_name: str, interpretation: dict[str, Any]) -> str:
    text = for_markdown_text
    lines = [f"# {text(title)}", "", f"- Run: `{text(run_id)}`"]
    counts = interpretation.get("problem_counts") or {}
    if counts:
        lines.append(
            "- Problems: " + ", ".join(f"{counts.get(level, 0)} {level}" for level in ("high", "medium", "low"))
        )
    headline = interpretation.get("headline") or []
    failing = [line for line in headline if line.get("failing") and line.get("informative", True)]
    for line in failing[:SHOWN_METRICS]:
        lines.append(f"- Fails: {text(line['text'], after_label=True)}")
    uninformative = [line for line in headline if line.get("failing") and not line.get("informative", True)]
    for line in uninformative[:SHOWN_METRICS]:
        lines.append(f"- Fails on nearly every row (not informative on this suite): {text(line['text'])}")
    if headline and not failing and not uninformative:
        lines.append("- No primary metric failed its threshold.")
    lines += [
        f"- Report (self-contained HTML, opens offline; copy the path into the browser): `{text(path)}`",
        f"- From the artifact store, hash-checked: `assay artifacts get {text(store_name)} --out report.html`",
    ]
    return "\n".join(lines) + "\n"
