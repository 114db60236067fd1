"""openai-assistants through the real ``openai`` client (``beta.threads``) against a local Assistants v2 server."""

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.hosts import CallPolicy, create_host, host_types, register_host, resolve
from assay.hosts.openai_assistants import OpenAIAssistants
from assay.models import ModelHost, ModelPrice, TestCase
from assay.models.suite import ConversationTurn
from assay.testing.assistants_server import Assistant, AssistantFile, AssistantsServer, serve_assistants

if "openai-assistants" not in host_types():
    register_host(OpenAIAssistants)

FAST = CallPolicy(concurrency=4, timeout_s=15.0, retries=0, backoff_s=0.01)  # generous: CI machines are loaded
SECRET = "sk-assistants-5ecret-0123456789"
ENV = "ASSAY_TEST_ASSISTANTS_KEY"
FILES = {
    "file-basel": AssistantFile("basel3.pdf", ["The tier 1 capital ratio minimum is 6 percent under Basel III.",
                                               "The leverage ratio minimum is 3 percent."]),
    "file-lcr": AssistantFile("lcr.md", ["The liquidity coverage ratio must stay above 100 percent."]),
}  # fmt: skip


def _assistants() -> dict[str, Assistant]:
    return {"asst_rag": Assistant(files=FILES), "asst_plain": Assistant(model="gpt-4o-mini", file_search=False)}


@pytest.fixture(scope="module")
def server() -> Iterator[AssistantsServer]:
    with serve_assistants(AssistantsServer(assistants=_assistants(), api_key=SECRET, slow_s=3.0)) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server: AssistantsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.requests.clear()
    server.plan.clear()
    server.deleted.clear()
    monkeypatch.setenv(ENV, SECRET)


def _host(server: AssistantsServer, **settings: object) -> ModelHost:
    settings = {"assistant_id": "asst_rag", "poll_interval_s": 0.01, **settings}
    return ModelHost(key="assistants", type="openai-assistants", url=server.url, secret_ref=ENV, settings=settings)


def _run(config: ModelHost, *cases: TestCase, policy: CallPolicy = FAST):
    return asyncio.run(resolve(create_host(config), [(case.key, case) for case in cases], policy))


def _paths(server: AssistantsServer) -> list[str]:
    return [f"{request.method} {request.path}" for request in server.requests]


def test_answer_context_tokens_cost_and_thread_lifecycle(server: AssistantsServer) -> None:
    config = _host(server).model_copy(update={"prices": {"*": ModelPrice(input_per_1k=1.0, output_per_1k=2.0)}})
    [row] = _run(config, TestCase(key="c", prompt="What is the minimum tier 1 capital ratio?"))
    assert row.error is None, row.error
    assert row.actual_output.startswith("According to basel3.pdf: The tier 1 capital ratio minimum is 6 percent")
    assert [chunk.doc_uri for chunk in row.context] == ["basel3.pdf", "basel3.pdf", "lcr.md"]
    assert [chunk.rank for chunk in row.context] == [0, 1, 2]
    assert row.context[0].text.startswith("The tier 1 capital ratio") and row.context[0].score > row.context[1].score
    assert row.model_name == "gpt-4o-2024-08-06"
    assert row.input_tokens and row.output_tokens
    assert row.cost == pytest.approx(row.input_tokens / 1000 + row.output_tokens / 1000 * 2)
    raw = json.loads(row.raw_response)
    assert raw["run"]["status"] == "completed" and raw["transcript"][-1]["role"] == "assistant"
    paths = _paths(server)
    thread_id = server.deleted[0]
    thread_path = f"/v1/threads/{thread_id}"
    assert paths[:3] == ["POST /v1/threads", f"POST {thread_path}/messages", f"POST {thread_path}/runs"]
    assert paths[-1] == f"DELETE /v1/threads/{thread_id}" and thread_id not in server.threads
    steps = next(request for request in server.requests if request.path.endswith("/steps"))
    assert steps.query["include[]"] == ["step_details.tool_calls[*].file_search.results[*].content"]
    assert all(request.headers["openai-beta"] == "assistants=v2" for request in server.requests)
    assert all(request.headers["authorization"] == f"Bearer {SECRET}" for request in server.requests)


def test_settings_go_to_runs_create_as_is(server: AssistantsServer) -> None:
    config = _host(server, temperature=0.2, additional_instructions="Cite the file.", metadata={"suite": "mrm"},
                   extra_body={"x_custom": 1}, thread_kwargs={"metadata": {"case": "c"}})  # fmt: skip
    [row] = _run(config, TestCase(key="c", prompt="leverage ratio?"))
    assert row.error is None, row.error
    [run_request] = [request for request in server.requests if request.path.endswith("/runs")]
    assert run_request.body == {"assistant_id": "asst_rag", "temperature": 0.2,
                                "additional_instructions": "Cite the file.", "metadata": {"suite": "mrm"},
                                "x_custom": 1}  # fmt: skip
    assert server.requests[0].body["metadata"] == {"case": "c"}


def test_a_setting_the_client_does_not_take_is_a_configuration_error(server: AssistantsServer) -> None:
    [row] = _run(_host(server, no_such_argument=1), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "no_such_argument" in row.error


def test_turns_are_thread_messages_before_the_prompt(server: AssistantsServer) -> None:
    turns = [ConversationTurn(role="system", content="ignored"), ConversationTurn(role="user", content="tier 1?"),
             ConversationTurn(role="assistant", content="6 percent.")]  # fmt: skip
    [row] = _run(_host(server), TestCase(key="c", prompt="and the leverage ratio?", turns=turns))
    assert row.error is None, row.error
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "tier 1?"},
                                                   {"role": "assistant", "content": "6 percent."}]  # fmt: skip
    assert server.requests[1].body == {"role": "user", "content": "and the leverage ratio?"}
    assert "leverage ratio minimum" in row.actual_output
    assert [turn["content"] for turn in json.loads(row.raw_response)["transcript"]][:3] == [
        "tier 1?", "6 percent.", "and the leverage ratio?"]  # fmt: skip


def test_no_file_search_keeps_the_answer_with_an_empty_context(server: AssistantsServer) -> None:
    [row] = _run(_host(server, assistant_id="asst_plain"), TestCase(key="c", prompt="tier 1?"))
    assert row.error is None and row.actual_output and row.context == []
    assert row.model_name == "gpt-4o-mini"
    [row] = _run(_host(server), TestCase(key="c", prompt="tier 1? [fault:no_search]"))
    assert row.error is None and row.context == []


def test_secret_never_in_a_row_and_wrong_key_is_auth(server: AssistantsServer, monkeypatch) -> None:
    rows = _run(_host(server), TestCase(key="a", prompt="tier 1?"), TestCase(key="b", prompt="x [fault:500]"))
    assert all(SECRET not in row.model_dump_json() for row in rows)
    monkeypatch.setenv(ENV, "sk-wrong")
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "auth" and "401" in row.error


@pytest.mark.parametrize(
    ("settings", "named"),
    [({"assistant_id": ""}, "'assistant_id'"), ({"poll_interval_s": "fast"}, "'poll_interval_s'"),
     ({"thread_kwargs": [1]}, "'thread_kwargs'")],
)  # fmt: skip
def test_configuration_errors_name_the_field(server: AssistantsServer, settings: dict, named: str) -> None:
    [row] = _run(_host(server, **settings), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and named in row.error
    assert server.requests == []


def test_unset_env_var_is_a_configuration_error(server: AssistantsServer, monkeypatch) -> None:
    monkeypatch.delenv(ENV)
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and ENV in row.error


def test_unknown_assistant_is_not_found(server: AssistantsServer) -> None:
    [row] = _run(_host(server, assistant_id="asst_missing"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "not_found" and "asst_missing" in row.error
    assert server.deleted  # the thread is cleaned up even when the run could not start


@pytest.mark.parametrize(
    ("fault", "kind", "reason"),
    [
        ("429", "rate_limited", "429"),
        ("500", "server_error", "500"),
        ("503", "server_error", "503"),
        ("slow", "timeout", "no answer within"),
        ("drop", "connection", "connection"),
        ("garbage", "malformed_response", "not valid JSON"),
        ("retrieve_garbage", "malformed_response", "poll run"),
        ("empty", "empty_answer", "without an assistant answer"),
        ("401", "auth", "401"),
        ("404", "not_found", "404"),
        ("run_failed_rate_limit", "rate_limited", "rate_limit_exceeded"),
        ("run_failed_server", "server_error", "server_error"),
        ("run_failed_invalid", "client_error", "invalid_prompt"),
        ("run_expired", "timeout", "expired"),
        ("run_cancelled", "timeout", "cancelled"),
        ("run_incomplete", "empty_answer", "max_completion_tokens"),
    ],
)
def test_each_fault_maps_to_its_kind(server: AssistantsServer, fault: str, kind: str, reason: str) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=1.0, retries=0, backoff_s=0.0)
    [row] = _run(_host(server), TestCase(key="c", prompt=f"tier 1? [fault:{fault}]"), policy=policy)
    assert row.error_kind == kind, row.error
    assert reason in row.error and row.actual_output is None


def test_retryable_faults_are_retried_with_retry_after(server: AssistantsServer) -> None:
    server.retry_after_s = 0.05
    try:
        server.plan.extend(["429", "run_failed_server", "run_expired"])
        policy = CallPolicy(concurrency=1, timeout_s=10.0, retries=3, backoff_s=0.01)
        [row] = _run(_host(server), TestCase(key="c", prompt="tier 1?"), policy=policy)
    finally:
        server.retry_after_s = 0.0
    assert row.error is None, row.error
    assert row.attempts == 4 and len(server.deleted) == 4


def test_thirty_cases_with_mixed_faults_lose_nothing(server: AssistantsServer) -> None:
    faults = ["429", "500", "503", "slow", "drop", "garbage", "empty", "run_failed_rate_limit", "run_expired",
              None, None, None]  # fmt: skip
    server.plan.extend(faults * 5)
    cases = [TestCase(key=f"c{index}", prompt=f"question {index} about the tier 1 ratio") for index in range(30)]
    # a time-out under the server's slow fault (3 s) but well above a loaded machine's few HTTP calls per case
    policy = CallPolicy(concurrency=4, timeout_s=2.0, retries=2, backoff_s=0.01, breaker_failures=0)
    rows = _run(_host(server), *cases, policy=policy)
    assert [row.test_case.key for row in rows] == [case.key for case in cases]
    for row in rows:
        assert (row.error is None) != (row.actual_output is None)
        if row.error is not None:
            assert row.error_kind not in (None, "other"), row.error
        else:
            assert row.context and row.input_tokens
    assert sum(row.error is None for row in rows) >= 10  # 10 of the plan's faults (garbage, empty) are permanent
    assert all(SECRET not in row.model_dump_json() for row in rows)


def test_example_host_file_answers_from_the_local_server(server: AssistantsServer, monkeypatch) -> None:
    config = ModelHost.model_validate(json.loads(Path("examples/hosts/openai-assistants.json").read_text()))
    assert config.type == "openai-assistants" and config.settings["assistant_id"].startswith("asst_")
    assert isinstance(create_host(config), OpenAIAssistants)
    monkeypatch.setenv(config.secret_ref, SECRET)
    settings = {**config.settings, "assistant_id": "asst_rag", "poll_interval_s": 0.01}
    config = config.model_copy(update={"url": server.url, "settings": settings})
    [row] = _run(config, TestCase(key="c", prompt="liquidity?"))
    assert row.error is None and row.context, row.error
    [run_request] = [request for request in server.requests if request.path.endswith("/runs")]
    assert run_request.body["additional_instructions"] == "Answer only from the attached files."
