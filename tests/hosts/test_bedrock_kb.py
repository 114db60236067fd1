"""bedrock-kb through the real ``boto3`` client (``endpoint_url``) against a local Bedrock Agent Runtime."""

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.hosts import CallPolicy, create_host, host_types, register_host, resolve
from assay.hosts.bedrock_kb import BedrockKnowledgeBase
from assay.models import ModelHost, TestCase
from assay.models.suite import ConversationTurn
from assay.testing.bedrock_server import BedrockServer, serve_bedrock

if "bedrock-kb" not in host_types():
    register_host(BedrockKnowledgeBase)

FAST = CallPolicy(concurrency=4, timeout_s=3.0, retries=0, backoff_s=0.01)
KEY_ID = "AKIAASSAYTEST0000000"
SECRET = "assay-test-aws-5ecret-access-key-0123456789"
MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hosts" / "bedrock-kb.json"


@pytest.fixture(scope="module")
def server() -> Iterator[BedrockServer]:
    with serve_bedrock(BedrockServer(access_key_id=KEY_ID, slow_s=2.0)) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server: BedrockServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    server.requests.clear()
    server.plan.clear()
    server.retry_after_s = 0.0
    # Only these credentials: no profile, no config files, no instance metadata lookups.
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)


def _host(server: BedrockServer, settings: dict | None = None, **fields: object) -> ModelHost:
    base = {"region": "eu-west-1", "knowledge_base_id": "KB12345678"}
    return ModelHost(**{"key": "kb", "type": "bedrock-kb", "url": server.url, "llm_model_name": MODEL,
                        "settings": {**base, **(settings or {})}, **fields})  # fmt: skip


def _run(config: ModelHost, *cases: TestCase, policy: CallPolicy = FAST):
    return asyncio.run(resolve(create_host(config), [(case.key, case) for case in cases], policy))


CAPITAL = "what is the minimum common equity tier 1 capital ratio"


def test_answer_citations_as_context_and_raw_response(server: BedrockServer) -> None:
    [row] = _run(_host(server), TestCase(key="c1", prompt=CAPITAL))
    assert row.error is None, row.error
    assert row.actual_output.startswith("The minimum common equity tier 1 capital ratio is 4.5 percent")
    assert [(chunk.rank, chunk.doc_uri) for chunk in row.context] == [
        (0, "s3://assay-kb/basel/capital.pdf"),
        (1, "https://example.org/basel/leverage"),
    ]
    assert "4.5 percent" in row.context[0].text
    assert row.input_tokens > 0 and row.output_tokens > 0 and row.token_count_source  # counted: Bedrock reports none
    assert row.cost is None and row.model_name is None
    raw = json.loads(row.raw_response)
    assert raw["sessionId"] and raw["citations"][0]["retrievedReferences"]
    [request] = server.requests
    assert request.body["input"] == {"text": CAPITAL}
    assert request.body["retrieveAndGenerateConfiguration"] == {
        "type": "KNOWLEDGE_BASE",
        "knowledgeBaseConfiguration": {"knowledgeBaseId": "KB12345678", "modelArn": MODEL},
    }
    assert "sessionId" not in request.body
    assert f"Credential={KEY_ID}/" in request.headers["authorization"]
    assert "/eu-west-1/bedrock/aws4_request" in request.headers["authorization"]


def test_settings_pass_as_is_into_the_request(server: BedrockServer) -> None:
    settings = {
        "retrievalConfiguration": {"vectorSearchConfiguration": {"numberOfResults": 1}},
        "generationConfiguration": {"inferenceConfig": {"textInferenceConfig": {"temperature": 0.1}}},
        "retrieveAndGenerateConfiguration": {
            "knowledgeBaseConfiguration": {
                "orchestrationConfiguration": {"queryTransformationConfiguration": {"type": "QUERY_DECOMPOSITION"}}
            }
        },
        "userContext": {"userId": "validator-7"},
        "read_timeout_s": 30,
    }
    [row] = _run(_host(server, settings), TestCase(key="c", prompt=CAPITAL))
    assert row.error is None, row.error
    assert len(row.context) == 1  # numberOfResults reached the server
    body = server.requests[0].body
    kb = body["retrieveAndGenerateConfiguration"]["knowledgeBaseConfiguration"]
    assert kb["knowledgeBaseId"] == "KB12345678" and kb["modelArn"] == MODEL
    assert kb["retrievalConfiguration"] == settings["retrievalConfiguration"]
    assert kb["generationConfiguration"] == settings["generationConfiguration"]
    assert kb["orchestrationConfiguration"]["queryTransformationConfiguration"] == {"type": "QUERY_DECOMPOSITION"}
    assert body["userContext"] == {"userId": "validator-7"}
    assert not {"region", "knowledge_base_id", "read_timeout_s"} & set(body)


def test_a_setting_the_service_model_does_not_know_is_a_configuration_error(server: BedrockServer) -> None:
    [row] = _run(_host(server, {"temperatur": 0.3}), TestCase(key="c", prompt=CAPITAL))
    assert row.error_kind == "configuration" and "temperatur" in row.error
    assert server.requests == []


def test_multi_turn_replays_user_turns_in_one_session(server: BedrockServer) -> None:
    case = TestCase(
        key="c",
        prompt="and the leverage ratio of tier 1 capital?",
        turns=[ConversationTurn(role="user", content=CAPITAL),
               ConversationTurn(role="assistant", content="4.5%"),
               ConversationTurn(role="user", content="what about liquidity coverage?")],
    )  # fmt: skip
    [row] = _run(_host(server), case)
    assert row.error is None, row.error
    questions = [request.body["input"]["text"] for request in server.requests]
    assert questions == [CAPITAL, "what about liquidity coverage?", case.prompt]
    assert "sessionId" not in server.requests[0].body
    session = server.requests[1].body["sessionId"]
    assert server.requests[2].body["sessionId"] == session
    assert server.sessions[session] == questions
    assert row.actual_output.startswith("The leverage ratio") and row.actual_output.endswith("(turn 3)")
    assert row.context[0].doc_uri == "https://example.org/basel/leverage"
    transcript = json.loads(row.raw_response)
    assert transcript["sessionId"] == session
    assert [turn["question"] for turn in transcript["turns"]] == questions
    assert transcript["turns"][0]["answer"].startswith("The minimum common equity")


def test_the_aws_secret_never_reaches_a_row(server: BedrockServer, monkeypatch: pytest.MonkeyPatch) -> None:
    [row] = _run(_host(server), TestCase(key="c", prompt=f"{CAPITAL} {SECRET}"))
    assert row.error is None, row.error
    assert SECRET not in row.model_dump_json()
    assert SECRET not in json.dumps([request.headers for request in server.requests])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGKEY00000000")
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "auth" and "UnrecognizedClientException" in row.error
    assert SECRET not in row.model_dump_json()


@pytest.mark.parametrize(
    ("missing", "field"),
    [({"settings": {"knowledge_base_id": "KB12345678"}}, "region"),
     ({"settings": {"region": "eu-west-1"}}, "knowledge_base_id"),
     ({"llm_model_name": ""}, "llm_model_name")],
)  # fmt: skip
def test_missing_configuration_names_the_field(server: BedrockServer, missing: dict, field: str) -> None:
    config = _host(server).model_copy(update=missing)
    [row] = _run(config, TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and repr(field) in row.error, row.error
    assert server.requests == []


def test_no_credentials_in_the_chain_is_a_configuration_error(server: BedrockServer, monkeypatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    [row] = _run(_host(server), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "AWS credential chain" in row.error
    assert server.requests == []


def test_an_unknown_profile_is_a_configuration_error_naming_the_setting(server: BedrockServer) -> None:
    [row] = _run(_host(server, {"profile": "no-such-profile"}), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "configuration" and "'profile'" in row.error


@pytest.mark.parametrize(
    ("fault", "kind", "reason"),
    [
        ("429", "rate_limited", "ThrottlingException"),
        ("500", "server_error", "InternalServerException"),
        ("503", "server_error", "ServiceUnavailableException"),
        ("424", "server_error", "DependencyFailedException"),
        ("502", "server_error", "BadGatewayException"),
        ("401", "auth", "UnrecognizedClientException"),
        ("403", "auth", "AccessDeniedException"),
        ("expired", "auth", "ExpiredTokenException"),
        ("404", "not_found", "ResourceNotFoundException"),
        ("400", "client_error", "ValidationException"),
        ("slow", "timeout", "no answer within"),
        ("drop", "connection", "connection"),
        ("garbage", "malformed_response", "output.text"),
        ("no_output", "malformed_response", "output.text"),
        ("empty", "empty_answer", "empty"),
    ],
)
def test_each_fault_maps_to_its_kind_with_a_reason(server: BedrockServer, fault: str, kind: str, reason: str) -> None:
    # a generous time-out (creating a boto3 client is slow on a loaded machine), but shorter than a slow reply
    policy = CallPolicy(concurrency=1, timeout_s=1.0 if fault == "slow" else 10.0, retries=0, backoff_s=0.0)
    [row] = _run(_host(server), TestCase(key="c", prompt=f"capital ratio [fault:{fault}]"), policy=policy)
    assert row.error_kind == kind, row.error
    assert reason in row.error
    assert row.actual_output is None


def test_botocore_read_timeout_is_a_timeout(server: BedrockServer) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=5.0, retries=0, backoff_s=0.0)
    config = _host(server, {"read_timeout_s": 0.5})
    [row] = _run(config, TestCase(key="c", prompt="capital ratio [fault:slow]"), policy=policy)
    assert row.error_kind == "timeout" and row.error.startswith("RetryableHostError: timeout"), row.error


def test_unknown_knowledge_base_and_model(server: BedrockServer) -> None:
    [row] = _run(_host(server, {"knowledge_base_id": "KBNOTHERE"}), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "not_found" and "KBNOTHERE" in row.error
    [row] = _run(_host(server, llm_model_name="no.such-model"), TestCase(key="c", prompt="hi"))
    assert row.error_kind == "client_error" and "no.such-model" in row.error


def test_retryable_faults_are_retried_by_resolve_not_by_botocore(server: BedrockServer) -> None:
    server.plan.extend(["500", "429", None])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt=CAPITAL), policy=policy)
    assert row.error is None, row.error
    assert row.attempts == 3 and len(server.requests) == 3


def test_retry_after_is_honoured(server: BedrockServer) -> None:
    server.retry_after_s = 0.4
    server.plan.extend(["429", None])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=1, backoff_s=0.0)
    started = time.perf_counter()
    [row] = _run(_host(server), TestCase(key="c", prompt=CAPITAL), policy=policy)
    assert row.error is None and row.attempts == 2
    assert time.perf_counter() - started >= 0.4


def test_a_permanent_fault_is_not_retried(server: BedrockServer) -> None:
    server.plan.extend(["403", None])
    policy = CallPolicy(concurrency=1, timeout_s=2.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server), TestCase(key="c", prompt=CAPITAL), policy=policy)
    assert row.error_kind == "auth" and len(server.requests) == 1


@pytest.mark.timeout(120)
def test_30_cases_with_mixed_faults_lose_nothing(server: BedrockServer) -> None:
    faults = ["429", "500", "503", "slow", "drop", "garbage", "empty", "502", "424", None]
    server.plan.extend([faults[i % len(faults)] if i % 3 == 0 else None for i in range(40)])
    cases = [TestCase(key=f"c{i:02d}", prompt=f"question {i} on the capital ratio") for i in range(30)]
    policy = CallPolicy(concurrency=6, retries=2, backoff_s=0.01, timeout_s=1, breaker_failures=0)
    rows = _run(_host(server), *cases, policy=policy)
    assert [row.test_case.key for row in rows] == [case.key for case in cases]
    for row in rows:
        assert (row.error is None) != (row.actual_output is None), row
        if row.error is not None:
            assert row.error_kind in {"empty_answer", "malformed_response", "rate_limited", "server_error",
                                      "timeout", "connection"}, row.error  # fmt: skip
    assert sum(row.error is None for row in rows) >= 25
    assert len(server.requests) > 30  # retries happened


def test_the_example_host_file_works_against_the_local_server(server: BedrockServer) -> None:
    example = ModelHost.model_validate_json(EXAMPLE.read_text())
    assert example.type == "bedrock-kb" and example.secret_ref is None
    [row] = _run(example.model_copy(update={"url": server.url}), TestCase(key="c", prompt=CAPITAL))
    assert row.error is None, row.error
    assert row.context and row.context[0].doc_uri.startswith("s3://")


def test_cost_comes_from_the_price_table_of_the_configured_model(server: BedrockServer) -> None:
    config = _host(server, prices={MODEL: {"input_per_1k": 1.0, "output_per_1k": 2.0}})
    [row] = _run(config, TestCase(key="c", prompt=CAPITAL))
    assert row.error is None, row.error
    assert row.cost == pytest.approx(row.input_tokens / 1000 * 1.0 + row.output_tokens / 1000 * 2.0)
