"""Issue 25 item 13: a 200 reply cut mid-JSON, or with an empty ``choices`` list, is retried within the call
policy's budget (as a 5xx is), by the OpenAI-protocol hosts and by the judge client alike; only when every
attempt gets one is the case recorded, with its kind and the number of attempts.

The local OpenAI-compatible server answers the first N requests with the fault, then a good reply.
"""

import asyncio
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.responses import Response

from assay.hosts import CallPolicy, create_host, resolve
from assay.judges.client import open_judge
from assay.judges.templates import template
from assay.models import ModelHost, TestCase, TestLabRow
from assay.testing.assistants_server import Assistant, AssistantFile, AssistantsServer, serve_assistants
from assay.testing.judge_server import JudgeServer, serve_judge
from assay.testing.openai_server import OpenAIServer, serve_openai
from tests.judges.conftest import endpoint_for

POLICY = CallPolicy(concurrency=1, timeout_s=5.0, retries=2, backoff_s=0.01, breaker_failures=0)


def cut_reply(body: dict[str, Any], message: dict[str, Any]) -> Response:
    """A complete chat completion cut in the middle of its JSON: status 200, a JSON content type, a correct
    length; only the text is short."""
    whole = json.dumps({"id": "chatcmpl-cut", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "message": {"role": "assistant", **message},
                                     "finish_reason": "stop"}]})  # fmt: skip
    return Response(whole[: len(whole) // 2], media_type="application/json")


def echo(body: dict[str, Any]) -> dict[str, Any]:
    return {"content": f"echo: {body['messages'][-1]['content']}"}


def cut_first(count: int, then: Callable[[dict[str, Any]], dict[str, Any] | Response] = echo):
    """A responder whose first ``count`` replies are cut mid-JSON, then ``then``'s."""
    left = [count]

    def respond(body: dict[str, Any]) -> dict[str, Any] | Response:
        message = then(body)
        if left[0] <= 0 or isinstance(message, Response):
            return message
        left[0] -= 1
        return cut_reply(body, message)

    return respond


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with serve_openai(OpenAIServer()) as running:
        yield running


def _host(server: OpenAIServer) -> ModelHost:
    return ModelHost(key="sut", type="openai-compatible", url=server.url, llm_model_name="local-model")


def _run(config: ModelHost, count: int = 1, policy: CallPolicy = POLICY) -> list[TestLabRow]:
    cases = [("t", TestCase(key=f"c{index}", prompt=f"question {index}")) for index in range(count)]
    return asyncio.run(resolve(create_host(config), cases, policy))


@pytest.mark.parametrize("fault", ["cut", "empty_choices"])
def test_a_fault_on_the_first_two_calls_is_retried_and_the_case_answered(server: OpenAIServer, fault: str) -> None:
    if fault == "cut":
        server.responder = cut_first(2)
    else:
        server.plan.extend(["empty_choices", "empty_choices"])
    [row] = _run(_host(server))
    assert row.error is None, row.error
    assert row.actual_output == "echo: question 0" and row.attempts == 3 and len(server.requests) == 3


@pytest.mark.parametrize(
    ("fault", "kind", "reason"),
    [("cut", "malformed_response", "not JSON"), ("empty_choices", "empty_answer", "'choices' is empty")],
)
def test_a_fault_on_every_call_is_recorded_after_the_budget(
    server: OpenAIServer, fault: str, kind: str, reason: str
) -> None:
    if fault == "cut":
        server.responder = cut_first(10)
    else:
        server.plan.extend(["empty_choices"] * 10)
    [row] = _run(_host(server))
    assert row.actual_output is None and row.error_kind == kind, row.error
    assert reason in row.error and "after 3 attempts" in row.error
    assert row.attempts == 3 and len(server.requests) == 3


def test_azure_openai_retries_a_cut_reply(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_AZURE_KEY", "azure-key")
    server.responder = cut_first(1)
    config = ModelHost(key="az", type="azure-openai", url=server.azure_url, llm_model_name="gpt-4o-prod",
                       secret_ref="ASSAY_TEST_AZURE_KEY", settings={"api_version": "2024-10-21"})  # fmt: skip
    [row] = _run(config)
    assert row.error is None and row.attempts == 2, row.error


def test_openai_assistants_retries_a_cut_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_ASSISTANTS_KEY", "assistants-key")
    files = {"file-1": AssistantFile("handbook.pdf", ["Branches open at 9 on weekdays."])}
    server = AssistantsServer(assistants={"asst_rag": Assistant(files=files)}, api_key="assistants-key",
                              plan=["garbage"])  # fmt: skip
    with serve_assistants(server) as running:
        config = ModelHost(key="oa", type="openai-assistants", url=running.url, secret_ref="ASSAY_TEST_ASSISTANTS_KEY",
                           settings={"assistant_id": "asst_rag", "poll_interval_s": 0.01})  # fmt: skip
        [row] = _run(config)
    assert row.error is None and row.attempts == 2, row.error


def test_the_judge_retries_a_cut_reply_and_an_empty_choices_list() -> None:
    sexism = template("sexism")
    inputs = {"question": "Who can apply?", "text": "Anyone can apply."}
    with serve_judge(JudgeServer()) as judge:
        judge.server.responder = cut_first(1, then=judge.respond)
        judge.server.plan.append("empty_choices")  # the retry: a well-formed reply without choices
        client = open_judge(endpoint_for(judge), None)
        assert client is not None
        answered = client.run(lambda: client.ask(sexism, inputs))
        judge.server.responder = cut_first(10, then=judge.respond)
        failed = client.run(lambda: client.ask(sexism, inputs, repeat=1))
    assert answered.error is None and answered.verdict is not None and answered.attempts == 3, answered.error
    assert failed.verdict is None and failed.error_kind == "malformed_response" and failed.attempts == 3
    assert "after 3 attempts" in (failed.error or "")


def lost_at(fault_share: float, cases: int, seed: int) -> int:
    """Cases lost when each request has ``fault_share`` odds of a cut or an empty-choices reply (half each)."""
    rng = random.Random(seed)
    faults = [rng.choice(["cut", "empty_choices"]) if rng.random() < fault_share else None for _ in range(cases * 3)]
    plan = [fault if fault == "empty_choices" else None for fault in faults]
    with serve_openai(OpenAIServer(plan=plan)) as server:

        def respond(body: dict[str, Any]) -> dict[str, Any] | Response:
            request = len(server.requests) - 1  # one request at a time: this one's place in the plan
            return cut_reply(body, echo(body)) if faults[request] == "cut" else echo(body)

        server.responder = respond
        rows = _run(_host(server), cases)
    return sum(1 for row in rows if not row.answered)


def test_thirty_percent_faults_on_38_cases_lose_few() -> None:
    """The audit lost 9 of 38 cases at 30% faults (each fault was final); with retries a case is lost only
    when all three of its attempts fail (about 3% of cases at 30%)."""
    assert lost_at(0.3, 38, seed=25) <= 3
