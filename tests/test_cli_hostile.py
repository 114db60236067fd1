"""The command line facing bad and hostile input: every rejected input is one clean line naming the culprit
(exit 2) before any flow starts; unexpected errors are one line and a hint (exit 1) unless --debug; data
from files and models is printed literally, never as markup or terminal control sequences."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.apps.cli import evaluate as evaluate_cli
from assay.apps.cli import mrm as mrm_cli
from assay.apps.cli.main import app
from assay.models import TestSuite

runner = CliRunner()
DATA = Path(__file__).parent / "formats" / "data"
SUITE = TestSuite(name="s", tests=[{"key": "t", "test_cases": [{"key": "a", "prompt": "q?"}]}])


def _flow_must_not_start(**_: Any) -> dict[str, Any]:
    raise AssertionError("a flow started although an input is invalid")


@pytest.fixture(autouse=True)
def no_flows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluate_cli, "_run_flow", _flow_must_not_start)
    monkeypatch.setattr(mrm_cli, "run_workflow", _flow_must_not_start)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def good_suite(tmp_path: Path) -> Path:
    return write(tmp_path / "good.json", SUITE.model_dump_json())


# (name, files to create: name -> content (None: a folder), arguments; {tmp} is the test's folder, culprit)
REJECTED = [
    ("bad JSON", {"s.json": '{"name": "x", '}, ["evaluate", "--suite", "{tmp}/s.json"], "s.json"),
    (
        "missing field",
        {"s.json": json.dumps({"name": "x", "tests": [{"key": "t", "test_cases": [{"key": "a"}]}]})},
        ["evaluate", "--suite", "{tmp}/s.json"],
        "s.json",
    ),
    ("empty file", {"s.json": ""}, ["evaluate", "--suite", "{tmp}/s.json"], "s.json"),
    ("folder as file", {"s.json": None}, ["evaluate", "--suite", "{tmp}/s.json"], "s.json"),
    ("unknown format", {}, ["evaluate", "--suite", "{good}", "--suite-format", "xml"], "xml"),
    ("unknown evaluator", {}, ["evaluate", "--suite", "{good}", "--evaluators", "bogus"], "bogus"),
    ("unknown host type", {}, ["evaluate", "--suite", "{good}", "--host", "nosuch"], "nosuch"),
    ("bad host JSON", {"h.json": "{"}, ["evaluate", "--suite", "{good}", "--host", "{tmp}/h.json"], "h.json"),
    (
        "host JSON without key",
        {"h.json": json.dumps({"type": "sample-rag"})},
        ["evaluate", "--suite", "{good}", "--host", "{tmp}/h.json"],
        "h.json",
    ),
    (
        "host JSON of an unknown type",
        {"h.json": json.dumps({"key": "k", "type": "nosuch"})},
        ["evaluate", "--suite", "{good}", "--host", "{tmp}/h.json"],
        "h.json",
    ),
    (
        "two hosts with one key",
        {"h.json": json.dumps({"key": "sample-rag", "type": "sample-rag-keyword"})},
        ["evaluate", "--suite", "{good}", "--host", "sample-rag", "--host", "{tmp}/h.json"],
        "sample-rag",
    ),
    (
        "a lab as suite",
        {},
        ["evaluate", "--suite", str(DATA / "eval_studio_testlab.json"), "--suite-format", "eval-studio-testlab"],
        "eval_studio_testlab.json",
    ),
    ("out is a file", {"o": "x"}, ["evaluate", "--suite", "{good}", "--out", "{tmp}/o"], "o"),
    ("mrm: no corpus folder", {}, ["mrm", "run", "--non-interactive", "--corpus", "{tmp}/nope"], "nope"),
    ("mrm: empty corpus", {"c": None}, ["mrm", "run", "--non-interactive", "--corpus", "{tmp}/c"], "c"),
    (
        "mrm: bad approvals",
        {"a.json": "[1,"},
        ["mrm", "run", "--non-interactive", "--approvals", "{tmp}/a.json"],
        "a.json",
    ),
    ("mrm: bad host", {}, ["mrm", "run", "--non-interactive", "--host", "nosuch"], "nosuch"),
    ("perturb: bad suite", {"s.json": "{"}, ["perturb", "{tmp}/s.json", "-p", "comma", "-i", "low"], "s.json"),
    ("suite import: folder", {"d": None}, ["suite", "import", "{tmp}/d", "--format", "mlflow"], "d"),
]


@pytest.mark.parametrize(
    ("files", "arguments", "culprit"), [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED]
)
def test_rejected_inputs_are_one_clean_line(
    tmp_path: Path, files: dict[str, str | None], arguments: list[str], culprit: str
) -> None:
    for name, content in files.items():
        if content is None:
            (tmp_path / name).mkdir()
        else:
            write(tmp_path / name, content)
    good = good_suite(tmp_path)
    argv = [part.format(tmp=tmp_path, good=good) for part in arguments]
    if "--out" not in argv and argv[0] in ("evaluate", "mrm"):
        argv += ["--out", str(tmp_path / "out")]
    if argv[0] in ("perturb", "suite"):
        argv += ["--out", str(tmp_path / "perturbed.json")]

    result = runner.invoke(app, argv)

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) <= 3, result.stderr
    assert culprit in result.stderr
    assert result.stderr.startswith("error:")


def test_a_rejected_input_starts_neither_prefect_nor_a_flow(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.json", '{"name": ')
    code = (
        "import sys; from typer.testing import CliRunner; from assay.apps.cli.main import app; "
        f"r = CliRunner().invoke(app, ['evaluate', '--suite', {str(bad)!r}, '--out', {str(tmp_path / 'o')!r}]); "
        "print(r.exit_code, 'prefect' in sys.modules); print(r.stderr, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["2", "False"]
    assert "bad.json" in done.stderr and "Traceback" not in done.stderr


def test_an_unexpected_error_is_one_line_and_a_hint_unless_debug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**_: Any) -> dict[str, Any]:
        raise RuntimeError("disk [/] on fire")

    monkeypatch.setattr(evaluate_cli, "_run_flow", broken)
    argv = ["evaluate", "--suite", str(good_suite(tmp_path)), "--out", str(tmp_path / "out")]

    quiet = runner.invoke(app, argv)
    assert quiet.exit_code == 1
    assert quiet.stderr.strip().splitlines() == [
        "error: RuntimeError: disk [/] on fire (run with --debug for the traceback)"
    ]
    loud = runner.invoke(app, ["--debug", *argv])
    assert loud.exit_code == 1 and isinstance(loud.exception, RuntimeError)


def test_error_messages_print_file_names_literally(tmp_path: Path) -> None:
    hostile = write(tmp_path / "[bold red]x[/bold red]" / "[/]s.json", "{")
    result = runner.invoke(app, ["evaluate", "--suite", str(hostile), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "[bold red]x[/bold red]/[/]s.json" in result.stderr


HOSTILE_KEYS = ["[/]", "[bold red]PASS[/bold red]", "\x1b[31mred\x1b[0m"]


def summary_with(keys: list[str]) -> dict[str, Any]:
    aggregate = {
        "mean": 0.9,
        "scored": 1,
        "unscored": 0,
        "threshold": 0.5,
        "higher_is_better": True,
        "is_primary": True,
    }
    return {
        "test_lab": "lab \x1b]0;title\x07 [i]name[/i]",
        "test_cases": 1,
        "evaluators": ["text_matching"],
        "models": [{"key": key, "answered": 1, "host_failures": 0} for key in keys],
        "metrics": {key: {"text_matching": {"model_passes": aggregate}} for key in keys},
        "skipped_evaluators": {"[red]x[/red]": "needs \x1b[2J a judge [/]"},
        "problems": {},
        "insights": 0,
    }


def test_model_data_is_printed_literally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.apps.cli.common import console

    monkeypatch.setattr(console, "width", 300)
    monkeypatch.setattr(evaluate_cli, "_run_flow", lambda **_: summary_with(HOSTILE_KEYS))
    result = runner.invoke(app, ["evaluate", "--suite", str(good_suite(tmp_path)), "--out", str(tmp_path / "[out]")])
    assert result.exit_code == 0, result.output
    for literal in ("[/]", "[bold red]PASS[/bold red]", "[i]name[/i]", "[red]x[/red]", "[out]"):
        assert literal in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[31mred\\x1b[0m" in result.stdout


def test_prefect_console_logs_keep_their_line_but_lose_the_traceback() -> None:
    import io
    import logging

    from assay.flows.terminal import hide_tracebacks_on_terminal
    from prefect.logging.handlers import PrefectConsoleHandler

    terminal, server = io.StringIO(), io.StringIO()
    handlers = [PrefectConsoleHandler(stream=terminal), logging.StreamHandler(server)]
    root = logging.getLogger()
    for handler in handlers:
        root.addHandler(handler)
    try:
        hide_tracebacks_on_terminal()
        try:
            raise ValueError("bad row")
        except ValueError:
            logging.getLogger("assay.test").error("Encountered exception during execution", exc_info=True)
    finally:
        for handler in handlers:
            root.removeHandler(handler)
    assert "Encountered exception during execution" in terminal.getvalue()
    assert "Traceback" not in terminal.getvalue()
    assert "Traceback" in server.getvalue()  # other handlers (Prefect's API) still get the whole record


# Issue 25, items 3, 4 and 10: a repeated key, a lone surrogate or a CSV row cut short is refused in one line
# naming the file, the line and the key before any flow starts; so is an evaluation of nothing.

_CASE = {"key": "t", "test_cases": [{"key": "a", "prompt": "q?"}]}
_ROW = {"test_case": {"key": "a", "prompt": "q?"}, "model_key": "m", "actual_output": "yes"}
_LAB_HEAD = '{"schema_version": 1, "name": "l", "models": [{"key": "m", "type": "t"}],\n'
_GUARDRAIL = '{"calibrated_thresholds": {"groundedness": {"groundedness": 0.7}},\n'
ISSUE_25 = [
    (
        "suite: a repeated tests key",
        {"s.json": f'{{"schema_version": 1, "name": "s",\n "tests": [{json.dumps(_CASE)}],\n "tests": []}}'},
        ["evaluate", "--suite", "{tmp}/s.json"],
        "s.json: line 3 column 2: the key 'tests' is repeated (first on line 2)",
    ),
    (
        "lab: a repeated rows key",
        {"l.json": _LAB_HEAD + f' "rows": [{json.dumps(_ROW)}],\n "rows": []}}'},
        ["evaluate", "--lab", "{tmp}/l.json"],
        "l.json: line 3 column 2: the key 'rows' is repeated (first on line 2)",
    ),
    (
        "answers JSONL: a repeated key in one line",
        {"a.jsonl": '{"request": "q1", "response": "a1"}\n{"request": "q2", "response": "a2", "response": null}\n'},
        ["evaluate", "--lab", "{tmp}/a.jsonl"],
        "a.jsonl: line 2 column 37: the key 'response' is repeated (first on line 2)",
    ),
    (
        "host file: a repeated key",
        {"h.json": '{"key": "k",\n "type": "nosuch",\n "type": "sample-rag"}'},
        ["evaluate", "--suite", "{good}", "--host", "{tmp}/h.json"],
        "h.json: line 3 column 2: the key 'type' is repeated (first on line 2)",
    ),
    (
        "host TOML: a repeated key (tomllib refuses it)",
        {"h.toml": 'key = "k"\ntype = "sample-rag"\ntype = "sample-rag-keyword"\nurl = "x"\n'},
        ["evaluate", "--suite", "{good}", "--host", "{tmp}/h.toml"],
        "h.toml: not valid TOML: Cannot overwrite a value (at line 3",
    ),
    (
        "evaluators config: a repeated key",
        {"e.json": '{"rouge": {"use_stemmer": true,\n "use_stemmer": false}}'},
        ["evaluate", "--suite", "{good}", "--evaluators", "rouge", "--evaluators-config", "{tmp}/e.json"],
        "e.json: line 2 column 2: rouge: the key 'use_stemmer' is repeated",
    ),
    (
        "approvals: a repeated key",
        {"a.json": '{"reviewer": "ana", "reviewer": "bob"}'},
        ["mrm", "run", "--non-interactive", "--approvals", "{tmp}/a.json"],
        "a.json: line 1 column 21: the key 'reviewer' is repeated",
    ),
    (
        "guardrail config: a repeated key",
        {"g.json": _GUARDRAIL + ' "evaluator_ids": ["groundedness"],\n "evaluator_ids": []}'},
        ["guardrail", "check", "--config", "{tmp}/g.json", "--question", "q", "--answer", "a"],
        "g.json: line 3 column 2: the key 'evaluator_ids' is repeated (first on line 2)",
    ),
    (
        "suite import: a repeated key",
        {"m.json": '[{"request": "q", "expected_response": "a", "expected_response": ""}]'},
        ["suite", "import", "{tmp}/m.json", "--format", "mlflow"],
        "m.json: line 1 column 45: [0]: the key 'expected_response' is repeated",
    ),
    (
        "suite: a lone surrogate",
        {"s.json": '{"name": "s", "tests": [{"key": "t", "test_cases": [{"key": "a",\n "prompt": "q \\ud800"}]}]}'},
        ["evaluate", "--suite", "{tmp}/s.json"],
        "s.json: line 2 column 15: tests[0].test_cases[0].prompt: a string holds a lone surrogate (\\ud800)",
    ),
    (
        "--param: a lone surrogate",
        {},
        [
            "evaluate",
            "--suite",
            "{good}",
            "--evaluators",
            "guideline_adherence",
            "--param",
            'guideline_adherence.global_guidelines=["be brief \\ud800"]',
        ],
        "guideline_adherence.global_guidelines: a string holds a lone surrogate (\\ud800)",
    ),
    (
        "answers JSONL: a lone surrogate",
        {"a.jsonl": '{"user_input": "q1", "response": "a1"}\n{"user_input": "q2", "response": "\\udfff"}\n'},
        ["evaluate", "--lab", "{tmp}/a.jsonl"],
        "a.jsonl: line 2 column 35: response: a string holds a lone surrogate (\\udfff)",
    ),
    (
        "lab CSV: a row cut short",
        {"l.csv": "user_input,response,reference\nq1,a1,r1\nq2,a2 cut sh"},
        ["evaluate", "--lab", "{tmp}/l.csv"],
        "l.csv: line 3: 2 cell(s) but the header has 3 columns",
    ),
    (
        "lab CSV: a row too long",
        {"l.csv": "user_input,response\nq1,a1, and more\n"},
        ["evaluate", "--lab", "{tmp}/l.csv"],
        "l.csv: line 2: 3 cells but the header has 2 columns",
    ),
    (
        "suite: no test cases",
        {"s.json": '{"schema_version": 1, "name": "s", "tests": [{"key": "t", "test_cases": []}]}'},
        ["evaluate", "--suite", "{tmp}/s.json"],
        "s.json: no test cases in the file",
    ),
    (
        "lab: no rows",
        {"l.json": _LAB_HEAD + ' "rows": []}'},
        ["evaluate", "--lab", "{tmp}/l.json"],
        "l.json: no test cases in the file",
    ),
    (
        "lab CSV: a header and no rows",
        {"l.csv": "user_input,response\n"},
        ["evaluate", "--lab", "{tmp}/l.csv"],
        "l.csv: no test cases in the file",
    ),
]


@pytest.mark.parametrize(
    ("files", "arguments", "message"), [case[1:] for case in ISSUE_25], ids=[case[0] for case in ISSUE_25]
)
def test_repeated_keys_surrogates_short_rows_and_empty_inputs_are_refused(
    tmp_path: Path, files: dict[str, str], arguments: list[str], message: str
) -> None:
    for name, content in files.items():
        write(tmp_path / name, content)
    argv = [part.format(tmp=tmp_path, good=good_suite(tmp_path)) for part in arguments]
    argv += ["--out", str(tmp_path / ("out.json" if argv[0] == "suite" else "out"))] if argv[0] != "guardrail" else []

    result = runner.invoke(app, argv, terminal_width=400)

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error:") and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert message in result.stderr


def test_the_installed_command_refuses_a_repeated_key_in_answers(tmp_path: Path) -> None:
    answers = write(tmp_path / "answers.jsonl", '{"request": "q", "response": "a", "response": null}\n')
    command = [str(Path(sys.executable).with_name("assay")), "suite", "import", str(answers)]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "o.json")],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "answers.jsonl: line 1 column 35: the key 'response' is repeated" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o.json").exists()


def test_a_repeated_key_in_assay_toml_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tomllib refuses a repeated key itself; the error must still say which file it is about."""
    from assay.config import load_settings

    config = write(tmp_path / "assay.toml", 'home = "a"\nhome = "b"\n')
    monkeypatch.setenv("ASSAY_CONFIG", str(config))
    with pytest.raises(ValueError, match=r"assay\.toml: not valid TOML: Cannot overwrite a value \(at line 2"):
        load_settings()
