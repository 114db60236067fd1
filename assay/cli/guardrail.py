"""``assay guardrail``: serve a guardrail configuration as a live service, or check one answer without one."""

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from assay.cli.common import console, user_errors
from assay.escaping import for_terminal

app = typer.Typer(help="The guardrail service (seed 002's real-time safety shield).", no_args_is_help=True)

ConfigOption = Annotated[
    Path, typer.Option("--config", help="Guardrail configuration (guardrails.json of an MRM run, or your own).")
]
VERDICT_STYLES = {"allow": "green", "flag": "yellow", "block": "bold red"}


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

    from assay.guardrail import service

    options = {"host": host, "port": port, "access_log": False, "log_level": "info"}
    if workers == 1:
        uvicorn.run(service.create_app(guard, max_body_bytes=max_body_bytes), **options)  # type: ignore[arg-type]
        return
    os.environ[service.CONFIG_ENV] = str(config.resolve())
    os.environ[service.MAX_BODY_ENV] = str(max_body_bytes)
    uvicorn.run("assay.guardrail.service:app_from_environment", factory=True, workers=workers, **options)  # type: ignore[arg-type]


@app.command("check")
def check(
    config: ConfigOption,
    question: Annotated[str, typer.Option(help="The user's question.")],
    answer: Annotated[str, typer.Option(help="The answer to check.")],
    context: Annotated[
        list[str] | None, typer.Option("--context", help="A retrieved context chunk (repeat for several).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
) -> None:
    """Check one answer in this process (no server) and print the verdict; exit 0 whatever the verdict."""
    from assay.guardrail.checks import Guard

    with user_errors():
        guard = Guard.from_path(config)
    result = guard.check(question, answer, context or None)
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
