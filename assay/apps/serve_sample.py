"""``assay serve-sample``: the built-in sample RAG behind HTTP, so host files can be tried end to end with no
account anywhere.

Two protocols over the same system:

- ``POST /v1/chat/completions``: OpenAI chat completions (no streaming); the last user message is the
  question, earlier messages the conversation. Model name ``assay-sample-rag``; usage counts words.
- ``POST /rag``: an in-house style endpoint, ``{"question": ..., "history": [{role, content}, ...]}`` ->
  ``{"answer": ..., "sources": [{"text", "uri", "score"}], "usage": {...}, "model": ...}``
  (see ``examples/hosts/http-rag.json``).
"""

import itertools
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from assay.embeddings.engine import Embedder
from assay.hosts.sample_rag import SampleRag
from assay.models import ConversationTurn, ModelHost, TestCase

MODEL_NAME = "assay-sample-rag"
DEFAULT_PORT = 8765


class RagRequest(BaseModel):
    question: str = Field(min_length=1)
    history: list[ConversationTurn] = Field(default_factory=list)


class ChatMessage(BaseModel):
    role: str
    content: str | None = None


class ChatRequest(BaseModel):
    model: str = MODEL_NAME
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


def _default_embedder() -> Embedder:
    from assay.config import load_settings
    from assay.embeddings import shared_engine

    settings = load_settings()
    return shared_engine(settings.embedding_model, settings.cache_path.resolve())


def create_app(embedder: Callable[[], Embedder] | None = None) -> FastAPI:
    """The app; ``embedder`` builds the embedding engine the sample RAG retrieves with (Assay's by default)."""
    rag = SampleRag(ModelHost(key=MODEL_NAME, type=SampleRag.type), embedder or _default_embedder)
    counter = itertools.count()
    app = FastAPI(title="Assay sample RAG", version="1")

    async def ask(question: str, history: list[ConversationTurn]) -> Any:
        case = TestCase(key=f"request-{next(counter)}", prompt=question, turns=history)
        return await rag.answer(case)

    @app.post("/rag")
    async def rag_endpoint(request: RagRequest) -> dict[str, Any]:
        answer = await ask(request.question, request.history)
        return {
            "answer": answer.actual_output,
            "sources": [{"text": chunk.text, "uri": chunk.doc_uri, "score": chunk.score} for chunk in answer.context],
            "usage": {"input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens},
            "model": MODEL_NAME,
        }

    @app.post("/v1/chat/completions")
    async def chat_completions(request: ChatRequest) -> dict[str, Any]:
        if request.stream:
            raise HTTPException(status_code=400, detail="streaming is not supported by the sample server")
        user = [index for index, message in enumerate(request.messages) if message.role == "user"]
        if not user:
            raise HTTPException(status_code=400, detail="messages: no user message")
        last = user[-1]
        history = [
            ConversationTurn(role=message.role, content=message.content or "")  # type: ignore[arg-type]
            for message in request.messages[:last]
            if message.role in ("system", "user", "assistant", "tool")
        ]
        answer = await ask(request.messages[last].content or "", history)
        prompt_tokens = answer.input_tokens or 0
        completion_tokens = answer.output_tokens or 0
        return {
            "id": f"chatcmpl-sample-{next(counter)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL_NAME,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.actual_output},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "assay"}]}

    return app


def serve(host: str = "127.0.0.1", port: int = DEFAULT_PORT, embedder: Callable[[], Embedder] | None = None) -> None:
    """Run the app with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(embedder), host=host, port=port, log_level="info")
