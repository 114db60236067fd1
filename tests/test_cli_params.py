"""``assay evaluate --param`` and ``--evaluators-config``: bad input exits 2 with one line before any flow.

Every test here replaces the flow runner with one that fails the test if called, so an error that slipped
past validation shows up as a failure, not as a Prefect server start-up. The happy path through the real
flow lives in tests/flows/test_evaluate_params_cli.py (it needs the session's Prefect server).
"""

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.apps.cli import evaluate as evaluate_command
from assay.apps.cli.evaluator_params import coerce, from_assignments, looks_like_secret, merged
from assay.apps.cli.main import app
from assay.models import ModelHost, TestCase, TestLab, TestLabRow

runner = CliRunner()


@pytest.fixture(scope="module")
def lab_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    row = TestLabRow(test_case=TestCase(key="a", prompt="q", expected_output="pays"), model_key="m", actual_output="x")
    path = tmp_path_factory.mktemp("lab") / "lab.json"
    path.write_text(TestLab(name="l", models=[ModelHost(key="m", type="imported")], rows=[row]).model_dump_json())
    return path


@pytest.fixture
def flow_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The parameters each (fake) flow run got; the fake returns nothing, so the command stops right after."""
    calls: list[dict[str, Any]] = []

    def fake_run_flow(**parameters: Any) -> dict[str, Any]:
        calls.append(parameters)
        raise SystemExit(0)

    monkeypatch.setattr(evaluate_command, "_run_flow", fake_run_flow)
    return calls


def _evaluate(lab: Path, out: Path, *extra: str) -> Any:
    return runner.invoke(app, ["evaluate", "--lab", str(lab), "--out", str(out), *extra])


def _error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return " ".join(lines[0].split())


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--param", "rouge.use_stemmer"], "--param 'rouge.use_stemmer': expected EVALUATOR.PARAMETER=VALUE"),
        (["--param", "nosuch.x=1"], "--param nosuch.x: unknown evaluator 'nosuch'; known evaluators: "),
        (
            ["--param", "bleu.lowercase=true"],
            "--param bleu.lowercase: evaluator 'bleu' is not selected in --evaluators (rouge)",
        ),
        (
            ["--param", "rouge.stemmer=true"],
            "--param rouge.stemmer: evaluator 'rouge' has no parameter 'stemmer'; it takes ['metric_threshold', "
            "'thresholds', 'use_stemmer']",
        ),
        (["--param", "rouge.use_stemmer=maybe"], "--param rouge.use_stemmer: 'maybe' is not a valid bool"),
        (["--param", "rouge.metric_threshold=high"], "--param rouge.metric_threshold: 'high' is not a valid float"),
        (
            ["--param", "rouge.api_key=sk-123"],
            "--param rouge.api_key: 'api_key' looks like a secret; never pass secrets as evaluator parameters, "
            "set an environment variable and give its name instead",
        ),
    ],
)
def test_bad_params_exit_2_with_one_line_before_any_flow(
    lab_path: Path, tmp_path: Path, flow_calls: list, arguments: list[str], message: str
) -> None:
    result = _evaluate(lab_path, tmp_path / "out", "--evaluators", "rouge", *arguments)
    assert result.exit_code == 2, result.output
    assert _error_line(result.output).startswith(f"error: {message}")
    assert "sk-123" not in result.output
    assert flow_calls == []


@pytest.mark.parametrize(
    ("suffix", "text", "message"),
    [
        (".json", '{"rouge": {"use_stemmer": "perhaps"}}', ":rouge.use_stemmer: 'perhaps' is not a valid bool"),
        (".toml", "[rouge]\nbatch = 3\n", ":rouge.batch: evaluator 'rouge' has no parameter 'batch'"),
        (".toml", "[bleu]\nlowercase = true\n", ":bleu: evaluator 'bleu' is not selected in --evaluators"),
        (".json", '["rouge"]', ": expected an object with evaluator ids as keys"),
        (".json", '{"rouge": true}', ":rouge: expected an object of parameter names and values"),
        (".json", '{"rouge": {"password": "hunter2"}}', ":rouge.password: 'password' looks like a secret"),
        (".toml", "[rouge\n", ": not valid TOML"),
    ],
)
def test_a_bad_config_file_names_the_file_and_field(
    lab_path: Path, tmp_path: Path, flow_calls: list, suffix: str, text: str, message: str
) -> None:
    config = tmp_path / f"evaluators{suffix}"
    config.write_text(text)
    result = _evaluate(lab_path, tmp_path / "out", "--evaluators", "rouge", "--evaluators-config", str(config))
    assert result.exit_code == 2, result.output
    assert _error_line(result.output).startswith(f"error: {config}{message}")
    assert "hunter2" not in result.output
    assert flow_calls == []


def test_a_missing_config_file_is_named(lab_path: Path, tmp_path: Path, flow_calls: list) -> None:
    result = _evaluate(lab_path, tmp_path / "out", "--evaluators-config", str(tmp_path / "none.toml"))
    assert result.exit_code == 2
    assert _error_line(result.output) == f"error: --evaluators-config {tmp_path / 'none.toml'}: no such file"


def test_the_flow_gets_typed_values_and_param_overrides_the_file(
    lab_path: Path, tmp_path: Path, flow_calls: list
) -> None:
    config = tmp_path / "evaluators.toml"
    config.write_text("[rouge]\nuse_stemmer = false\nmetric_threshold = 0.5\n\n[bleu]\nlowercase = true\n")
    result = _evaluate(
        lab_path,
        tmp_path / "out",
        *("--evaluators", "rouge,bleu", "--evaluators-config", str(config)),
        *("--param", "rouge.use_stemmer=true", "--param", "bleu.smooth_method=floor"),
    )
    assert result.exit_code == 0, result.output
    assert flow_calls[0]["evaluator_parameters"] == {
        "rouge": {"use_stemmer": True, "metric_threshold": 0.5},
        "bleu": {"lowercase": True, "smooth_method": "floor"},
    }


def test_under_all_any_evaluator_may_get_parameters(lab_path: Path, tmp_path: Path, flow_calls: list) -> None:
    result = _evaluate(
        lab_path, tmp_path / "out", "--evaluators", "all", "--param", "step_alignment.metric_threshold=2"
    )
    assert result.exit_code == 0, result.output
    assert flow_calls[0]["evaluator_parameters"] == {"step_alignment": {"metric_threshold": 2.0}}


def test_checks_of_the_evaluator_itself_run_before_the_flow(lab_path: Path, tmp_path: Path, flow_calls: list) -> None:
    result = _evaluate(
        lab_path, tmp_path / "out", "--evaluators", "fact_check", "--param", "fact_check.passages_per_claim=0"
    )
    assert result.exit_code == 2
    assert "passages_per_claim must be at least 1" in _error_line(result.output)
    assert flow_calls == []


def test_values_are_read_as_the_declared_type() -> None:
    assert coerce("rouge", "use_stemmer", "false", "w", from_text=True) is False
    assert coerce("bertscore", "num_layers", "4", "w", from_text=True) == 4
    assert coerce("rouge", "metric_threshold", "null", "w", from_text=True) is None
    assert coerce("bleu", "tokenize", "13a", "w", from_text=True) == "13a"  # text stays text, not JSON
    assert coerce("json_schema", "json_schema", '{"type": "object"}', "w", from_text=True) == '{"type": "object"}'
    texts = '["Be polite", "Answer in English"]'
    assert coerce("guideline_adherence", "global_guidelines", texts, "w", from_text=True) == [
        "Be polite",
        "Answer in English",
    ]
    with pytest.raises(ValueError, match="is not a valid int"):
        coerce("bertscore", "num_layers", "4.5", "w", from_text=True)


def test_the_last_assignment_wins_and_values_may_hold_equals_signs() -> None:
    parsed = from_assignments(["rouge.use_stemmer=true", "rouge.use_stemmer=false", "bleu.tokenize=a=b"], ["all"])
    assert parsed == {"rouge": {"use_stemmer": False}, "bleu": {"tokenize": "a=b"}}
    assert merged({"rouge": {"use_stemmer": True, "metric_threshold": 0.5}}, parsed)["rouge"] == {
        "use_stemmer": False,
        "metric_threshold": 0.5,
    }


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("token", True),
        ("password", True),
        ("client_secret", True),
        ("max_tokens", False),
        ("api_key_env", False),
        ("use_stemmer", False),
    ],
)
def test_secret_like_names(name: str, secret: bool) -> None:
    assert looks_like_secret(name) is secret


def test_a_threshold_for_any_metric_reaches_the_flow_and_an_unknown_metric_is_named(
    lab_path: Path, tmp_path: Path, flow_calls: list
) -> None:
    """The run's overrides map ({evaluator: {metric: value}}) set from the command line, checked before any flow."""
    setting = 'rouge.thresholds={"rouge_1": 0.3}'
    good = _evaluate(lab_path, tmp_path / "out", "--evaluators", "rouge", "--param", setting)
    assert good.exit_code == 0, good.output
    assert flow_calls[0]["evaluator_parameters"] == {"rouge": {"thresholds": {"rouge_1": 0.3}}}

    bad = _evaluate(lab_path, tmp_path / "out2", "--evaluators", "rouge", "--param", 'rouge.thresholds={"rouge_9": 1}')
    assert bad.exit_code == 2, bad.output
    assert "'thresholds' names no metric(s) ['rouge_9']; its metrics are ['rouge_1', 'rouge_2', 'rouge_l']" in (
        _error_line(bad.output)
    )
    assert len(flow_calls) == 1
