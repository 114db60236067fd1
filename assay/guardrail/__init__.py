"""The live guardrail (seed 002's real-time "safety shield"): a guardrail configuration applied to answers
before they reach users, as a library (``Guard``), a service (``assay guardrail serve``) and its clients.

Importing the package stays light: the clients need only httpx, so a RAG application that imports
``assay.guardrail.Client`` loads no evaluator and no model."""

from typing import TYPE_CHECKING, Any

from assay.guardrail.client import AsyncClient, Client, GuardrailError

if TYPE_CHECKING:
    from assay.guardrail.checks import Guard

__all__ = ["AsyncClient", "Client", "Guard", "GuardrailError"]


def __getattr__(name: str) -> Any:
    if name == "Guard":
        from assay.guardrail.checks import Guard

        return Guard
    raise AttributeError(name)
