"""h2ogpte-rag and h2ogpte-llm through the real ``h2ogpte`` client against a protocol-faithful local server."""

import asyncio
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.hosts import CallPolicy, create_host, host_types, register_host, resolve
from assay.hosts.h2ogpte import H2OGPTeLLM, H2OGPTeRAG
from assay.models import ModelHost, TestCase
from assay.models.suite import ConversationTurn
from assay.testing.h2ogpte_server import H2OGPTeServer, serve_h2ogpte

for _cls in (H2OGPTeRAG, H2OGPTeLLM):
    if _cls.type not in host_types():
        register_host(_cls)

SECRET = "h2o-test-5ecret-key-0123456789"
ENV = "ASSAY_TEST_H2OGPTE_KEY"
FAST = CallPolicy(concurrency=4, timeout_s=5.0, retries=0, backoff_s=0.01)


@pytest.fixture(scope="module")
def server() -> Iterator[H2OGPTeServer]:
    with serve_h2ogpte(H2OGPTeServer(api_key=SECRET, slow_s=2.0)) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server: H2OGPTeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.requests.clear()
    server.queries.clear()
    server.plan.clear()
    server.rest_plan.clear()
    server.deleted_collections.clear()
    server.deleted_sessions.clear()
    monkeypatch.setenv(ENV, SECRET)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    (tmp_path / "policy.txt").write_text("Tier 1 capital ratio is 4.5%.")
    (tmp_path / "annex.txt").write_text("Tier 2 capital.")
    (tmp_path / "fail-me.txt").write_text("unparseable")
    return tmp_path


def _host(server: H2OGPTeServer, kind: str = "h2ogpte-rag", **fields: object) -> ModelHost:
    return ModelHost(**{"key": "h2o", "type": kind, "url": server.url, "secret_ref": ENV,
                        "llm_model_name": "h2oai/h2ogpt-4096-llama2-70b-chat", **fields})  # fmt: skip


def _run(config: ModelHost, cases: list[tuple[str, TestCase]], documents=None, policy: CallPolicy = FAST):
    return asyncio.run(resolve(create_host(config), cases, policy, documents))


def test_rag_collection_per_test_answer_context_tokens_and_cleanup(server: H2OGPTeServer, docs: Path) -> None:
    settings = {"documents_dir": str(docs), "llm_args": {"temperature": 0.1}, "rag_config": {"rag_type": "rag"},
                "system_prompt": "Be brief."}  # fmt: skip
    cases = [("t1", TestCase(key="c1", prompt="tier 1 ratio?")), ("t2", TestCase(key="c2", prompt="tier 2?"))]
    documents = {"t1": ["policy.txt", "annex.txt"], "t2": ["annex.txt"]}
    rows = _run(_host(server, settings=settings), cases, documents)
    assert [row.error for row in rows] == [None, None]
    first = rows[0]
    assert first.actual_output == "answer: tier 1 ratio?"
    assert [(chunk.doc_uri, chunk.rank) for chunk in first.context] == [("policy.txt", 1), ("annex.txt", 2)]
    assert first.context[0].score == pytest.approx(0.9) and "policy.txt" in first.context[0].text
    assert [chunk.doc_uri for chunk in rows[1].context] == ["annex.txt"]
    assert (first.input_tokens, first.output_tokens, first.cost) == (13, 4, pytest.approx(0.0001))
    assert first.model_name == "h2oai/h2ogpt-4096-llama2-70b-chat"
    assert json.loads(first.raw_response)["turns"][0]["answer"] == "answer: tier 1 ratio?"
    created = [r for r in server.requests if r.path == "/api/v1/collections"]
    assert sorted(r.body["name"] for r in created) == ["assay-t1", "assay-t2"]
    query = server.queries[0]
    assert json.loads(query["llm_args"]) == {"temperature": 0.1}
    assert json.loads(query["rag_config"]) == {"rag_type": "rag"}
    assert query["system_prompt"] == "Be brief." and query["llm"] == "h2oai/h2ogpt-4096-llama2-70b-chat"
    assert len(server.deleted_collections) == 2 and len(server.deleted_sessions) == 2


def test_settings_pass_to_query_as_is(server: H2OGPTeServer, docs: Path) -> None:
    settings = {"documents_dir": str(docs), "llm": "other-llm", "include_chat_history": False,
                "pre_prompt_query": "Use these:", "tags": ["basel"]}  # fmt: skip
    [row] = _run(_host(server, settings=settings), [("t", TestCase(key="c", prompt="q"))], {"t": ["policy.txt"]})
    assert row.error is None, row.error
    query = server.queries[0]
    assert query["llm"] == "other-llm" and query["include_chat_history"] is False
    assert query["pre_prompt_query"] == "Use these:" and query["tags"] == ["basel"]
    assert row.model_name == "other-llm"


def test_a_setting_the_client_does_not_take_is_a_configuration_error(server: H2OGPTeServer) -> None:
    config = _host(server, "h2ogpte-llm", settings={"no_such_query_arg": 1})
    [row] = _run(config, [("t", TestCase(key="c", prompt="q"))])
    assert row.error_kind == "configuration" and "no_such_query_arg" in row.error


def test_existing_collection_id_uploads_nothing_and_keeps_it(server: H2OGPTeServer, docs: Path) -> None:
    [created] = _run(_host(server, settings={"documents_dir": str(docs), "keep_collections": True}),
                     [("t", TestCase(key="c", prompt="q"))], {"t": ["policy.txt"]})  # fmt: skip
    assert created.error is None and server.deleted_collections == []
    collection_id = next(iter(server.collections))
    server.requests.clear()
    [row] = _run(_host(server, settings={"collection_id": collection_id}), [("t", TestCase(key="c", prompt="q"))],
                 {"t": ["missing.txt"]})  # fmt: skip
    assert row.error is None, row.error
    assert [chunk.doc_uri for chunk in row.context] == ["policy.txt"]
    assert not any(r.path in ("/api/v1/collections", "/rpc/fs") for r in server.requests)
    assert server.deleted_collections == []


def test_llm_host_has_no_collection_and_no_context(server: H2OGPTeServer) -> None:
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="hello"))], {"t": ["ignored.txt"]})
    assert row.error is None, row.error
    assert row.actual_output == "answer: hello" and row.context == []
    assert server.sessions[json.loads(row.raw_response)["chat_session_id"]] is None
    assert not any(r.path == "/api/v1/collections" for r in server.requests)
    assert create_host(_host(server, "h2ogpte-llm")).host_spec().returns_context is False


def test_multi_turn_replays_user_turns_in_one_session(server: H2OGPTeServer) -> None:
    case = TestCase(key="c", prompt="and tier 2?", turns=[
        ConversationTurn(role="user", content="tier 1?"), ConversationTurn(role="assistant", content="4.5%"),
        ConversationTurn(role="user", content="and CET1?")])  # fmt: skip
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", case)])
    assert row.error is None, row.error
    assert [query["body"] for query in server.queries] == ["tier 1?", "and CET1?", "and tier 2?"]
    assert len({query["session_id"] for query in server.queries}) == 1
    assert row.actual_output == "answer: and tier 2?"
    transcript = json.loads(row.raw_response)["turns"]
    assert [turn["question"] for turn in transcript] == ["tier 1?", "and CET1?", "and tier 2?"]
    assert row.input_tokens == (2 + 10) + (2 + 10) + (3 + 10)  # summed over the turns


def test_missing_document_is_a_configuration_error_naming_test_and_file(server: H2OGPTeServer, docs: Path) -> None:
    cases = [("t1", TestCase(key="c1", prompt="q")), ("t1", TestCase(key="c2", prompt="q"))]
    rows = _run(_host(server, settings={"documents_dir": str(docs)}), cases, {"t1": ["policy.txt", "nope.pdf"]})
    assert all(row.error and "nope.pdf" in row.error and "'t1'" in row.error for row in rows)
    assert not any(r.path == "/api/v1/collections" for r in server.requests)  # checked before any upload


def test_failed_ingestion_names_test_and_document_and_drops_the_collection(server: H2OGPTeServer, docs: Path) -> None:
    rows = _run(_host(server, settings={"documents_dir": str(docs)}), [("t9", TestCase(key="c", prompt="q"))],
                {"t9": ["fail-me.txt"]})  # fmt: skip
    assert "fail-me.txt" in rows[0].error and "'t9'" in rows[0].error and "ingesting" in rows[0].error
    assert len(server.deleted_collections) == 1


def test_test_without_documents_and_no_collection_id_is_a_configuration_error(server: H2OGPTeServer) -> None:
    [row] = _run(_host(server), [("t", TestCase(key="c", prompt="q"))])
    assert row.error_kind == "configuration" and "collection_id" in row.error


def test_bad_key_is_auth_and_the_secret_never_reaches_a_row(server: H2OGPTeServer, monkeypatch) -> None:
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="hi"))])
    assert row.error is None
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in row.model_dump_json()
    monkeypatch.setenv(ENV, "wrong-key")
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="hi"))])
    assert row.error_kind == "auth" and "401" in row.error
    assert "wrong-key" not in row.model_dump_json()


@pytest.mark.parametrize(
    ("field", "fields"),
    [("secret_ref", {"secret_ref": None}), ("url", {"url": ""}), ("ASSAY_TEST_H2OGPTE_UNSET", {"secret_ref":
     "ASSAY_TEST_H2OGPTE_UNSET"})],
)  # fmt: skip
def test_missing_config_is_a_configuration_error_naming_the_field(server: H2OGPTeServer, field, fields) -> None:
    [row] = _run(_host(server, "h2ogpte-llm", **fields), [("t", TestCase(key="c", prompt="hi"))])
    assert row.error_kind == "configuration" and field in row.error
    assert server.requests == []


@pytest.mark.parametrize(
    ("fault", "kind", "reason"),
    [
        ("429", "rate_limited", "rate limited"),
        ("500", "server_error", "500"),
        ("503", "server_error", "503"),
        ("slow", "timeout", "no answer within"),
        ("drop", "connection", "connection"),
        ("garbage", "malformed_response", "malformed"),
        ("empty", "empty_answer", "empty"),
    ],
)
def test_websocket_faults_map_to_kinds(server: H2OGPTeServer, fault: str, kind: str, reason: str) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=1.0, retries=0, backoff_s=0.0)
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt=f"hi [fault:{fault}]"))], policy=policy)
    assert row.error_kind == kind, row.error
    assert reason in row.error and row.actual_output is None


@pytest.mark.parametrize(
    ("fault", "kind"),
    [("401", "auth"), ("404", "not_found"), ("429", "rate_limited"), ("500", "server_error"),
     ("503", "server_error"), ("drop", "connection"), ("garbage", "malformed_response")],
)  # fmt: skip
def test_rest_faults_on_the_answer_path_map_to_kinds(server: H2OGPTeServer, docs: Path, fault: str, kind: str) -> None:
    policy = CallPolicy(concurrency=1, timeout_s=3.0, retries=0, backoff_s=0.0)
    config = _host(server, settings={"documents_dir": str(docs)})
    # The chat session is created; the references call fails (4 times: the client's urllib3 layer itself retries
    # a dropped connection and a 429 with Retry-After up to 3 times).
    server.rest_plan.extend([None, fault, fault, fault, fault])
    [row] = _run(config, [("t", TestCase(key="c", prompt="hi"))], {"t": ["policy.txt"]}, policy=policy)
    assert row.error_kind == kind, row.error


def test_retryable_faults_are_retried_and_permanent_ones_are_not(server: H2OGPTeServer) -> None:
    server.plan.extend(["500", "429"])
    policy = CallPolicy(concurrency=1, timeout_s=3.0, retries=2, backoff_s=0.01)
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="hi"))], policy=policy)
    assert row.error is None and row.attempts == 3
    server.rest_plan.extend(["401", None])
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="hi"))], policy=policy)
    assert row.error_kind == "auth" and row.attempts == 1


def test_thirty_cases_with_mixed_faults_lose_nothing(server: H2OGPTeServer, docs: Path) -> None:
    server.retry_after_s = 0.01
    server.slow_s = 1.5
    faults = ["429", "500", "503", "drop", "garbage", "empty", "slow"]
    server.plan.extend([faults[i % len(faults)] if i % 3 == 0 else None for i in range(45)])
    cases = [(f"t{i % 3}", TestCase(key=f"c{i}", prompt=f"question {i}")) for i in range(30)]
    documents = {f"t{i}": ["policy.txt"] for i in range(3)}
    policy = CallPolicy(concurrency=4, retries=2, backoff_s=0.01, timeout_s=1, breaker_failures=0)
    try:
        rows = _run(_host(server, settings={"documents_dir": str(docs)}), cases, documents, policy)
    finally:
        server.retry_after_s, server.slow_s = 0.0, 2.0
    assert [row.test_case.key for row in rows] == [f"c{i}" for i in range(30)]
    for row in rows:
        assert (row.actual_output is None) != (row.error is None)
        assert row.error is None or row.error_kind not in (None, "other"), row.error
    answered = [row for row in rows if row.error is None]
    assert len(answered) >= 20, Counter(row.error_kind for row in rows)
    assert all(row.context and row.actual_output == f"answer: {row.test_case.prompt}" for row in answered)
    assert SECRET not in "".join(row.model_dump_json() for row in rows)


@pytest.mark.parametrize("name", ["h2ogpte-rag", "h2ogpte-llm"])
def test_example_host_files_work_against_the_local_server(server: H2OGPTeServer, docs: Path, monkeypatch,
                                                          name: str) -> None:  # fmt: skip
    example = Path(__file__).parents[2] / "examples" / "hosts" / f"{name}.json"
    config = ModelHost.model_validate_json(example.read_text())
    assert config.type == name and config.secret_ref
    monkeypatch.setenv(config.secret_ref, SECRET)
    monkeypatch.chdir(docs)  # documents_dir "." is the current directory
    config = config.model_copy(update={"url": server.url})
    [row] = _run(config, [("t", TestCase(key="c", prompt="hi"))], {"t": ["policy.txt"]})
    assert row.error is None, row.error
    assert bool(row.context) is (name == "h2ogpte-rag")
    assert create_host(config).host_spec().id == name


def test_the_client_runs_in_its_own_environment_and_both_pass_pip_check() -> None:
    """h2ogpte pins websockets==11.0.3 and Prefect needs 15 or newer: the client lives in .venv-h2ogpte (or the
    interpreter the settings name), never in Assay's environment, so `pip check` passes in both."""
    from assay.hosts.h2ogpte_process import h2ogpte_python

    python = h2ogpte_python()
    prefix = subprocess.run([python, "-I", "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                            timeout=120).stdout.strip()  # fmt: skip
    assert prefix and Path(prefix) != Path(sys.prefix)
    for interpreter in (sys.executable, python):
        done = subprocess.run([interpreter, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{interpreter}: {done.stdout}{done.stderr}"
    probe = "import websockets, h2ogpte; print(websockets.__version__)"
    assert subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=120).stdout.strip() == (
        "11.0.3"
    )


def test_a_missing_client_interpreter_is_a_configuration_error_on_each_case(server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ASSAY_HOSTS__H2OGPTE_PYTHON", "/nonexistent/bin/python")
    rows = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key=f"c{i}", prompt="hi")) for i in range(2)])
    assert [row.error_kind for row in rows] == ["configuration", "configuration"]
    assert "hosts.h2ogpte_python" in rows[0].error and "/nonexistent/bin/python" in rows[0].error


def test_a_client_process_that_dies_fails_its_calls_and_the_next_call_starts_a_new_one(server) -> None:  # type: ignore[no-untyped-def]
    from assay.hosts.h2ogpte_process import bridge

    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="hi"))])
    assert row.error is None
    first = bridge()
    first._process.kill()
    first._process.wait(timeout=10)
    [row] = _run(_host(server, "h2ogpte-llm"), [("t", TestCase(key="c", prompt="again"))])
    assert row.error is None and row.actual_output == "answer: again"
    assert bridge() is not first and bridge().alive
