"""``assay traces import`` exits 2 when no request became a test case, naming the most common reason (issue 36,
item 6): an empty lab evaluates to "0/0 answered", which would pass every gate."""

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app

runner = CliRunner()


def _span(trace: int, span: int, parent: int | None, name: str, **attributes: str) -> dict:
    raw = {
        "traceId": f"{trace:032x}", "spanId": f"{span:016x}", "name": name, "kind": 1,
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": key.replace("__", "."), "value": {"stringValue": value}}
                       for key, value in attributes.items()],
    }  # fmt: skip
    if parent is not None:
        raw["parentSpanId"] = f"{parent:016x}"
    return raw


def _export(path: Path, spans: list[dict]) -> Path:
    scope = {"scope": {"name": "test"}, "spans": spans}
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}) + "\n")
    return path


def _import(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["traces", "import", *args])
    return result.exit_code, [line for line in result.output.splitlines() if line.startswith("error:")]


def test_no_case_exits_2_with_the_most_common_reason(tmp_path: Path) -> None:
    spans = [_span(trace, 1, None, "chain", openinference__span__kind="CHAIN") for trace in (1, 2, 3)]
    spans.append(_span(4, 2, 1, "llm"))  # its root is in no file
    source = _export(tmp_path / "t.jsonl", spans)
    code, errors = _import(str(source), "--out", str(tmp_path / "lab.json"))
    assert code == 2
    assert len(errors) == 1
    assert errors[0] == (
        "error: no test cases imported: the most common reason left out 3 of 4 traces: no question found (no "
        f"input.value on the root, no user message to an LLM) (report: {tmp_path / 'lab.import.json'})"
    )


def test_a_file_without_spans_exits_2_saying_so(tmp_path: Path) -> None:
    source = _export(tmp_path / "t.jsonl", [])
    code, errors = _import(str(source), "--out", str(tmp_path / "lab.json"))
    assert code == 2
    assert errors and "no spans were read from 1 file(s); check that they are otlp-json exports" in errors[0]


def test_an_import_with_cases_still_exits_0(tmp_path: Path) -> None:
    root = _span(1, 1, None, "rag", openinference__span__kind="CHAIN", input__value="Where is the office?",
                 output__value="In Paris.")  # fmt: skip
    code, errors = _import(str(_export(tmp_path / "t.jsonl", [root])), "--out", str(tmp_path / "lab.json"))
    assert (code, errors) == (0, [])
