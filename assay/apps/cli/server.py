"""``assay server start|stop|status``: the local Prefect server Assay keeps between commands."""

import json
from collections.abc import Callable
from typing import Annotated

import typer

from assay.apps.cli.common import command_group, console, errors, user_errors
from assay.escaping import for_terminal

app = command_group("The local Prefect server that Assay's commands share.")


def connect(meanwhile: Callable[[], None] | None = None) -> Callable[[], None]:
    """Point this command's flows at a Prefect server, and return the function that waits until it answers:
    call it after the flows are imported, so a server starting now starts while they import (and while
    ``meanwhile`` runs, when it is not up yet). Says so when one is started; one that cannot be reached is a
    one-line error (``PrefectServerError`` is an ``OSError``)."""
    from assay.apps.prefect_env import connect_prefect
    from assay.config import load_settings

    server = connect_prefect(load_settings())
    if server is None:
        return lambda: None
    if server.started_now:
        errors.print(
            f"started a local Prefect server for Assay at {server.state.ui_url} (kept for later commands; "
            "'assay server stop' ends it)",
            highlight=False,
            soft_wrap=True,
        )
    return lambda: server.wait(progress=_progress, meanwhile=meanwhile)


def _progress(message: str) -> None:
    errors.print(for_terminal(message), highlight=False, soft_wrap=True)


@app.command("start")
def start() -> None:
    """Start the server (or find the one running) and print its UI address."""
    with user_errors():
        from assay.apps.prefect_env import configure_prefect
        from assay.apps.prefect_server import configured_api_url, ensure_server
        from assay.config import load_settings

        settings = load_settings()
        configure_prefect(settings)
        if (url := configured_api_url()) is not None:
            raise ValueError(f"PREFECT_API_URL is set ({url}): Assay's commands use that server, not a kept one")
        server = ensure_server(
            port=settings.prefect_server_port,
            idle_minutes=settings.prefect_server_idle_minutes,
            timeout_s=settings.prefect_server_start_timeout_s,
        )
        server.wait(progress=_progress)
    verb = "started" if server.started_now else "already running"
    console.print(f"Prefect server {verb}: UI {server.state.ui_url} (API {server.api_url})", highlight=False)


@app.command("stop")
def stop() -> None:
    """Stop the kept server (runs paused for review stay in its database for the next one)."""
    with user_errors():
        from assay.apps.prefect_env import configure_prefect
        from assay.apps.prefect_server import stop_server
        from assay.config import load_settings

        configure_prefect(load_settings())
        state = stop_server()
    console.print("no kept Prefect server was running" if state is None else f"stopped the server at {state.ui_url}")


@app.command("status")
def status(as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False) -> None:
    """Whether the kept server runs, where, since when and how long it has been idle."""
    with user_errors():
        from assay.apps.prefect_env import configure_prefect
        from assay.apps.prefect_server import configured_api_url, status
        from assay.config import load_settings

        configure_prefect(load_settings())
        info = status() | {"configured_api_url": configured_api_url()}
    if as_json:
        console.print_json(json.dumps(info))
        return
    if not info["running"]:
        console.print(f"no kept Prefect server is running (PREFECT_HOME {for_terminal(info['prefect_home'])})")
    else:
        console.print(
            f"Prefect server at {info['ui_url']}: {'answering' if info['healthy'] else 'not answering yet'}, "
            f"up {info['uptime_s']:.0f} s, idle {info['idle_s'] or 0:.0f} s, log {for_terminal(info['log'])}",
            highlight=False,
        )
    if info["configured_api_url"]:
        console.print(f"commands use PREFECT_API_URL {for_terminal(info['configured_api_url'])}", highlight=False)
