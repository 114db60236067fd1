"""The http-rag host against a local FastAPI server on 127.0.0.1: templates, secrets, mappings, errors."""

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from assay.hosts import CallPolicy, HostError, resolve
from assay.hosts.http_rag import HttpRag, RetryableHttpError, render_template
from assay.models import ConversationTurn, ModelHost, TestCase
from assay.testing.local_app import running_app

SECRET = "sk-http-rag-test-secret-123456"
MAPPING = {
    "answer": "$.data.answer",
    "contexts": "$.data.docs",
    "context_text": "$.body",
    "context_doc_uri": "$.meta.uri",
    "context_score": "$.relevance",
    "input_tokens": "$.usage.in",
    "output_tokens": "$.usage.out",
    "cost": "$.usage.cost",
    "model_name": "$.model",
}


def _app() -> FastAPI:
    app = FastAPI()
    hits = {"flaky": 0}

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, Any]:
        body = await request.json()
        return {
            "data": {
                "answer": f"You asked: {body.get('q')}",
                "docs": [
                    {"body": "Branches open at 9.", "meta": {"uri": "docs/hours.md"}, "relevance": 0.9},
                    {"body": "Closed on Sundays.", "meta": {"uri": "docs/sunday.md"}, "relevance": "0.5"},
                ],
            },
            "usage": {"in": 12, "out": 4, "cost": 0.002},
            "model": "bank-rag-v2",
            "received": body,
            "authorization": request.headers.get("authorization"),
        }

    @app.get("/search")
    async def search(q: str) -> dict[str, Any]:
        return {"data": {"answer": f"got {q}"}}

    @app.post("/status/{code}")
    async def status(code: int) -> JSONResponse:
        return JSONResponse({"error": f"status {code}"}, status_code=code, headers={"Retry-After": "1"})

    @app.post("/flaky")
    async def flaky() -> JSONResponse:
        hits["flaky"] += 1
        if hits["flaky"] == 1:
            return JSONResponse({"error": "busy"}, status_code=503)
        return JSONResponse({"data": {"answer": "second time lucky"}})

    @app.post("/text")
    async def text() -> PlainTextResponse:
        return PlainTextResponse("<html>oops</html>")

    @app.post("/other-shape")
    async def other_shape() -> dict[str, Any]:
        return {"result": "x", "meta": {}}

    @app.post("/empty")
    async def empty() -> dict[str, Any]:
        return {"data": {"answer": "  "}}

    @app.post("/slow")
    async def slow() -> dict[str, Any]:
        await asyncio.sleep(2)
        return {"data": {"answer": "late"}}

    return app


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_app(_app()) as url:
        yield url


def _host(url: str, **settings: Any) -> HttpRag:
    merged = {"mapping": MAPPING, "body": {"q": "{{prompt}}"}, **settings}
    return HttpRag(ModelHost(key="bank-rag", type="http-rag", url=url, settings=merged))


CASE = TestCase(
    key="c1",
    prompt="When do you open?",
    turns=[ConversationTurn(role="user", content="Hi"), ConversationTurn(role="assistant", content="Hello")],
    variables={"branch": "Zurich", "lang": "en"},
)


def test_template_renders_prompt_conversation_and_variables() -> None:
    template = {
        "q": "{{prompt}}",
        "history": "{{conversation}}",
        "all": "{{variables}}",
        "nested": [{"where": "branch {{variables.branch}} ({{ variables.lang }})"}, 3, None],
        "inline": "turns: {{conversation}}",
    }
    rendered = render_template(template, CASE)
    assert rendered["q"] == "When do you open?"
    assert rendered["history"] == [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    assert rendered["all"] == {"branch": "Zurich", "lang": "en"}
    assert rendered["nested"] == [{"where": "branch Zurich (en)"}, 3, None]
    assert json.loads(rendered["inline"].removeprefix("turns: "))[0]["content"] == "Hi"


def test_template_unknown_variable_is_a_configuration_error_on_the_case() -> None:
    with pytest.raises(HostError) as raised:
        render_template({"q": "{{variables.missing}}"}, CASE)
    assert raised.value.kind == "configuration" and "missing" in str(raised.value)
    with pytest.raises(HostError, match="unknown placeholder"):
        render_template({"q": "{{question}}"}, CASE)


def test_answer_maps_answer_contexts_tokens_cost_and_model(base_url: str) -> None:
    host = _host(
        f"{base_url}/echo",
        body={"q": "{{prompt}}", "history": "{{conversation}}", "branch": "{{variables.branch}}"},
    )
    answer = asyncio.run(host.answer(CASE))
    assert answer.actual_output == "You asked: When do you open?"
    assert [(c.text, c.doc_uri, c.score, c.rank) for c in answer.context] == [
        ("Branches open at 9.", "docs/hours.md", 0.9, 0),
        ("Closed on Sundays.", "docs/sunday.md", 0.5, 1),
    ]
    assert (answer.input_tokens, answer.output_tokens, answer.cost) == (12, 4, 0.002)
    assert answer.model_name == "bank-rag-v2"
    received = json.loads(answer.raw_response or "")["received"]
    assert received["history"][1] == {"role": "assistant", "content": "Hello"}
    assert received["branch"] == "Zurich"


def test_get_sends_the_body_as_query_parameters(base_url: str) -> None:
    host = _host(f"{base_url}/search", method="GET", mapping={"answer": "$.data.answer"})
    assert asyncio.run(host.answer(CASE)).actual_output == "got When do you open?"


def test_header_secret_is_resolved_per_call_and_never_in_the_row(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BANK_RAG_TOKEN", SECRET)
    host = _host(f"{base_url}/echo", headers={"Authorization": "Bearer ${BANK_RAG_TOKEN}"})
    assert SECRET not in host.config.model_dump_json()
    [row] = asyncio.run(resolve(host, [("t", CASE)]))
    assert row.error is None
    raw = json.loads(row.raw_response or "")
    assert raw["authorization"] == "Bearer [REDACTED:BANK_RAG_TOKEN]"  # the server saw it; the row does not
    assert SECRET not in row.model_dump_json()


def test_missing_header_env_var_is_recorded_on_the_case(base_url: str) -> None:
    os.environ.pop("ASSAY_TEST_UNSET_TOKEN", None)
    host = _host(f"{base_url}/echo", headers={"X-Key": "${ASSAY_TEST_UNSET_TOKEN}"})
    [row] = asyncio.run(resolve(host, [("t", CASE)]))
    assert row.error_kind == "configuration" and "ASSAY_TEST_UNSET_TOKEN" in (row.error or "")


@pytest.mark.parametrize(
    ("code", "kind"), [(401, "auth"), (403, "auth"), (404, "not_found"), (400, "client_error"), (422, "client_error")]
)
def test_permanent_statuses_map_to_kinds(base_url: str, code: int, kind: str) -> None:
    host = _host(f"{base_url}/status/{code}")
    with pytest.raises(HostError) as raised:
        asyncio.run(host.answer(CASE))
    assert raised.value.kind == kind and str(code) in str(raised.value)


@pytest.mark.parametrize(("code", "kind"), [(429, "rate_limited"), (500, "server_error"), (503, "server_error")])
def test_retryable_statuses_raise_plain_exceptions(base_url: str, code: int, kind: str) -> None:
    host = _host(f"{base_url}/status/{code}")
    with pytest.raises(RetryableHttpError) as raised:
        asyncio.run(host.answer(CASE))
    assert not isinstance(raised.value, HostError)
    assert raised.value.kind == kind and raised.value.retry_after == 1.0


def test_resolve_retries_a_5xx(base_url: str) -> None:
    host = _host(f"{base_url}/flaky", mapping={"answer": "$.data.answer"})
    [row] = asyncio.run(resolve(host, [("t", CASE)], CallPolicy(retries=2, backoff_s=0)))
    assert row.actual_output == "second time lucky" and row.attempts == 2


def test_non_json_reply_is_malformed(base_url: str) -> None:
    host = _host(f"{base_url}/text")
    with pytest.raises(HostError) as raised:
        asyncio.run(host.answer(CASE))
    assert raised.value.kind == "malformed_response" and "not JSON" in str(raised.value)


def test_answer_path_selecting_nothing_names_path_and_keys(base_url: str) -> None:
    [row] = asyncio.run(resolve(_host(f"{base_url}/other-shape"), [("t", CASE)]))
    assert row.error_kind == "malformed_response"
    assert "$.data.answer" in (row.error or "") and "'result', 'meta'" in (row.error or "")
    assert row.attempts in (0, 1)


def test_empty_answer(base_url: str) -> None:
    with pytest.raises(HostError) as raised:
        asyncio.run(_host(f"{base_url}/empty").answer(CASE))
    assert raised.value.kind == "empty_answer"


def test_timeout_and_connection_refused_are_retried_then_recorded(base_url: str) -> None:
    slow = _host(f"{base_url}/slow", timeout_s=0.2)
    [row] = asyncio.run(resolve(slow, [("t", CASE)], CallPolicy(retries=1, backoff_s=0)))
    assert row.error_kind == "timeout" and row.attempts == 2
    from assay.testing.local_app import free_port

    dead = _host(f"http://127.0.0.1:{free_port()}/rag")
    [row] = asyncio.run(resolve(dead, [("t", CASE)], CallPolicy(retries=0)))
    assert row.error_kind == "connection"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({}, "settings.mapping"),
        ({"mapping": {"answer": "$.a"}, "method": "DELETE"}, "settings.method"),
        ({"mapping": {"answer": "$[[["}}, "settings.mapping.answer"),
        ({"mapping": {"answer": "$.a", "typo": "$.b"}}, "settings.mapping.typo"),
        ({"mapping": {"answer": "$.a"}, "timeout_s": 0}, "settings.timeout_s"),
    ],
)
def test_invalid_settings_fail_at_creation_naming_the_field(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError) as raised:
        HttpRag(ModelHost(key="k", type="http-rag", url="http://127.0.0.1:1/x", settings=settings))
    message = str(raised.value)
    assert message.startswith(f"host k: {field}") and "\n" not in message


def test_url_is_required() -> None:
    with pytest.raises(ValueError, match="url"):
        HttpRag(ModelHost(key="k", type="http-rag", settings={"mapping": {"answer": "$.a"}}))


def test_spec_declares_the_type() -> None:
    assert HttpRag.type == HttpRag.spec.id == "http-rag"
    assert HttpRag.spec.returns_context and HttpRag.spec.model_type == "rag"
