"""``assay guardrail``: serve a guardrail configuration as a live service, or check one answer without one."""

import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assay.apps.cli.common import command_group, console, errors, user_errors
from assay.escaping import for_terminal

if TYPE_CHECKING:
    from assay.guardrail.checks import Guard
    from assay.models.guardrail import CheckResult

app = command_group("The guardrail service (seed 002's real-time safety shield).")

ConfigOption = Annotated[
    Path, typer.Option("--config", help="Guardrail configuration (guardrails.json of an MRM run, or your own).")
]
VERDICT_STYLES = {"allow": "green", "flag": "yellow", "block": "bold red"}
CHECK_TIMEOUT_S = 300.0


@app.command("serve")
def serve(
    config: ConfigOption,
    host: Annotated[
        str, typer.Option(help="Interface to bind; keep 127.0.0.1 unless a proxy fronts it.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8700,
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", min=1, help="Largest request body accepted; larger ones get 413.")
    ] = 1024 * 1024,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes; each loads its own models.")] = 1,
) -> None:
    """Serve POST /check (verdict allow / flag / block with reasons), GET /healthz and GET /readyz."""
    from assay.guardrail.checks import Guard

    with user_errors():
        guard = Guard.from_path(config)  # a bad file fails here, in one line, before a port is taken
    import uvicorn

    from assay.apps import guardrail_service as service

    options = {"host": host, "port": port, "access_log": False, "log_level": "info"}
    if workers == 1:
        uvicorn.run(service.create_app(guard, max_body_bytes=max_body_bytes), **options)  # type: ignore[arg-type]
        return
    os.environ[service.CONFIG_ENV] = str(config.resolve())
    os.environ[service.MAX_BODY_ENV] = str(max_body_bytes)
    uvicorn.run("assay.apps.guardrail_service:app_from_environment", factory=True, workers=workers, **options)  # type: ignore[arg-type]


@app.command("check")
def check(
    config: ConfigOption,
    question: Annotated[str, typer.Option(help="The user's question.")],
    answer: Annotated[str, typer.Option(help="The answer to check.")],
    context: Annotated[
        list[str] | None, typer.Option("--context", help="A retrieved context chunk (repeat for several).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    timeout: Annotated[
        float,
        typer.Option(min=0.001, help="Seconds to wait for the verdict, loading the guard's models included."),
    ] = CHECK_TIMEOUT_S,
) -> None:
    """Check one answer in this process (no server) and print the verdict; exit 0 whatever the verdict, 1 when
    no verdict came within --timeout."""
    from assay.guardrail.checks import Guard

    with user_errors():
        guard = Guard.from_path(config)
    result = _checked_within(guard, question, answer, context or None, timeout)
    if as_json:
        console.print_json(json.dumps(result.model_dump(mode="json")))
        return
    style = VERDICT_STYLES[result.verdict]
    console.print(f"verdict: [{style}]{result.verdict}[/]", highlight=False)
    for reason in result.reasons:
        console.print(f"  {for_terminal(reason)}", highlight=False)
    for item in result.evaluators:
        if item.status != "scored":
            console.print(f"  {item.evaluator_id}: {item.status}: {for_terminal(item.reason or '')}", highlight=False)


def _checked_within(
    guard: "Guard", question: str, answer: str, context: list[str] | None, seconds: float
) -> "CheckResult":
    """The guard's verdict, or exit 1 with what it was doing when ``seconds`` ran out.

    Most of a one-off check is loading the models (importing torch and sentence-transformers, reading the
    weights: about 10 s on an idle machine, minutes on a busy one), not checking: no service is called. Python
    cannot stop that load, so it runs in a daemon thread the command stops waiting for."""
    from assay.budget import TimeBudgetExceeded

    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def work() -> None:
        try:
            outcome["result"] = guard.check(question, answer, context, time_budget_s=seconds)
        except TimeBudgetExceeded as error:
            outcome["error"] = error
        except Exception as error:  # an unexpected failure: reported as one line by the CLI's group
            outcome["failure"] = error

    worker = threading.Thread(target=work, name="guardrail-check", daemon=True)
    worker.start()
    worker.join(seconds)
    if "failure" in outcome:
        raise outcome["failure"]
    if "result" in outcome:
        return outcome["result"]
    waited = time.monotonic() - started
    doing = str(outcome["error"]) if "error" in outcome else _loading(guard)
    errors.print(
        f"[bold red]no verdict within {waited:.1f}s[/] (--timeout {seconds:g}): {for_terminal(doing)}",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(code=1)


def _loading(guard: "Guard") -> str:
    """What a guard still loading is loading, and how to make that faster."""
    from assay.config import load_settings
    from assay.evaluators.registry import evaluator_class

    settings = load_settings()
    users = [name for name in guard.evaluator_ids if "embeddings" in evaluator_class(name).spec.needs]
    if not users:
        return "the guard was still loading its evaluators' models; raise --timeout on a busy machine"
    backend = settings.guardrail_embedding_backend
    slow = (
        "importing torch and sentence-transformers and reading the weights takes most of a one-off check (about "
        "10 s on an idle machine, minutes on a busy one)"
        if backend == "torch"
        else "the first use converts the model once into the cache folder (about 10 s), later loads take under 1 s"
    )
    return (
        f"the guard was still loading the embedding model {settings.embedding_model!r} ({backend} backend) "
        f"that {', '.join(users)} needs: {slow}; raise --timeout, or run `assay guardrail serve` to load it once"
    )
