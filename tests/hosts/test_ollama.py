"""ollama through the real ``ollama`` client against a protocol-faithful local Ollama server."""

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assay.hosts import CallPolicy, create_host, host_types, register_host, resolve
from assay.hosts.ollama import Ollama
from assay.models import ModelHost, TestCase
from assay.models.suite import ConversationTurn
from assay.testing.ollama_server import OllamaServer, serve_ollama

if "ollama" not in host_types():
    register_host(Ollama)

FAST = CallPolicy(concurrency=4, timeout_s=2.0, retries=0, backoff_s=0.01)
SECRET = "olm-test-5ecret-value-0123456789"
EXAMPLE = Path(__file__).parents[2] / "examples" / "hosts" / "ollama.json"


@pytest.fixture(scope="module")
def server() -> Iterator[OllamaServer]:
    with serve_ollama(OllamaServer(slow_s=5.0)) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server: OllamaServer, monkeypatch) -> None:
    server.requests.clear()
    server.plan.clear()
    server.api_key = None
    server.retry_after_s = 0.0
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)  # the client would send it on its own


def _host(server: OllamaServer, **fields: object) -> ModelHost:
    return ModelHost(**{"key": "local", "type": "ollama", "url": server.url, "llm_model_name": "llama3.2", **fields})


def _run(config: ModelHost, *cases: TestCase, policy: CallPolicy = FAST):
    return asyncio.run(resolve(create_host(config), [(case.key, case) for case in cases], policy))


def test_the_spec_declares_what_the_host_reads() -> None:
    spec = Ollama.spec
    assert (spec.id, spec.model_type, spec.multi_turn, spec.returns_tokens, spec.returns_cost) == (
        "ollama", "llm", True, True, False
    )  # fmt: skip
    assert not spec.returns_context
    names = {setting.name for setting in spec.settings}
    assert {"url", "llm_model_name", "secret_ref", "system_prompt", "headers", "timeout_s"} <= names
    assert [s.name for s in spec.settings if s.secret_reference] == ["secret_ref"]


def test_answer_tokens_cost_model_and_raw_response(server: OllamaServer) -> None:
    settings = {"options": {"temperature": 0.2, "num_ctx": 4096, "seed": 7}}
    prices = {"*": {"input_per_1k": 1.0, "output_per_1k": 2.0}}
    case = TestCase(key="c1", prompt="what is the capital ratio")
    [row] = _run(_host(server, settings=settings, prices=prices), case)
    assert row.error is None, row.error
    assert row.actual_output == "echo: what is the capital ratio"
    assert (row.input_tokens, row.output_tokens) == (5, 6)
    assert row.cost == pytest.approx(5 / 1000 * 1.0 + 6 / 1000 * 2.0)
    assert row.model_name == "llama3.2"
    raw = json.loads(row.raw_response)
    assert raw["done"] is True and raw["eval_duration"] == 1_000_000 and raw["total_duration"] == 1_500_000
    body = server.requests[0].body
    assert body["model"] == "llama3.2" and body["stream"] is False
    assert body["options"] == {"temperature": 0.2, "num_ctx": 4096, "seed": 7}
    assert not any(key.startswith("price_per") for key in body)
    assert server.requests[0].headers["content-type"] == "application/json"
    assert "authorization" not in server.requests[0].headers


def test_extra_settings_pass_as_is(server: OllamaServer) -> None:
    settings = {"options": {"num_predict": 64, "some_future_knob": 1.5}, "keep_alive": "5m", "think": False,
                "format": "json"}  # fmt: skip
    [row] = _run(_host(server, settings=settings), TestCase(key="c", prompt="hi"))
    assert row.error is None, row.error
    body = server.requests[0].body
    assert body["options"] == {"num_predict": 64, "some_future_knob": 1.5}
    assert (body["keep_alive"], body["think"], body["format"]) == ("5m", False, "json")


def test_a_setting_chat_does_not_take_is_a_configuration_error_naming_it(server: OllamaServer) -> None:
    [row] = _run(_host(server, settings={"temprature": 0.1}), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "'temprature'" in row.error and "options" in row.error
    [row] = _run(_host(server, settings={"stream": True}), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "'stream'" in row.error
    assert server.requests == []


def test_missing_model_is_a_configuration_error_naming_the_field(server: OllamaServer) -> None:
    [row] = _run(_host(server, llm_model_name=""), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "llm_model_name" in row.error
    assert server.requests == []


def test_multi_turn_sends_system_turns_then_prompt_in_one_call(server: OllamaServer) -> None:
    case = TestCase(
        key="c",
        prompt="and for tier 2?",
        turns=[ConversationTurn(role="user", content="tier 1 ratio?"),
               ConversationTurn(role="assistant", content="4.5%")],
    )  # fmt: skip
    [row] = _run(_host(server, settings={"system_prompt": "Be brief."}), case)
    assert row.error is None, row.error
    assert len(server.requests) == 1
    assert server.requests[0].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "tier 1 ratio?"},
        {"role": "assistant", "content": "4.5%"},
        {"role": "user", "content": "and for tier 2?"},
    ]
    assert "system_prompt" not in server.requests[0].body


def test_bearer_token_from_the_env_var_never_in_the_row(server: OllamaServer, monkeypatch) -> None:
    server.api_key = SECRET
    monkeypatch.setenv("ASSAY_TEST_OLLAMA_KEY", SECRET)
    config = _host(server, secret_ref="ASSAY_TEST_OLLAMA_KEY", settings={"headers": {"X-Team": "mrm"}})
    rows = _run(config, TestCase(key="ok", prompt="hi"), TestCase(key="echo", prompt=f"repeat {SECRET}"))
    assert all(row.error is None for row in rows), [row.error for row in rows]
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert server.requests[0].headers["x-team"] == "mrm"
    assert all(SECRET not in row.model_dump_json() for row in rows)  # even when the server echoes it back
    monkeypatch.setenv("ASSAY_TEST_OLLAMA_KEY", "wrong")
    [row] = _run(_host(server, secret_ref="ASSAY_TEST_OLLAMA_KEY"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "auth" and "401" in row.error and "unauthorized" in row.error


def test_no_secret_ref_sends_no_key_not_even_the_clients_ambient_one(server: OllamaServer, monkeypatch) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", SECRET)  # the ollama client reads it on its own
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error is None, row.error
    assert "authorization" not in server.requests[0].headers


def test_a_plain_authorization_header_is_refused(server: OllamaServer) -> None:
    config = _host(server, settings={"headers": {"Authorization": f"Bearer {SECRET}"}})
    [row] = _run(config, TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "'headers'" in row.error and "secret_ref" in row.error
    assert server.requests == []


def test_a_missing_env_var_is_a_configuration_error_naming_it(server: OllamaServer, monkeypatch) -> None:
    monkeypatch.delenv("ASSAY_TEST_MISSING_KEY", raising=False)
    [row] = _run(_host(server, secret_ref="ASSAY_TEST_MISSING_KEY"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "ASSAY_TEST_MISSING_KEY" in row.error
    assert server.requests == []


@pytest.mark.parametrize(
    ("fault", "kind", "reason"),
    [
        ("429", "rate_limited", "429"),
        ("500", "server_error", "500"),
        ("503", "server_error", "503"),
        ("401", "auth", "401"),
        ("403", "auth", "403"),
        ("404", "not_found", "not found, try pulling it first"),
        ("400", "client_error", "400"),
        ("slow", "timeout", "no answer within"),
        ("drop", "connection", "connection"),
        ("garbage", "malformed_response", "not JSON"),
        ("not_object", "malformed_response", "not a chat response"),
        ("no_message", "malformed_response", "not a chat response"),
        ("empty", "empty_answer", "answer is empty"),
    ],
)
def test_each_fault_maps_to_its_kind_with_a_reason(server: OllamaServer, fault: str, kind: str, reason: str) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=1.0, retries=0, backoff_s=0.0)
    [row] = _run(_host(server), TestCase(key="c", prompt=f"hi [fault:{fault}]"), policy=policy)
    assert row.error_kind == kind, row.error
    assert reason in row.error
    assert row.actual_output is None


def test_the_client_timeout_setting_is_a_timeout(server: OllamaServer) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=5.0, retries=0, backoff_s=0.0)
    config = _host(server, settings={"timeout_s": 0.3})
    [row] = _run(config, TestCase(key="c", prompt="hi [fault:slow]"), policy=policy)
    assert row.error_kind == "timeout" and "ReadTimeout" in row.error


def test_unknown_model_is_not_found_as_ollama_says(server: OllamaServer) -> None:
    [row] = _run(_host(server, llm_model_name="no-such-model"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "not_found" and 'model "no-such-model" not found' in row.error


def test_a_server_that_is_not_there_is_a_connection_error() -> None:
    from assay.testing.local_app import free_port

    config = ModelHost(key="gone", type="ollama", url=f"http://127.0.0.1:{free_port()}", llm_model_name="llama3.2")
    [row] = _run(config, TestCase(key="c", prompt="hi"))
    assert row.error_kind == "connection" and "connection failed" in row.error


def test_retry_after_is_read_and_honoured(server: OllamaServer) -> None:
    server.retry_after_s = 0.3
    server.plan.append("429")
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=1, backoff_s=0.0)
    loop = asyncio.new_event_loop()
    try:
        started = loop.time()
        [row] = loop.run_until_complete(
            resolve(create_host(_host(server)), [("t", TestCase(key="c", prompt="hi"))], policy)
        )
        waited = loop.time() - started
    finally:
        loop.close()
    assert row.error is None and row.attempts == 2
    assert waited >= 0.3


def test_a_retryable_fault_is_retried_by_resolve(server: OllamaServer) -> None:
    server.plan.extend(["500", "drop"])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"), policy=policy)
    assert row.error is None, row.error
    assert row.attempts == 3 and len(server.requests) == 3  # the client itself did not retry


def test_a_permanent_fault_is_not_retried(server: OllamaServer) -> None:
    server.plan.extend(["401", None])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"), policy=policy)
    assert row.error_kind == "auth" and len(server.requests) == 1


def test_thirty_cases_with_mixed_faults_lose_nothing(server: OllamaServer) -> None:
    rng = random.Random(8)
    faults = ["429", "500", "503", "slow", "drop", "garbage", "empty"]
    plan = [rng.choice(faults) if rng.random() < 0.4 else None for _ in range(45)]
    server.plan.extend(plan)
    server.retry_after_s = 0.02
    cases = [TestCase(key=f"c{i:02d}", prompt=f"question {i}") for i in range(30)]
    policy = CallPolicy(concurrency=8, timeout_s=1.0, retries=2, backoff_s=0.01, breaker_failures=0)
    rows = _run(_host(server), *cases, policy=policy)
    assert [row.test_case.key for row in rows] == [case.key for case in cases]
    assert all(row.answered or (row.error and row.error_kind) for row in rows)
    assert any(row.answered for row in rows)
    assert {row.error_kind for row in rows} & {"malformed_response", "empty_answer"}  # recorded, not retried
    for row in rows:
        if row.answered:
            assert row.actual_output == f"echo: {row.test_case.prompt}"
        else:
            assert row.error_kind in {"rate_limited", "server_error", "timeout", "connection", "malformed_response",
                                      "empty_answer"}  # fmt: skip


def test_one_client_per_loop_closed_after_resolve(server: OllamaServer) -> None:
    host = create_host(_host(server))
    rows = asyncio.run(resolve(host, [("t", TestCase(key=f"c{i}", prompt="hi")) for i in range(3)], FAST))
    assert all(row.answered for row in rows)
    assert getattr(host, "_cached_client", None) is None


def test_the_server_speaks_tags_version_and_streaming(server: OllamaServer) -> None:
    import ollama

    async def check() -> None:
        client = ollama.AsyncClient(host=server.url)
        try:
            tags = await client.list()
            assert [model.model for model in tags.models] == ["llama3.2:latest"]
            parts = [part async for part in await client.chat(model="llama3.2", messages=[{"role": "user",
                     "content": "a b"}], stream=True)]  # fmt: skip
            assert parts[-1].done and "".join(part.message.content for part in parts).strip() == "echo: a b"
        finally:
            await client.close()

    asyncio.run(check())
    assert httpx.get(f"{server.url}/api/version").json()["version"]


def test_the_example_host_file_is_a_valid_ollama_host(server: OllamaServer) -> None:
    config = ModelHost.model_validate_json(EXAMPLE.read_text())
    assert (config.type, config.url, config.llm_model_name) == ("ollama", "http://127.0.0.1:11434", "llama3.2")
    [row] = _run(config.model_copy(update={"url": server.url}), TestCase(key="c", prompt="hi"))
    assert row.error is None, row.error
    assert server.requests[0].body["options"] == config.settings["options"]
