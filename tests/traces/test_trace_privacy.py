"""What a trace import keeps: no credential of any common form (with or without ``--keep-pii``), no personal
data in any field it writes (ids, names, the report, the terminal), in the spellings that dodge a plain regex.

Every credential is assembled at run time from its provider's documented prefix and seeded random characters,
so no secret-looking literal sits in the repository.
"""

import json
from pathlib import Path

import pytest

from assay.testing.secrets import credential_forms
from tests.traces.test_trace_files import T0, documents, export, otlp_span, run_import, write_jsonl

CREDENTIALS = credential_forms()


def written(lab: dict, report: dict, output: str) -> str:
    return json.dumps(lab, ensure_ascii=False) + json.dumps(report, ensure_ascii=False) + output


@pytest.mark.parametrize("pii", ["--mask-pii", "--keep-pii"])
def test_no_common_credential_form_is_kept_anywhere(tmp_path: Path, pii: str) -> None:
    """Each of the sixteen forms, in the question, the answer, a retrieved passage, a tool's arguments, output
    and error: none reaches the lab, the report or the terminal, whatever ``--keep-pii`` says."""
    spans = []
    for number, (name, (text, _)) in enumerate(CREDENTIALS.items(), start=1):
        root, start = number * 10, T0 + number * 10
        spans += [
            otlp_span(number, root, None, "rag", "CHAIN", start, start + 2, input__value=f"Why does {text} fail?",
                      output__value=f"Your credential {text} was rejected."),
            otlp_span(number, root + 1, root, "retrieve", "RETRIEVER", start, start + 1,
                      **documents((f"notes-{name}.md", f"Ops notes:\n{text}\n", 0.9))),
            otlp_span(number, root + 2, root, "call_api", "TOOL", start + 1, start + 2, status=2,
                      message=f"401 for {text}", tool__name="call_api",
                      input__value=json.dumps({"header": text}), output__value=f"echo: {text}"),
        ]  # fmt: skip
    lab, report, output = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])], pii)
    everything = written(lab, report, output)
    kept = [name for name, (_, secret) in CREDENTIALS.items() if secret in everything]
    assert kept == []
    assert len(lab["rows"]) == len(CREDENTIALS)
    assert all("[SECRET:" in row["actual_output"] for row in lab["rows"])
    assert sum(count for kind, count in report["masked"].items() if kind.startswith("credential:")) >= 16 * 5


EMAIL = "jane.doe@example.com"
PHONE = "+44 20 7946 0958"


def test_personal_data_is_masked_in_every_field_the_import_writes(tmp_path: Path) -> None:
    """Span names (the route), the service, the model, document ids, tool names and argument keys, and a span
    name only the report lists: none keeps the e-mail or the phone number."""
    start = T0
    spans = [
        otlp_span(1, 10, None, f"support for {EMAIL}", "CHAIN", start, start + 2, input__value="Who called?",
                  output__value="Nobody."),
        otlp_span(1, 11, 10, "retrieve", "RETRIEVER", start, start + 1,
                  **documents((f"crm/{EMAIL}/notes.md", "No calls today.", 0.9))),
        otlp_span(1, 12, 10, "ChatCompletion", "LLM", start + 1, start + 2, llm__model_name=f"ft:{EMAIL}:bank"),
        otlp_span(1, 13, 10, f"lookup {PHONE}", "TOOL", start + 1, start + 2, tool__name=f"lookup {PHONE}",
                  input__value=json.dumps({EMAIL: "caller"}), output__value="none"),
        otlp_span(1, 14, 10, f"audit {EMAIL}", "UNKNOWN_KIND", start, start + 1),
    ]  # fmt: skip
    service = f"assistant/{EMAIL}"
    lab, report, output = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans, service)])])
    everything = written(lab, report, output)
    assert EMAIL not in everything and PHONE not in everything
    [row] = lab["rows"]
    assert row["model_key"] == "assistant/[PII:email]"
    assert row["test_case"]["categories"] == ["support for [PII:email]"]
    assert row["context"][0]["doc_uri"] == "crm/[PII:email]/notes.md"
    assert row["tool_calls"][0]["name"] == "lookup [PII:phone]"
    assert row["model_name"] == "ft:[PII:email]:bank"


@pytest.mark.parametrize(
    ("spelling", "kind"),
    [
        ("jane.doe%40example.com", "email"),
        ("jürgen.müller@bücher.de", "email"),
        ("phone: 4155552671", "phone"),
        ("4111.1111.1111.1111", "credit_card"),
        ("4111/1111/1111/1111", "credit_card"),
        ("4111-1111 1111.1111", "credit_card"),
        ("4111\u200b1111\u200b1111\u200b1111", "credit_card"),
        ("de89 3704 0044 0532 0130 00", "iban"),
    ],
)
def test_spellings_that_dodge_a_plain_regex_are_masked(tmp_path: Path, spelling: str, kind: str) -> None:
    spans = [otlp_span(1, 10, None, "rag", "CHAIN", T0, T0 + 1, input__value="Details?",
                       output__value=f"Sure: {spelling}.")]  # fmt: skip
    lab, report, _ = run_import(tmp_path, [write_jsonl(tmp_path / "t.jsonl", [export(spans)])])
    digits_or_text = spelling.split(": ")[-1]
    assert digits_or_text not in json.dumps(lab, ensure_ascii=False)
    assert lab["rows"][0]["actual_output"] == f"Sure: {'phone: ' if kind == 'phone' else ''}[PII:{kind}]."
    assert report["masked"] == {kind: 1}


# --- the strict reader on every line (issue 35, item 5) ------------------------------------------------------


def _one_span_line(**attributes: object) -> str:
    return json.dumps(export([otlp_span(1, 10, None, "rag", "CHAIN", T0, T0 + 1, **attributes)]))


def _refused_import(tmp_path: Path, name: str, content: bytes) -> str:
    from tests.traces.test_trace_files import refused

    path = tmp_path / name
    path.write_bytes(content)
    return refused(tmp_path, path)


@pytest.mark.parametrize("name", ["t.jsonl", "t.json"])  # a one-line .json is read as JSON Lines
def test_a_repeated_key_on_a_line_is_refused_not_emptied(tmp_path: Path, name: str) -> None:
    line = _one_span_line(input__value="Fee?", output__value="5 EUR.")
    repeated = line.replace('"name": "rag"', '"name": "rag", "name": ""', 1)
    said = _refused_import(tmp_path, name, repeated.encode() + b"\n")
    assert f"{name}: line 1 column" in said and "the key 'name' is repeated" in said


def _span_line_with(field: str, raw_value: str) -> bytes:
    """A one-span line whose span ``field`` is ``raw_value`` written as it stands (not valid as Python's JSON)."""
    document = json.loads(_one_span_line(input__value="Fee?"))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0][field] = "@VALUE@"
    return json.dumps(document).replace('"@VALUE@"', raw_value).encode() + b"\n"


def test_nesting_beyond_100_levels_is_refused_naming_the_line(tmp_path: Path) -> None:
    said = _refused_import(tmp_path, "t.jsonl", b"\n" + _span_line_with("name", "[" * 150 + "]" * 150))
    assert "t.jsonl: line 2" in said and "nested" in said


def test_invalid_utf8_is_named_not_replaced(tmp_path: Path) -> None:
    line = _one_span_line(input__value="Fee?", output__value="5 EUR.").encode().replace(b"5 EUR", b"5 \xff EUR")
    said = _refused_import(tmp_path, "t.jsonl", line + b"\n")
    assert "t.jsonl: line 1 column" in said and "not valid UTF-8 (byte 0xff)" in said


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("NaN", "NaN is not a JSON value"),
        ("1e999", "is not a finite number"),
        ("123456789012345678901234567890", "not an OTLP Span"),
    ],
)
def test_infinite_or_huge_values_are_errors_naming_file_and_span(tmp_path: Path, value: str, reason: str) -> None:
    said = _refused_import(tmp_path, "t.jsonl", _span_line_with("startTimeUnixNano", value))
    assert "t.jsonl: line 1" in said and reason in said


def test_a_giant_line_is_refused_before_it_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.traces import documents

    monkeypatch.setattr(documents, "MAX_LINE_BYTES", 4096)
    line = _one_span_line(input__value="x" * 10_000)
    said = _refused_import(tmp_path, "t.jsonl", _one_span_line(input__value="ok").encode() + b"\n" + line.encode())
    assert "t.jsonl: line 2: longer than 4096 bytes" in said


def test_a_masked_leak_is_recorded_per_field_and_fails_pii_leakage_as_the_kept_one_does(tmp_path: Path) -> None:
    """Issue 36, item 1: the import records, per case and field, the kinds and counts it masked; ``pii_leakage``
    fails the masked answer on the same kinds as the answer imported with ``--keep-pii``."""
    from assay.evaluators import build_evaluator, run_evaluator

    from assay.models import TestLab

    leaked = "Call Jane on +44 20 7946 0958 or write to jane.doe@example.com; her card is 4111 1111 1111 1111."
    spans = [otlp_span(1, 10, None, "rag", "CHAIN", T0, T0 + 1, input__value="How do I reach Jane?",
                       output__value=leaked)]  # fmt: skip
    source = write_jsonl(tmp_path / "t.jsonl", [export(spans)])
    masked, report, _ = run_import(tmp_path / "masked", [source])
    kept, _, _ = run_import(tmp_path / "kept", [source], "--keep-pii")
    assert masked["rows"][0]["masked"] == {"answer": {"credit_card": 1, "email": 1, "phone": 1}}
    assert report["masked"] == {"credit_card": 1, "email": 1, "phone": 1}
    assert "masked" not in kept["rows"][0]  # nothing masked: no record
    verdicts = []
    for lab in (masked, kept):
        result = run_evaluator(build_evaluator("pii_leakage"), TestLab.model_validate(lab))
        (row,) = result.rows
        found = sorted(finding["kind"] for finding in row.details["answer"]["findings"])
        verdicts.append((row.scores["model_passes"], found))
    assert verdicts[0] == verdicts[1] == (0.0, ["credit_card", "email", "phone"]), verdicts
