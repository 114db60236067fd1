"""The ``assay`` executable: hand the command to a warm worker when one serves this environment, else run it
here (and leave a worker behind for the next command). See ``assay.apps.cli.warm``. A command run here ends without
the interpreter's teardown (``assay.apps.cli.exit``).

SIGTERM (a CI time-out, ``kill``) ends a command run here as Ctrl-C does, so its clean-up still runs: Prefect
marks the flow run crashed and stops the temporary server it started, which SIGTERM's default (dying on the
spot) left running with nobody to stop it. The status is then 143 (128 + SIGTERM), as a shell reports it.
"""

import os
import signal
import sys
from types import FrameType

from assay.apps.cli import warm
from assay.apps.cli.exit import exit_now, exit_status


class _Termination:
    received = False


def _interrupt_on_sigterm(signum: int, frame: FrameType | None) -> None:
    _Termination.received = True
    raise KeyboardInterrupt


def main() -> None:
    environ = dict(os.environ)  # as the shell gave it: a command sets Prefect variables while it runs
    use_worker = warm.enabled(environ)
    if use_worker:
        code = warm.run_in_worker(sys.argv, environ)
        if code is not None:
            sys.exit(code)
    from assay.apps.cli.main import app

    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    try:
        app(prog_name="assay")
        status = 0
    except SystemExit as done:  # how typer ends every command, failed or not
        status = exit_status(done.code)
    finally:
        if use_worker and sys.argv[1:2] != ["server"]:  # 'server stop' must not leave a worker behind
            warm.start_worker(environ)
    exit_now(128 + signal.SIGTERM if _Termination.received else status)
