"""A local OpenAI-compatible LLM judge on 127.0.0.1: the real ``openai`` client talks to it, and its verdicts
are derived from the request by the rules in ``assay/testing/judge_rules`` (one per template id).

It serves chat completions (``/v1/chat/completions``) with every fault of ``assay/testing/openai_server.py``
(429 with Retry-After, 5xx, slow, drop, garbage...) and these judge-specific ones, chosen by a marker
anywhere in the prompt (so a test case's answer can carry it):
- ``[judge:malformed]``: prose that is not JSON, every time (the repair request fails too);
- ``[judge:malformed_once]``: prose first, a valid verdict when asked to repair;
- ``[judge:wrong_schema]``: JSON that misses the schema's required fields;
- ``[judge:refusal]``: a refusal (``message.refusal``) instead of content.

Server styles: ``response_format=False`` answers 400 to a request that sends ``response_format`` (a server
without structured output); ``style="fenced"`` wraps the JSON in prose and a ```json block; ``style="tool"`` is
automatic when the request forces a tool call. ``/v1/completions`` with ``echo`` and ``logprobs`` returns
per-token log-probabilities of the prompt (a token seen earlier in the prompt is likely, -0.1; an unseen one
-3.0), unless ``logprobs=False`` (then the route answers 404, as chat-only servers do).
"""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from assay.testing.judge_rules import RULES, coverage, sections
from assay.testing.openai_server import OpenAIServer, RecordedRequest, serve_openai

JUDGE_MODEL = "judge-model"
_TITLE = re.compile(r'"title":\s*"([a-z0-9_]+)"')
_MARKER = re.compile(r"\[judge:([a-z_]+)\]")
_TOKEN = re.compile(r"\S+\s*")


@dataclass
class JudgeServer:
    response_format: bool = True
    style: Literal["json", "fenced"] = "json"
    logprobs: bool = True
    server: OpenAIServer = field(default_factory=lambda: OpenAIServer(models=(JUDGE_MODEL,)))
    force: str | None = None
    """A judge fault for every request (``malformed``, ``refusal``...), as if each prompt carried its marker."""
    verdicts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(template id, verdict) of every rule-based reply, in order."""

    def __post_init__(self) -> None:
        self.server.responder = self.respond
        self.server.app.post("/v1/completions")(self._completions)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[Any]:
        return self.server.requests

    @property
    def chat_calls(self) -> int:
        return sum(1 for request in self.server.requests if "messages" in request.body)

    def respond(self, body: dict[str, Any]) -> dict[str, Any] | Response:
        if body.get("response_format") is not None and not self.response_format:
            error = {"message": "response_format is not supported by this server", "type": "invalid_request_error",
                     "param": "response_format", "code": None}  # fmt: skip
            return JSONResponse({"error": error}, status_code=400)
        messages = body.get("messages") or []
        text = "\n".join(str(message.get("content") or "") for message in messages)
        template_id = _template_id(body, text)
        found = _MARKER.search(text)
        fault = self.force or (found.group(1) if found else None)
        repairing = any(message.get("role") == "assistant" for message in messages)
        if fault == "refusal":
            return {"content": None, "refusal": "I can't help with evaluating this content."}
        if fault == "malformed" or (fault == "malformed_once" and not repairing):
            return {"content": "I think the answer is mostly fine, but I'd rather not say more."}
        if fault == "wrong_schema":
            return {"content": json.dumps({"opinion": "fine"})}
        rule = RULES.get(template_id or "")
        if rule is None:
            return {"content": f"no rule for judge template {template_id!r}"}
        inputs = sections(messages[_first_user(messages)].get("content") or "")
        inputs["__seed__"] = str(body.get("seed"))  # lets a rule vary between repeats, as a sampled judge does
        verdict = rule(inputs)
        self.verdicts.append((template_id or "", verdict))
        payload = json.dumps(verdict)
        if body.get("tool_choice"):
            return {"tool_calls": [{"id": "call_1", "type": "function",
                                    "function": {"name": template_id, "arguments": payload}}]}  # fmt: skip
        if self.style == "fenced":
            return {"content": f"Here is my assessment.\n```json\n{payload}\n```\nLet me know if you need more."}
        return {"content": payload}

    async def _completions(self, request: Request) -> Response:
        if not self.logprobs:
            return JSONResponse({"error": {"message": "Not Found", "type": "invalid_request_error"}}, status_code=404)
        body = await request.json()
        self.server.requests.append(RecordedRequest(dict(request.headers), body, request.url.path))
        prompt = body.get("prompt") if isinstance(body.get("prompt"), str) else ""
        if self.force == "malformed" or "[judge:malformed]" in prompt:  # log-probabilities that cannot be read
            garbage = {"tokens": "?", "token_logprobs": None, "text_offset": None}
            return JSONResponse({"choices": [{"index": 0, "text": "", "logprobs": garbage, "finish_reason": "stop"}]})
        tokens = _TOKEN.findall(prompt)
        seen: set[str] = set()
        logprobs: list[float | None] = []
        offsets, position = [], 0
        for index, token in enumerate(tokens):
            word = token.strip().lower().strip(".,;:!?\"'")
            logprobs.append(None if index == 0 else (-0.1 if word in seen else -3.0))
            seen.add(word)
            offsets.append(position)
            position += len(token)
        if tokens and tokens[-1].strip() == "Yes" and "AI:" in prompt:
            logprobs[-1] = _yes_logprob(prompt)
        data: dict[str, Any] | None = (
            {"tokens": tokens, "token_logprobs": logprobs, "text_offset": offsets, "top_logprobs": None}
            if body.get("logprobs") is not None and body.get("echo") else None
        )  # fmt: skip
        echoed = prompt if body.get("echo") else ""
        return JSONResponse(
            {
                "id": "cmpl-1",
                "object": "text_completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "text": echoed, "logprobs": data, "finish_reason": "length"}],
                "usage": {"prompt_tokens": len(tokens), "completion_tokens": 0, "total_tokens": len(tokens)},
            }
        )


def _yes_logprob(prompt: str) -> float:
    """A conversation judged "Yes" (GPTScore question answering): likely when the AI's last reply shares the
    human's last question's content words, unlikely otherwise."""
    question = prompt.rsplit("Human:", 1)[-1].split("AI:", 1)[0]
    reply = prompt.rsplit("AI:", 1)[-1].rsplit("Answer:", 1)[0]
    return -0.1 if coverage(question, reply) >= 0.3 else -6.0


def _first_user(messages: list[dict[str, Any]]) -> int:
    return next(index for index, message in enumerate(messages) if message.get("role") == "user")


def _template_id(body: dict[str, Any], text: str) -> str | None:
    response_format = body.get("response_format") or {}
    if isinstance(response_format, dict) and isinstance(response_format.get("json_schema"), dict):
        return response_format["json_schema"].get("name")
    tools = body.get("tools") or []
    if tools and isinstance(tools[0], dict):
        return (tools[0].get("function") or {}).get("name")
    found = _TITLE.search(text)
    return found.group(1) if found else None


@contextmanager
def serve_judge(judge: JudgeServer | None = None) -> Iterator[JudgeServer]:
    """Run the judge on a free 127.0.0.1 port; ``judge.url`` is its base URL (``http://127.0.0.1:PORT/v1``)."""
    judge = judge or JudgeServer()
    with serve_openai(judge.server):
        yield judge
