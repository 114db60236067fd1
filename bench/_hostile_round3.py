"""Round three of the hostile cases (issue 35), each section counted as tried / held / failed.

    trace credentials    16 credential forms in every kept field, imported with --mask-pii and --keep-pii
    trace personal data  e-mails and phone numbers in ids, names and routes; spellings that dodge a plain regex
    trace lines          repeated keys, NaN, overflowing numbers, deep nesting, invalid UTF-8, huge integers
    bundles              duplicate, encrypted, corrupt, unknown-method and bomb members; a FIFO as the bundle
    store                a giant declared size, a '..' file name, an edited run pointer, a removed journal entry
    network policy       the cloud platform and IPv6 metadata addresses added to the defaults
    names and inputs     invisible names, [true] as a topic id, NaN ids, duplicate columns and model keys, ...
    secret disguises     reversed, dashed, hex, ROT13, full-width and HTML-entity copies; a repeated /check key
    budgets and bounds   a 98 KB answer against a 2 s check budget; traces over the span and byte limits; an
                         import killed (kill -9) while writing its report

The guardrail's budget over HTTP (503 within budget + 1 s) is measured by bench/guardrail.py --large-kb 98, and
trace-import memory on 2,000,000 spans by bench/trace_import_memory.py.
"""

import json
import math
import os
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for the tests' trace writers

from _hostile import Section

from tests.traces.test_trace_files import T0, documents, export, otlp_span, write_jsonl


def _import(folder: Path, spans: list[dict[str, Any]], *, mask_pii: bool = True, service: str = "rag-app") -> str:
    """The lab and report of an import of ``spans``, as one text (what a leak would be found in)."""
    from assay.traces import ImportOptions
    from assay.traces.files import import_to_file, report_path

    source = write_jsonl(folder / "t.jsonl", [export(spans, service)])
    out = folder / "lab.json"
    import_to_file([source], ImportOptions(mask_pii=mask_pii), out)
    return out.read_text(encoding="utf-8") + report_path(out).read_text(encoding="utf-8")


def _credentials(folder: Path) -> Section:
    from assay.testing.secrets import credential_forms

    section = Section("trace credentials")
    for mask_pii in (True, False):
        for name, (text, secret) in credential_forms().items():
            spans = [
                otlp_span(1, 10, None, "rag", "CHAIN", T0, T0 + 1, input__value=f"Why does {text} fail?",
                          output__value=f"Rejected: {text}"),
                otlp_span(1, 11, 10, "call", "TOOL", T0, T0 + 1, tool__name="call",
                          input__value=json.dumps({"header": text}), output__value=text),
            ]  # fmt: skip
            written = _import(folder, spans, mask_pii=mask_pii)
            section.check(f"{name} ({'mask' if mask_pii else 'keep'} pii)", secret not in written)
    return section


EMAIL, PHONE = "jane.doe@example.com", "+44 20 7946 0958"
SPELLINGS = {
    "url-encoded e-mail": "jane.doe%40example.com",
    "IDN e-mail": "jürgen.müller@bücher.de",
    "unseparated phone": "phone: 4155552671",
    "dotted card": "4111.1111.1111.1111",
    "slashed card": "4111/1111/1111/1111",
    "mixed card": "4111-1111 1111.1111",
    "zero-width card": "4111\u200b1111\u200b1111\u200b1111",
    "lower-case IBAN": "de89 3704 0044 0532 0130 00",
}


def _personal_data(folder: Path) -> Section:
    section = Section("trace personal data")
    fields = {
        "route": dict(name=f"support {EMAIL}"),
        "document id": dict(retriever=f"crm/{EMAIL}.md"),
        "model": dict(model=f"ft:{EMAIL}"),
        "tool name": dict(tool=f"lookup {PHONE}"),
        "service": dict(service=f"app/{EMAIL}"),
    }
    for what, where in fields.items():
        spans = [otlp_span(1, 10, None, where.get("name", "rag"), "CHAIN", T0, T0 + 1, input__value="q?",
                           output__value="a.")]  # fmt: skip
        if "retriever" in where:
            found = documents((where["retriever"], "t", 0.9))
            spans.append(otlp_span(1, 11, 10, "r", "RETRIEVER", T0, T0 + 1, **found))
        if "model" in where:
            spans.append(otlp_span(1, 12, 10, "llm", "LLM", T0, T0 + 1, llm__model_name=where["model"]))
        if "tool" in where:
            spans.append(otlp_span(1, 13, 10, where["tool"], "TOOL", T0, T0 + 1, tool__name=where["tool"]))
        written = _import(folder, spans, service=where.get("service", "rag-app"))
        section.check(what, EMAIL not in written and PHONE not in written)
    for what, spelling in SPELLINGS.items():
        spans = [otlp_span(1, 10, None, "rag", "CHAIN", T0, T0 + 1, input__value="q?", output__value=spelling)]
        section.check(what, spelling.split(": ")[-1] not in _import(folder, spans))
    return section


def _refused(call: Callable[[], Any], *expected: type[BaseException]) -> tuple[bool, str]:
    try:
        call()
    except expected as error:
        return True, str(error)[:80]
    except Exception as error:  # anything else is the unexpected-error path the audit found
        return False, f"{type(error).__name__}: {str(error)[:80]}"
    return False, "accepted"


def _trace_lines(folder: Path) -> Section:
    from assay.formats.errors import FormatError
    from assay.traces import ImportOptions, import_traces

    section = Section("trace lines")
    line = json.dumps(export([otlp_span(1, 10, None, "rag", "CHAIN", T0, T0 + 1, input__value="q?")]))
    cases = {
        "repeated key": line.replace('"name": "rag"', '"name": "rag", "name": ""', 1).encode(),
        "NaN": line.replace('"kind": 1', '"kind": NaN', 1).encode(),
        "overflowing number": line.replace('"kind": 1', '"kind": 1e999', 1).encode(),
        "nesting past 100": line.replace('"kind": 1', '"kind": ' + "[" * 150 + "]" * 150, 1).encode(),
        "invalid UTF-8": line.replace("q?", "q\udcff?").encode("utf-8", "surrogateescape"),
        "huge integer": line.replace('"kind": 1', '"kind": 123456789012345678901234567890', 1).encode(),
    }
    for what, content in cases.items():
        for name in ("t.jsonl", "t.json"):
            path = folder / name
            path.write_bytes(content + b"\n")
            ok, detail = _refused(lambda path=path: import_traces([path], ImportOptions()), FormatError)
            section.check(f"{what} ({name})", ok and name in detail, detail)
    return section


def _bundle(folder: Path) -> tuple[Path, Any]:
    from assay.models.artifacts import Producer
    from assay.storage import ArtifactStore, LocalObjectStore, Signer
    from assay.storage.anchor import HeadAnchor
    from assay.storage.bundles import build_bundle
    from assay.storage.runs import RunStates

    signer = Signer(key_file=folder / "keys" / "k.key", anchor=HeadAnchor(folder / "keys" / "heads.json"))
    artifacts = ArtifactStore(LocalObjectStore(folder / "store"), signer=signer)
    RunStates(artifacts.store, signer).start("inputs", "run-1", workflow="mrm-workflow")
    artifacts.put_json("mrm/demo/report.json", {"v": 1}, producer=Producer(run_id="run-1"))
    data, _ = build_bundle(artifacts, "run-1")
    path = folder / "run.zip"
    path.write_bytes(data)
    return path, signer


def _bundles(folder: Path) -> Section:
    from assay.formats.errors import FormatError
    from assay.storage.bundles import verify_bundle

    section = Section("bundles")
    path, signer = _bundle(folder)
    genuine = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
        info = archive.getinfo("run.json")

    def problems(data: bytes) -> set[str]:
        path.write_bytes(data)
        return {issue.problem for issue in verify_bundle(path, signer).issues}

    duplicate = folder / "dup.zip"
    with zipfile.ZipFile(duplicate, "w") as archive, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Duplicate name")  # the point of this member
        archive.writestr("run.json", b'{"forged": true}')
        for name, data in members.items():
            archive.writestr(name, data)
    section.check("duplicate member", "duplicate_member" in problems(duplicate.read_bytes()))
    central = genuine.rindex(b"PK\x01\x02", 0, genuine.index(b"PK\x05\x06"))
    while int.from_bytes(genuine[central + 42 : central + 46], "little") != info.header_offset:
        central = genuine.rindex(b"PK\x01\x02", 0, central)
    for what, (local, in_central, value) in {
        "encrypted member": (6, 8, None),
        "unknown method": (8, 10, (99).to_bytes(2, "little")),
        "bomb member": (22, 24, (4 * 1024**3 - 1).to_bytes(4, "little")),
    }.items():
        data = bytearray(genuine)
        for at in (info.header_offset + local, central + in_central):
            if value is None:
                data[at] |= 0x01
            else:
                data[at : at + len(value)] = value
        section.check(what, "unreadable_member" in problems(bytes(data)))
    corrupt = bytearray(genuine)
    corrupt[info.header_offset + 30 + len(info.filename) + len(info.extra) + 2] ^= 0xFF
    section.check("corrupt member", "unreadable_member" in problems(bytes(corrupt)))
    fifo = folder / "fifo.zip"
    os.mkfifo(fifo)
    ok, detail = _refused(lambda: verify_bundle(fifo, signer), FormatError)
    section.check("FIFO as the bundle", ok, detail)
    return section


def _store(folder: Path) -> Section:
    from assay.storage import ArtifactIntegrityError, ArtifactStore, LocalObjectStore, Signer
    from assay.storage.anchor import HeadAnchor
    from assay.storage.runs import RunStates, pointer_key

    section = Section("store")
    signer = Signer(key_file=folder / "keys" / "k.key", anchor=HeadAnchor(folder / "keys" / "heads.json"))
    artifacts = ArtifactStore(LocalObjectStore(folder / "store"), signer=signer)
    for number in (1, 2, 3):
        artifacts.put("report", f"content {number}".encode(), filename="data.txt", content_type="text/plain")
    artifacts.put("other", b"other", filename="other.txt", content_type="text/plain")
    root = folder / "store" / "artifacts"

    def edited_manifest(version: int, **changes: Any) -> set[tuple[str, str]]:
        path = root / "report" / f"v{version:06d}" / "manifest.json"
        original = path.read_bytes()
        path.write_text(json.dumps(json.loads(original) | changes))
        found = {(issue.name, issue.problem) for issue in artifacts.verify().issues}
        path.write_bytes(original)
        return found

    section.check("giant declared size", ("report", "unreadable_manifest") in edited_manifest(2, size=10 * 1024**3))
    section.check("'..' file name", ("report", "unreadable_manifest") in edited_manifest(2, filename="../x.txt"))
    states = RunStates(artifacts.store, signer)
    states.start("inputs-a", workflow="evaluate")
    other = states.start("inputs-b", workflow="evaluate")
    pointer = root.parent / pointer_key("inputs-a")
    pointer.write_text(json.dumps(json.loads(pointer.read_text()) | {"run_id": other.run_id}))
    edited = any(issue.problem == "edited_run_state" for issue in artifacts.verify().issues)
    section.check("edited run pointer", edited)
    for name in ("data.txt", "manifest.json"):
        (root / "report" / "v000003" / name).unlink()
    (root / "report" / "v000003").rmdir()
    for hint in (root / "_journal" / "index" / "report").glob("v000003*"):
        hint.unlink()
    (root / "_journal" / "entries" / "000000000003.json").unlink()
    ok, detail = _refused(lambda: artifacts.get("report"), ArtifactIntegrityError)
    section.check("removed journal entry before the newest", ok, detail)
    return section


def _network() -> Section:
    from assay.calls.network import NetworkPolicy, url_refusal
    from assay.config import DEFAULT_BLOCKED_NETWORKS
    from assay.testing.network import METADATA_SPELLINGS

    section = Section("network policy")
    policy = NetworkPolicy.from_settings(DEFAULT_BLOCKED_NETWORKS, 8 * 1024 * 1024)
    for url in METADATA_SPELLINGS:
        section.check(url, url_refusal(url, policy) is not None)
    return section


def _names_and_inputs(folder: Path) -> Section:
    from pydantic import ValidationError

    from assay.formats import FormatError, import_file
    from assay.mrm.approvals import TopicDecision, load_approvals
    from assay.validity.labels import load_labelled_set

    section = Section("names and inputs")
    for name in ("\u200b", "\u2800", "\u3164", "\u115f\u1160", "\x00", "\u202e"):
        path = folder / "approvals.json"
        path.write_text(json.dumps({"reviewer": name}))
        ok, detail = _refused(lambda path=path: load_approvals(path), ValueError)
        section.check(f"invisible reviewer {name!r}", ok, detail)
    ok, detail = _refused(lambda: TopicDecision(excluded_topic_ids=[True]), ValidationError)
    section.check("[true] as a topic id", ok, detail)
    files = {
        "labels.json": json.dumps([{"question": "q", "context": "c", "answer": "a", "label": 1, "id": math.nan}]),
        "labels.csv": "question,context,answer,label,label\nq,c,a,1,0\n",
        "unknown.jsonl": '{"question": "q", "context": "c", "answer": "a", "label": 1, "x": NaN}\n',
    }
    for name, content in files.items():
        path = folder / name
        path.write_text(content)
        ok, detail = _refused(lambda path=path: load_labelled_set(path), FormatError)
        section.check(name, ok, detail)
    row = {"test_case": {"key": "k", "prompt": "q"}, "model_key": "m", "actual_duration": True}
    labs = {
        "duration true": {"name": "l", "models": [{"key": "m", "type": "t"}], "rows": [row]},
        "duplicate model key": {"name": "l", "models": [{"key": "m", "type": "t"}, {"key": "m", "type": "u"}]},
    }
    for what, lab in labs.items():
        path = folder / "lab.json"
        path.write_text(json.dumps({"schema_version": 1, **lab}))
        ok, detail = _refused(lambda path=path: import_file(path, "assay"), FormatError)
        section.check(what, ok, detail)
    return section


def _disguises() -> Section:
    from assay.apps.guardrail_service import InvalidRequest, parse_check_request
    from assay.redaction import redact, register_secret

    section = Section("secret disguises")
    secret = "sk-round3-bench-9Qw3Ez7Rt5Yu"
    register_secret(secret, "ROUND3_KEY")
    rot13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                          "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")  # fmt: skip
    disguises = {
        "reversed": secret[::-1], "dashed": "-".join(secret), "hex": secret.encode().hex(),
        "HEX": secret.encode().hex().upper(), "ROT13": secret.translate(rot13),
        "full-width": "".join(chr(ord(char) + 0xFEE0) for char in secret),
        "HTML decimal": "".join(f"&#{ord(char)};" for char in secret),
        "HTML hex": "".join(f"&#x{ord(char):x};" for char in secret),
    }  # fmt: skip
    for what, copy in disguises.items():
        section.check(what, "[REDACTED:ROUND3_KEY]" in redact(f"here: {copy}"))
    repeated = b'{"question": "q", "answer": "a", "answer": "b"}'
    ok, detail = _refused(lambda: parse_check_request(repeated), InvalidRequest)
    section.check("guardrail repeated key", ok, detail)
    return section


def _budgets(folder: Path) -> Section:
    import subprocess
    import time

    from assay.budget import TimeBudgetExceeded
    from assay.guardrail.checks import Guard
    from assay.traces import ImportOptions, import_traces
    from bench.guardrail import CONFIG, CONTEXT, large_answer
    from tests.test_atomic import KILL_DURING_THE_REPORT, one_request
    from tests.traces.test_trace_files import rag_trace
    from tests.traces.test_trace_import_memory import long_trace

    section = Section("budgets and bounds")
    guard = Guard.from_path(CONFIG)
    guard.warm_up()
    started = time.perf_counter()
    stopped, detail = _refused(lambda: guard.check("Rates?", large_answer(98, 7), CONTEXT, time_budget_s=2.0),
                               TimeBudgetExceeded)  # fmt: skip
    took = time.perf_counter() - started
    section.check("98 KB answer, 2 s budget: stopped within 3 s", stopped and took <= 3.0, f"{detail} in {took:.2f} s")

    source = write_jsonl(folder / "long.jsonl", [export(rag_trace(1, T0) + long_trace(2, 6) + rag_trace(3, T0 + 1))])
    lab, report = import_traces([source], ImportOptions(max_trace_spans=5))
    reasons = [left.reason for left in report.left_out]
    section.check("trace over --max-trace-spans left out", len(lab.rows) == 2 and any("5 spans" in r for r in reasons),
                  str(reasons))  # fmt: skip
    big = write_jsonl(folder / "big.jsonl", [export(rag_trace(4, T0, question="x" * 2**20) + rag_trace(5, T0 + 1))])
    lab, report = import_traces([big], ImportOptions(max_trace_bytes=2**20))
    reasons = [left.reason for left in report.left_out]
    section.check("trace over --max-trace-mb left out", len(lab.rows) == 1 and any("MiB" in r for r in reasons),
                  str(reasons))  # fmt: skip

    out = folder / "out" / "lab.json"
    first = one_request(folder / "a.jsonl", 1, "Fee?", "5 EUR.")
    subprocess.run([sys.executable, "-m", "assay.apps.cli.main", "traces", "import", str(first), "--out", str(out)],
                   capture_output=True, timeout=300, check=True)  # fmt: skip
    before = out.read_bytes(), out.with_name("lab.import.json").read_bytes()
    second = one_request(folder / "b.jsonl", 2, "Limit?", "500.")
    subprocess.run([sys.executable, "-c", KILL_DURING_THE_REPORT, "traces", "import", str(second), "--out", str(out)],
                   capture_output=True, timeout=300)  # fmt: skip
    after = out.read_bytes(), out.with_name("lab.import.json").read_bytes()
    section.check("import killed while writing keeps the previous lab and report", after == before)
    return section


def sections() -> Iterator[Section]:
    with tempfile.TemporaryDirectory(prefix="assay-round3-") as work:
        base = Path(work)
        for index, make in enumerate((_credentials, _personal_data, _trace_lines, _bundles, _store)):
            folder = base / str(index)
            folder.mkdir()
            yield make(folder)
        yield _network()
        names = base / "names"
        names.mkdir()
        yield _names_and_inputs(names)
        yield _disguises()
        budgets = base / "budgets"
        budgets.mkdir()
        yield _budgets(budgets)


if __name__ == "__main__":  # python bench/_hostile_round3.py: this round alone
    import _hostile

    failed = sum(len(section.failures) for section in _hostile.run(print, sections()))
    raise SystemExit(1 if failed else 0)
