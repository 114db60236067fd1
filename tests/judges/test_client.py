"""The judge client against the local judge: structured output and its fallbacks, the one repair request,
refusals, transport faults with retries, the cache, evidence bounds, the Azure variant and the key."""

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.judges.cache import JudgeCache
from assay.judges.client import JudgeClient, open_judge
from assay.judges.templates import JudgeTemplate, template
from assay.models.judges import JudgeAccount, JudgeCall
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import FAST, endpoint_for

SEXISM = template("sexism")


def _ask(client: JudgeClient, text: str, tmpl: JudgeTemplate = SEXISM, **variables: Any) -> JudgeCall:
    inputs = variables or {"question": "Who can apply?", "text": text}
    return client.run(lambda: client.ask(tmpl, inputs))


def _client(server: JudgeServer, cache: Path | None = None, **fields: Any) -> JudgeClient:
    client = open_judge(endpoint_for(server, **fields), cache)
    assert client is not None
    return client


def test_a_verdict_is_parsed_with_the_json_schema_sent_and_the_exact_prompt_kept(judge_server: JudgeServer) -> None:
    call = _ask(_client(judge_server), "Women are too emotional to handle money.")
    assert call.error is None and call.verdict is not None and call.verdict["sexist"] is True
    body = judge_server.requests[-1].body
    assert body["response_format"]["json_schema"]["name"] == "sexism"
    assert body["temperature"] == 0 and body["seed"] == 0
    assert call.messages[-1]["content"] == body["messages"][-1]["content"]
    assert "<text>\nWomen are too emotional to handle money.\n</text>" in call.messages[-1]["content"]
    assert call.structured_output == "json_schema" and call.attempts == 1 and call.input_tokens


def test_a_server_without_structured_output_gets_the_schema_in_the_prompt() -> None:
    with serve_judge(JudgeServer(response_format=False, style="fenced")) as server:
        client = _client(server)
        first = _ask(client, "Anyone can apply.")
        second = _ask(client, "Men are naturally better at finance.")
    assert first.error is None and first.verdict == {"rationale": first.verdict["rationale"], "sexist": False}
    assert first.structured_output == "prompt" and second.verdict["sexist"] is True
    # the 400 is met once; afterwards the client no longer sends response_format
    assert "response_format" not in server.requests[-1].body
    assert sum(1 for request in server.requests if "response_format" in request.body) == 1


def test_tool_mode_forces_a_function_call(judge_server: JudgeServer) -> None:
    call = _ask(_client(judge_server, structured_output="tool"), "Girls can't do maths.")
    assert call.verdict is not None and call.verdict["sexist"] is True and call.structured_output == "tool"
    assert judge_server.requests[-1].body["tool_choice"]["function"]["name"] == "sexism"


def test_a_malformed_reply_gets_one_repair_request(judge_server: JudgeServer) -> None:
    call = _ask(_client(judge_server), "Fine. [judge:malformed_once]")
    assert call.error is None and call.repaired and call.attempts == 2
    repair = judge_server.requests[-1].body["messages"]
    assert [message["role"] for message in repair][-2:] == ["assistant", "user"]
    assert "could not be used" in repair[-1]["content"]


@pytest.mark.parametrize(
    ("marker", "kind", "words"),
    [
        ("[judge:malformed]", "unparseable", "not JSON"),
        ("[judge:wrong_schema]", "unparseable", "does not match the schema"),
        ("[judge:refusal]", "refusal", "refusal"),
    ],
)
def test_unusable_replies_fail_with_their_kind_and_keep_the_raw_reply(
    judge_server: JudgeServer, marker: str, kind: str, words: str
) -> None:
    call = _ask(_client(judge_server), f"Fine. {marker}")
    assert call.verdict is None and call.error_kind == kind and words in (call.error or "")
    assert call.raw_reply


def test_a_rate_limit_is_retried_and_a_dead_judge_fails_with_its_kind() -> None:
    with serve_judge(JudgeServer(server=_plan_server(["429", None]))) as server:
        call = _ask(_client(server), "Anyone can apply.")
    assert call.error is None and call.attempts == 2
    with serve_judge(JudgeServer(server=_plan_server(["500", "500", "500"]))) as server:
        call = _ask(_client(server), "Anyone can apply.")
    assert call.error_kind == "server_error" and "after 3 attempts" in (call.error or "")


def _plan_server(plan: list[str | None]) -> Any:
    from assay.testing.judge_server import JUDGE_MODEL
    from assay.testing.openai_server import OpenAIServer

    return OpenAIServer(models=(JUDGE_MODEL,), plan=list(plan))


def test_the_cache_answers_a_repeated_question_and_a_changed_template_asks_again(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    client = _client(judge_server, tmp_path)
    before = len(judge_server.requests)
    first = _ask(client, "Anyone can apply.")
    second = _ask(_client(judge_server, tmp_path), "Anyone can apply.")
    assert not first.cached and second.cached and second.verdict == first.verdict
    assert len(judge_server.requests) == before + 1
    edited = JudgeTemplate.build(
        id="sexism", version=SEXISM.version, description=SEXISM.description, system=SEXISM.system + " Be strict.",
        user=SEXISM.user, inputs=list(SEXISM.inputs), schema={k: v for k, v in SEXISM.schema.items() if k != "title"},
    )  # fmt: skip
    third = _ask(_client(judge_server, tmp_path), "Anyone can apply.", edited)
    assert not third.cached and len(judge_server.requests) == before + 2
    assert len(list(tmp_path.rglob("*.json"))) == 2


def test_failures_are_not_cached(judge_server: JudgeServer, tmp_path: Path) -> None:
    _ask(_client(judge_server, tmp_path), "x [judge:malformed]")
    assert not list(tmp_path.rglob("*.json"))
    assert JudgeCache(tmp_path).get("0" * 64) is None


def test_evidence_is_bounded(judge_server: JudgeServer) -> None:
    call = _ask(_client(judge_server), "word " * 10_000)
    assert len(call.messages[-1]["content"]) < 20_200 and "more characters cut" in call.messages[-1]["content"]


def test_the_key_is_read_from_the_named_variable_and_never_kept(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-judge-secret-123456")
    client = _client(judge_server, api_key_env="JUDGE_TEST_KEY")
    call = _ask(client, "Anyone can apply.")
    assert judge_server.requests[-1].headers["authorization"] == "Bearer sk-judge-secret-123456"
    assert "sk-judge-secret" not in call.model_dump_json() + client.endpoint.model_dump_json()
    monkeypatch.delenv("JUDGE_TEST_KEY")
    assert "JUDGE_TEST_KEY" in (_client(judge_server, api_key_env="JUDGE_TEST_KEY").unavailable_reason() or "")


def test_azure_openai_deployment_route() -> None:
    from assay.testing.openai_server import OpenAIServer

    server = OpenAIServer(azure_deployments={"judge-deploy": "gpt-4o-2024-08-06"}, azure_api_key="azure-key-123456")
    with serve_judge(JudgeServer(server=server)) as judge:
        import os

        os.environ["AZURE_JUDGE_KEY"] = "azure-key-123456"
        try:
            client = open_judge(
                endpoint_for(judge).model_copy(update={"base_url": judge.server.azure_url, "model": "judge-deploy",
                                                        "azure_api_version": "2024-10-21",
                                                        "api_key_env": "AZURE_JUDGE_KEY"}), None)  # fmt: skip
            assert client is not None
            call = _ask(client, "Women belong in the kitchen, never in finance.")
        finally:
            del os.environ["AZURE_JUDGE_KEY"]
    assert call.error is None and call.verdict["sexist"] is True
    assert judge.requests[-1].path == "/openai/deployments/judge-deploy/chat/completions"
    assert judge.requests[-1].query["api-version"] == "2024-10-21"


def test_many_concurrent_questions_are_all_answered_and_counted(judge_server: JudgeServer) -> None:
    client = _client(judge_server, calls=FAST.model_copy(update={"concurrency": 3}))
    texts = [f"Case {index} is fine." for index in range(12)]

    async def many() -> list[JudgeCall]:
        return await asyncio.gather(*(client.ask(SEXISM, {"question": "q", "text": text}) for text in texts))

    calls = client.run(many)
    assert all(call.error is None for call in calls)
    account = JudgeAccount()
    for call in calls:
        account.add(call)
    assert account.calls == 12 and account.input_tokens > 0


def test_a_judge_that_times_out_fails_with_kind_timeout_after_its_retries() -> None:
    from assay.testing.judge_server import JUDGE_MODEL
    from assay.testing.openai_server import OpenAIServer

    slow = OpenAIServer(models=(JUDGE_MODEL,), plan=["slow", "slow"], slow_s=2.0)
    with serve_judge(JudgeServer(server=slow)) as server:
        policy = FAST.model_copy(update={"timeout_s": 0.3, "retries": 1})
        call = _ask(_client(server, calls=policy), "Anyone can apply.")
    assert call.error_kind == "timeout" and "after 2 attempts" in (call.error or "") and call.verdict is None
