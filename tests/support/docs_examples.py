"""The Python examples of the docs pages, so that tests run each one as a reader would (``tests/test_docs.py``
checks that every example has a test that runs it)."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)

_CONFORMANCE = "tests/test_plugins.py::test_the_docs_conformance_examples_pass_for_the_example_plugin"
RUN_BY = {
    "explanation/architecture.md": _CONFORMANCE,
    "how-to/plugins.md": _CONFORMANCE,
    "how-to/guardrail.md": "tests/guardrail/test_service.py::test_the_docs_client_example_runs_against_the_service",
}
"""Each page with Python examples -> the test that runs them."""


def python_examples(page: str) -> list[str]:
    """The fenced ``python`` blocks of ``docs/<page>``, in order."""
    return _BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))


def pages_with_python_examples() -> set[str]:
    pages = (path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
    return {page for page in pages if python_examples(page)}
