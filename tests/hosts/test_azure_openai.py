"""azure-openai through the real ``openai.AsyncAzureOpenAI`` client against the local server's Azure route."""

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.hosts import CallPolicy, create_host, host_types, register_host, resolve
from assay.hosts.azure_openai import AzureOpenAI
from assay.models import ModelHost, TestCase
from assay.models.suite import ConversationTurn
from assay.testing.openai_server import OpenAIServer, serve_openai

if "azure-openai" not in host_types():
    register_host(AzureOpenAI)

FAST = CallPolicy(concurrency=4, timeout_s=2.0, retries=0, backoff_s=0.01)
SECRET = "azure-5ecret-key-0123456789abcdef"
ENV = "ASSAY_TEST_AZURE_KEY"
API_VERSION = "2024-10-21"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with serve_openai(OpenAIServer(slow_s=5.0, azure_api_key=SECRET)) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.requests.clear()
    server.plan.clear()
    monkeypatch.setenv(ENV, SECRET)


def _host(server: OpenAIServer, **fields: object) -> ModelHost:
    settings = {"api_version": API_VERSION, **fields.pop("settings", {})}  # type: ignore[dict-item]
    return ModelHost(**{"key": "azure", "type": "azure-openai", "url": server.azure_url, "secret_ref": ENV,
                        "llm_model_name": "gpt-4o-prod", "settings": settings, **fields})  # fmt: skip


def _run(config: ModelHost, *cases: TestCase, policy: CallPolicy = FAST):
    return asyncio.run(resolve(create_host(config), [(case.key, case) for case in cases], policy))


def test_answer_through_the_deployment_route_with_api_version_and_api_key(server: OpenAIServer) -> None:
    settings = {"temperature": 0.1}
    prices = {"gpt-4o-prod": {"input_per_1k": 1.0, "output_per_1k": 2.0}}  # priced by the configured deployment
    case = TestCase(key="c1", prompt="what is the capital ratio")
    [row] = _run(_host(server, settings=settings, prices=prices), case)
    assert row.error is None, row.error
    assert row.actual_output == "echo: what is the capital ratio"
    assert (row.input_tokens, row.output_tokens) == (5, 6)
    assert row.cost == pytest.approx(5 / 1000 * 1.0 + 6 / 1000 * 2.0)
    assert row.model_name == "gpt-4o-2024-08-06"
    assert json.loads(row.raw_response)["object"] == "chat.completion"
    [request] = server.requests
    assert request.path == "/openai/deployments/gpt-4o-prod/chat/completions"
    assert request.query == {"api-version": API_VERSION}
    assert request.headers["api-key"] == SECRET
    assert "authorization" not in request.headers
    assert request.body["temperature"] == 0.1
    assert "api_version" not in request.body


def test_extra_settings_pass_as_is(server: OpenAIServer) -> None:
    settings = {"top_p": 0.5, "extra_body": {"data_sources": [{"type": "azure_search"}]}, "user": "assay"}
    [row] = _run(_host(server, settings=settings), TestCase(key="c", prompt="hi"))
    assert row.error is None, row.error
    body = server.requests[0].body
    assert body["top_p"] == 0.5 and body["user"] == "assay"
    assert body["data_sources"] == [{"type": "azure_search"}]


def test_multi_turn_is_sent_as_history(server: OpenAIServer) -> None:
    turns = [ConversationTurn(role="user", content="tier 1?"), ConversationTurn(role="assistant", content="4.5%")]
    case = TestCase(key="c", prompt="and tier 2?", turns=turns)
    [row] = _run(_host(server), case)
    assert row.error is None, row.error
    assert [m["content"] for m in server.requests[0].body["messages"]] == ["tier 1?", "4.5%", "and tier 2?"]


def test_the_key_never_reaches_a_row_and_a_wrong_key_is_auth(server: OpenAIServer, monkeypatch) -> None:
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error is None and SECRET not in row.model_dump_json()
    monkeypatch.setenv(ENV, "wrong-key")
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "auth" and "401" in row.error
    assert "wrong-key" not in row.model_dump_json() and SECRET not in row.model_dump_json()


def test_unknown_deployment_is_not_found(server: OpenAIServer) -> None:
    [row] = _run(_host(server, llm_model_name="no-such-deployment"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "not_found" and "deployment" in row.error.lower()
    assert server.requests[0].path == "/openai/deployments/no-such-deployment/chat/completions"


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"url": ""}, "'url'"),
        ({"llm_model_name": ""}, "'llm_model_name'"),
        ({"secret_ref": None}, "'secret_ref'"),
        ({"settings": {"api_version": ""}}, "'api_version'"),
        ({"secret_ref": "ASSAY_TEST_AZURE_UNSET"}, "ASSAY_TEST_AZURE_UNSET"),
    ],
)
def test_missing_configuration_names_the_field(server: OpenAIServer, fields: dict, named: str, monkeypatch) -> None:
    monkeypatch.delenv("ASSAY_TEST_AZURE_UNSET", raising=False)
    [row] = _run(_host(server, **fields), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and named in row.error
    assert server.requests == []


@pytest.mark.parametrize(
    ("fault", "kind", "reason"),
    [
        ("429", "rate_limited", "429"),
        ("500", "server_error", "500"),
        ("503", "server_error", "503"),
        ("slow", "timeout", "no answer within"),
        ("drop", "connection", "connection"),
        ("garbage", "malformed_response", "not JSON"),
        ("empty", "empty_answer", "'choices' is empty"),
        ("empty_content", "empty_answer", "answer is empty"),
    ],
)
def test_each_fault_maps_to_its_kind(server: OpenAIServer, fault: str, kind: str, reason: str) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=1.0, retries=0, backoff_s=0.0)
    [row] = _run(_host(server), TestCase(key="c", prompt=f"hi [fault:{fault}]"), policy=policy)
    assert row.error_kind == kind, row.error
    assert reason in row.error and row.actual_output is None


def test_retry_after_is_read_and_retried(server: OpenAIServer) -> None:
    server.retry_after_s = 0.05
    try:
        server.plan.extend(["429", "503"])
        policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
        [row] = _run(_host(server), TestCase(key="c", prompt="hi"), policy=policy)
    finally:
        server.retry_after_s = 0.0
    assert row.error is None and row.attempts == 3 and len(server.requests) == 3


def test_thirty_cases_with_mixed_faults_lose_nothing(server: OpenAIServer) -> None:
    server.slow_s = 3.0
    faults = ["429", "500", "503", "slow", "drop", "garbage", "empty", None, None, None]
    server.plan.extend(faults * 4)
    cases = [TestCase(key=f"c{index}", prompt=f"question {index}") for index in range(30)]
    policy = CallPolicy(concurrency=4, timeout_s=1.0, retries=2, backoff_s=0.01, breaker_failures=0)
    try:
        rows = _run(_host(server), *cases, policy=policy)
    finally:
        server.slow_s = 5.0
    assert [row.test_case.key for row in rows] == [case.key for case in cases]
    for row in rows:
        assert (row.error is None) != (row.actual_output is None)
        if row.error is not None:
            assert row.error_kind not in (None, "other"), row.error
    assert sum(row.error is None for row in rows) >= 15  # garbage and empty: retried, then recorded
    assert all(SECRET not in row.model_dump_json() for row in rows)


def test_example_host_file_answers_from_the_local_azure_route(server: OpenAIServer, monkeypatch) -> None:
    config = ModelHost.model_validate(json.loads(Path("examples/hosts/azure-openai.json").read_text()))
    assert config.type == "azure-openai" and config.secret_ref and config.settings["api_version"]
    monkeypatch.setenv(config.secret_ref, SECRET)
    [row] = _run(config.model_copy(update={"url": server.azure_url}), TestCase(key="c", prompt="hi"))
    assert row.error is None and row.actual_output == "echo: hi", row.error
