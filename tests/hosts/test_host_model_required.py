"""Issue 25 item 12: a host file without its model is refused when it is loaded, not after a whole run.

A host type whose spec requires the model (``llm_model_name``) refuses a file without one (exit 2, naming the
file and the field) before anything is asked or any flow starts. The OpenAI spelling ``settings.model`` is
accepted where the type declares it as a synonym and moved into ``llm_model_name`` at load (one source of
truth: the flow and the lab see only that field); a type that does not read it refuses it, naming the field.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.apps.cli import evaluate as evaluate_cli
from assay.apps.cli.main import app
from assay.models import TestSuite
from assay.testing.openai_server import OpenAIServer, serve_openai

runner = CliRunner()
SUITE = TestSuite(name="s", tests=[{"key": "t", "test_cases": [{"key": "a", "prompt": "q?"}]}])


class _FlowStarted(Exception):
    pass


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with serve_openai(OpenAIServer(models=("local-model",))) as running:
        yield running


@pytest.fixture
def flows(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The parameters of every flow the CLI starts (none is run)."""
    started: list[dict[str, Any]] = []

    def run_flow(**parameters: Any) -> dict[str, Any]:
        started.append(parameters)
        raise _FlowStarted

    monkeypatch.setattr(evaluate_cli, "_run_flow", run_flow)
    return started


def _host_file(tmp_path: Path, **fields: Any) -> Path:
    path = tmp_path / "host.json"
    path.write_text(json.dumps({"key": "sut", **fields}))
    return path


def _evaluate(tmp_path: Path, *hosts: str) -> Any:
    suite = tmp_path / "suite.json"
    suite.write_text(SUITE.model_dump_json())
    arguments = ["evaluate", "--suite", str(suite), "--out", str(tmp_path / "out")]
    for host in hosts:
        arguments += ["--host", host]
    return runner.invoke(app, arguments)


def test_hosts_check_refuses_a_file_without_the_model(server: OpenAIServer, tmp_path: Path) -> None:
    server.requests.clear()
    file = _host_file(tmp_path, type="openai-compatible", url=server.url)
    result = runner.invoke(app, ["hosts", "check", str(file)])
    assert result.exit_code == 2, result.output
    assert str(file) in result.stderr and "'llm_model_name'" in result.stderr and "required" in result.stderr
    assert "Traceback" not in result.output
    assert server.requests == []  # refused when loaded: nothing was asked


def test_evaluate_refuses_it_before_any_flow_starts(
    server: OpenAIServer, tmp_path: Path, flows: list[dict[str, Any]]
) -> None:
    file = _host_file(tmp_path, type="ollama", url=server.url)
    result = _evaluate(tmp_path, str(file))
    assert result.exit_code == 2, result.output
    assert str(file) in result.stderr and "'llm_model_name'" in result.stderr
    assert flows == []


def test_a_host_type_needing_a_model_is_refused_without_a_file(tmp_path: Path, flows: list[dict[str, Any]]) -> None:
    result = _evaluate(tmp_path, "openai-compatible")
    assert result.exit_code == 2, result.output
    assert "--host openai-compatible" in result.stderr and "'llm_model_name'" in result.stderr
    assert "host file" in result.stderr and flows == []


def test_settings_model_is_moved_into_llm_model_name_at_load(
    server: OpenAIServer, tmp_path: Path, flows: list[dict[str, Any]]
) -> None:
    server.requests.clear()
    file = _host_file(tmp_path, type="openai-compatible", url=server.url, settings={"model": "local-model"})
    checked = runner.invoke(app, ["hosts", "check", str(file)])
    assert checked.exit_code == 0, checked.output
    assert server.requests[-1].body["model"] == "local-model"
    _evaluate(tmp_path, str(file))
    [started] = flows
    [host] = started["hosts"]
    assert host["llm_model_name"] == "local-model" and "model" not in host["settings"]


def test_the_same_model_twice_is_one_field(tmp_path: Path, flows: list[dict[str, Any]]) -> None:
    file = _host_file(tmp_path, type="openai-chat", llm_model_name="gpt-4o-mini", settings={"model": "gpt-4o-mini"})
    _evaluate(tmp_path, str(file))
    [host] = flows[0]["hosts"]
    assert host["llm_model_name"] == "gpt-4o-mini" and host["settings"] == {}


@pytest.mark.parametrize(
    ("fields", "culprit"),
    [
        ({"type": "openai-compatible", "llm_model_name": "a", "settings": {"model": "b"}}, "name different models"),
        ({"type": "openai-compatible", "settings": {"model": ""}}, "'settings.model'"),
        (
            {
                "type": "azure-openai",
                "url": "https://r.openai.azure.com",
                "secret_ref": "K",
                "settings": {"api_version": "2024-10-21", "model": "gpt-4o-prod"},
            },
            "'settings.model' is not read by host type 'azure-openai'",
        ),
        (
            {"type": "bedrock-kb", "settings": {"region": "eu-west-1", "knowledge_base_id": "KB1", "model": "x"}},
            "'settings.model' is not read by host type 'bedrock-kb'",
        ),
    ],
)
def test_a_model_that_cannot_be_one_field_is_refused_naming_it(
    tmp_path: Path, flows: list[dict[str, Any]], fields: dict[str, Any], culprit: str
) -> None:
    file = _host_file(tmp_path, **fields)
    result = _evaluate(tmp_path, str(file))
    assert result.exit_code == 2, result.output
    assert str(file) in result.stderr and culprit in result.stderr
    assert "'llm_model_name'" in result.stderr and flows == []


def test_a_host_type_without_a_required_model_keeps_settings_model(tmp_path: Path) -> None:
    """openai-assistants passes ``model`` to runs.create (a per-run model override): not the host's model."""
    file = _host_file(tmp_path, type="openai-assistants", settings={"assistant_id": "asst_1", "model": "gpt-4o"})
    from assay.apps.cli.inputs import host_file

    assert host_file(file, "--host").settings["model"] == "gpt-4o"
