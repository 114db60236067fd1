"""openai-compatible through the real ``openai`` client against a protocol-faithful local server."""

from collections.abc import Iterator

import pytest

from assay.hosts import CallPolicy, create_host, resolve
from assay.models import ModelHost, TestCase
from assay.models.suite import ConversationTurn
from assay.testing.openai_server import OpenAIServer, serve_openai

FAST = CallPolicy(concurrency=4, timeout_s=2.0, retries=0, backoff_s=0.01)
SECRET = "sk-test-5ecret-value-0123456789"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with serve_openai(OpenAIServer(slow_s=5.0)) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server: OpenAIServer) -> None:
    server.requests.clear()
    server.plan.clear()
    server.api_key = None


def _host(server: OpenAIServer, **fields: object) -> ModelHost:
    return ModelHost(**{"key": "local", "type": "openai-compatible", "url": server.url,
                        "llm_model_name": "local-model", **fields})  # fmt: skip


def _run(config: ModelHost, *cases: TestCase, policy: CallPolicy = FAST):
    import asyncio

    return asyncio.run(resolve(create_host(config), [(case.key, case) for case in cases], policy))


def test_answer_tokens_model_and_raw_response(server: OpenAIServer) -> None:
    settings = {"temperature": 0.2, "max_tokens": 64, "seed": 7}
    prices = {"local-model-2026-01-01": {"input_per_1k": 1.0, "output_per_1k": 2.0}}  # the model the server names
    case = TestCase(key="c1", prompt="what is the capital ratio")
    [row] = _run(_host(server, settings=settings, prices=prices), case)
    assert row.error is None, row.error
    assert row.actual_output == "echo: what is the capital ratio"
    assert (row.input_tokens, row.output_tokens) == (5, 6)
    assert row.cost == pytest.approx(5 / 1000 * 1.0 + 6 / 1000 * 2.0) and row.cost_source == "price_table"
    assert row.model_name == "local-model-2026-01-01"
    assert '"object":"chat.completion"' in row.raw_response.replace(" ", "")
    body = server.requests[0].body
    assert body["model"] == "local-model"
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 64, 7)
    assert not any(key.startswith("price_per") for key in body)


def test_extra_settings_pass_as_is(server: OpenAIServer) -> None:
    settings = {"top_p": 0.5, "stop": ["\n\n"], "extra_body": {"repetition_penalty": 1.1}, "user": "assay"}
    [row] = _run(_host(server, settings=settings), TestCase(key="c", prompt="hi"))
    assert row.error is None, row.error
    body = server.requests[0].body
    assert body["top_p"] == 0.5 and body["stop"] == ["\n\n"] and body["repetition_penalty"] == 1.1
    assert body["user"] == "assay"


def test_multi_turn_sends_system_turns_then_prompt(server: OpenAIServer) -> None:
    case = TestCase(
        key="c",
        prompt="and for tier 2?",
        turns=[ConversationTurn(role="user", content="tier 1 ratio?"),
               ConversationTurn(role="assistant", content="4.5%")],
    )  # fmt: skip
    [row] = _run(_host(server, settings={"system_prompt": "Be brief."}), case)
    assert row.error is None, row.error
    assert server.requests[0].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "tier 1 ratio?"},
        {"role": "assistant", "content": "4.5%"},
        {"role": "user", "content": "and for tier 2?"},
    ]
    assert "system_prompt" not in server.requests[0].body


def test_bearer_token_from_the_env_var_never_in_the_row(server: OpenAIServer, monkeypatch) -> None:
    server.api_key = SECRET
    monkeypatch.setenv("ASSAY_TEST_OPENAI_KEY", SECRET)
    [row] = _run(_host(server, secret_ref="ASSAY_TEST_OPENAI_KEY"), TestCase(key="c", prompt="hi"))
    assert row.error is None, row.error
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in row.model_dump_json()
    monkeypatch.setenv("ASSAY_TEST_OPENAI_KEY", "sk-wrong")
    [row] = _run(_host(server, secret_ref="ASSAY_TEST_OPENAI_KEY"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "auth" and "401" in row.error


def test_no_secret_ref_sends_a_placeholder_key(server: OpenAIServer) -> None:
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error is None
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_a_missing_env_var_is_a_configuration_error_naming_it(server: OpenAIServer, monkeypatch) -> None:
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
        ("404", "not_found", "404"),
        ("400", "client_error", "400"),
        ("slow", "timeout", "no answer within"),
        ("drop", "connection", "connection"),
        ("garbage", "malformed_response", "not JSON"),
        ("not_object", "malformed_response", "not a JSON object"),
        ("empty_choices", "empty_answer", "'choices' is empty"),
        ("empty_content", "empty_answer", "answer is empty"),
    ],
)
def test_each_fault_maps_to_its_kind_with_a_reason(server: OpenAIServer, fault: str, kind: str, reason: str) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=1.0, retries=0, backoff_s=0.0)
    [row] = _run(_host(server), TestCase(key="c", prompt=f"hi [fault:{fault}]"), policy=policy)
    assert row.error_kind == kind, row.error
    assert reason in row.error
    assert row.actual_output is None


def test_unknown_model_is_not_found(server: OpenAIServer) -> None:
    [row] = _run(_host(server, llm_model_name="no-such-model"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "not_found" and "no-such-model" in row.error


def test_a_retryable_fault_is_retried_by_resolve(server: OpenAIServer) -> None:
    server.plan.extend(["500", "429"])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"), policy=policy)
    assert row.error is None, row.error
    assert row.attempts == 3 and len(server.requests) == 3  # the client itself did not retry


def test_a_permanent_fault_is_not_retried(server: OpenAIServer) -> None:
    server.plan.extend(["401", None])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"), policy=policy)
    assert row.error_kind == "auth" and len(server.requests) == 1


def test_retries_exhausted_keep_the_kind(server: OpenAIServer) -> None:
    server.plan.extend(["503", "503"])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=1, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"), policy=policy)
    assert row.error_kind == "server_error" and "after 2 attempts" in row.error


def test_openai_chat_defaults_to_openai_base_url() -> None:
    host = create_host(ModelHost(key="o", type="openai-chat", llm_model_name="gpt-4o-mini"))
    assert host.default_url == "https://api.openai.com/v1"


def test_cached_and_reasoning_tokens_are_kept_and_cached_input_is_priced_apart(server: OpenAIServer) -> None:
    server.usage_details = {"prompt_tokens_details": {"cached_tokens": 3},
                            "completion_tokens_details": {"reasoning_tokens": 2}}  # fmt: skip
    try:
        prices = {"*": {"input_per_1k": 1.0, "output_per_1k": 2.0, "cached_input_per_1k": 0.25}}
        [row] = _run(_host(server, prices=prices), TestCase(key="c", prompt="what is the capital ratio"))
    finally:
        server.usage_details = {}
    assert (row.input_tokens, row.cached_input_tokens, row.output_tokens, row.reasoning_tokens) == (5, 3, 6, 2)
    # by hand: 2 uncached input tokens at 1.0, 3 cached at 0.25, 6 output (the 2 reasoning ones included) at 2.0
    assert row.cost == pytest.approx((2 * 1.0 + 3 * 0.25 + 6 * 2.0) / 1000) and row.cost_source == "price_table"
