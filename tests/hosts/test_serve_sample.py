"""``assay serve-sample`` answers through the http-rag host, the raw ``openai`` client, and ``hosts check``."""

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.apps.serve_sample import MODEL_NAME, create_app
from assay.embeddings import EmbeddingEngine
from assay.hosts import create_host, register_host, resolve
from assay.hosts.http_rag import HttpRag
from assay.models import ConversationTurn, ModelHost, TestCase
from assay.testing.local_app import free_port, running_app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"
QUESTION = "What are your opening hours?"


@pytest.fixture(scope="module")
def sample_url(engine: EmbeddingEngine) -> Iterator[str]:
    with running_app(create_app(lambda: engine)) as url:
        yield url


@pytest.fixture(scope="module", autouse=True)
def _http_rag_registered() -> None:
    register_host(HttpRag)  # idempotent for the same class; the integrator adds it to the builtins


def _example(name: str, url: str) -> ModelHost:
    data = json.loads((EXAMPLES / name).read_text())
    data["url"] = data["url"].replace("http://127.0.0.1:8765", url)
    return ModelHost.model_validate(data)


def test_rag_endpoint_through_the_example_http_rag_host(sample_url: str) -> None:
    host = create_host(_example("http-rag.json", sample_url))
    case = TestCase(
        key="c", prompt=QUESTION, turns=[ConversationTurn(role="user", content="Hello")], variables={"x": "1"}
    )
    [row] = asyncio.run(resolve(host, [("t", case)]))
    assert row.error is None, row.error
    assert row.actual_output and row.model_name == MODEL_NAME
    assert row.context and all(chunk.doc_uri and chunk.score is not None for chunk in row.context)
    assert row.input_tokens and row.output_tokens
    assert json.loads(row.raw_response or "")["sources"][0]["text"] == row.context[0].text


def test_chat_completions_through_the_raw_openai_client(sample_url: str) -> None:
    client = openai.OpenAI(base_url=f"{sample_url}/v1", api_key="not-needed", max_retries=0)
    completion = client.chat.completions.create(
        model=MODEL_NAME,
        messages=[
            {"role": "system", "content": "You are a bank assistant."},
            {"role": "user", "content": QUESTION},
        ],
    )
    assert completion.model == MODEL_NAME
    assert completion.choices[0].message.content
    assert completion.choices[0].finish_reason == "stop"
    usage = completion.usage
    assert usage is not None and usage.completion_tokens == len(completion.choices[0].message.content.split())
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert [model.id for model in client.models.list()] == [MODEL_NAME]


def test_chat_completions_without_user_message_is_400(sample_url: str) -> None:
    client = openai.OpenAI(base_url=f"{sample_url}/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "system", "content": "hi"}])


def test_chat_completions_through_an_http_rag_host(sample_url: str) -> None:
    """The same endpoint mapped by JSONPath: the http-rag host can speak to OpenAI-style servers too."""
    host = HttpRag(
        ModelHost(
            key="chat",
            type="http-rag",
            url=f"{sample_url}/v1/chat/completions",
            settings={
                "body": {"model": MODEL_NAME, "messages": [{"role": "user", "content": "{{prompt}}"}]},
                "mapping": {
                    "answer": "$.choices[0].message.content",
                    "input_tokens": "$.usage.prompt_tokens",
                    "output_tokens": "$.usage.completion_tokens",
                    "model_name": "$.model",
                },
            },
        )
    )
    answer = asyncio.run(host.answer(TestCase(key="c", prompt=QUESTION)))
    assert answer.actual_output and answer.model_name == MODEL_NAME and answer.output_tokens


def test_hosts_check_against_serve_sample(sample_url: str, tmp_path: Path) -> None:
    text = (EXAMPLES / "http-rag.json").read_text().replace("http://127.0.0.1:8765", sample_url)
    file = tmp_path / "http-rag.json"
    file.write_text(text)
    result = CliRunner().invoke(app, ["hosts", "check", str(file)])
    assert result.exit_code == 0, result.output
    assert "answer: " in result.output and "context found: 3 chunk(s)" in result.output
    assert f"model name: {MODEL_NAME}" in result.output and "latency:" in result.output


def test_hosts_check_against_a_dead_port_diagnoses_connection_refused(tmp_path: Path) -> None:
    text = (EXAMPLES / "http-rag.json").read_text().replace("8765", str(free_port()))
    file = tmp_path / "dead.json"
    file.write_text(text)
    result = CliRunner().invoke(app, ["hosts", "check", str(file)])
    assert result.exit_code == 1
    assert "connection refused" in result.output


def test_hosts_check_mapping_mismatch_names_the_keys(sample_url: str, tmp_path: Path) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(
        f'key = "bad"\ntype = "http-rag"\nurl = "{sample_url}/rag"\n[settings.mapping]\nanswer = "$.reply.text"\n'
    )
    result = CliRunner().invoke(app, ["hosts", "check", str(file)])
    assert result.exit_code == 1
    assert "schema mismatch" in result.output and "'answer', 'sources'" in result.output


def test_hosts_check_bad_file_is_one_line(tmp_path: Path) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps({"key": "k", "type": "http-rag", "url": "http://127.0.0.1:1/", "settings": {}}))
    result = CliRunner().invoke(app, ["hosts", "check", str(file)])
    assert result.exit_code == 2
    assert "settings.mapping" in result.output


def test_serve_sample_is_a_command_of_the_real_cli() -> None:
    result = CliRunner().invoke(app, ["serve-sample", "--help"])
    assert result.exit_code == 0 and "--port" in result.output


def test_hosts_check_diagnoses_dns_tls_401_and_an_unknown_model(sample_url: str, tmp_path: Path) -> None:
    """The probe's diagnoses, each from a real failure: a name that does not resolve (``.invalid`` never does),
    TLS spoken to a plain-HTTP server, a key the server refuses, and a model the server does not serve."""
    from assay.testing.openai_server import OpenAIServer, serve_openai

    def check(host: dict[str, object], name: str) -> str:
        file = tmp_path / f"{name}.json"
        file.write_text(json.dumps(host))
        result = CliRunner().invoke(app, ["hosts", "check", str(file), "--timeout", "20"])
        assert result.exit_code == 1, result.output
        return " ".join(result.output.split())

    plain = {"key": "h", "type": "openai-compatible", "llm_model_name": MODEL_NAME}
    assert "DNS:" in check({**plain, "url": "http://assay-check.invalid/v1"}, "dns")
    assert "TLS:" in check({**plain, "url": sample_url.replace("http://", "https://") + "/v1"}, "tls")
    with serve_openai(OpenAIServer(api_key="right-key")) as server:
        keyed = {**plain, "url": server.url, "secret_ref": "ASSAY_TEST_CHECK_KEY"}
        try:
            os.environ["ASSAY_TEST_CHECK_KEY"] = "wrong-key"
            refused = check(keyed, "auth")
            os.environ["ASSAY_TEST_CHECK_KEY"] = "right-key"
            unknown = check({**keyed, "llm_model_name": "no-such-model"}, "model")
        finally:
            del os.environ["ASSAY_TEST_CHECK_KEY"]
    assert "401/403" in refused and "wrong-key" not in refused
    assert "404" in unknown and "no-such-model" in unknown
