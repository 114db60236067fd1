"""The ``assay`` executable: hand the command to a warm worker when one serves this environment, else run it
here (and leave a worker behind for the next command). See ``assay.cli.warm``. A command run here ends without
the interpreter's teardown (``assay.cli.exit``)."""

import os
import sys

from assay.cli import warm
from assay.cli.exit import exit_now, exit_status


def main() -> None:
    environ = dict(os.environ)  # as the shell gave it: a command sets Prefect variables while it runs
    use_worker = warm.enabled(environ)
    if use_worker:
        code = warm.run_in_worker(sys.argv, environ)
        if code is not None:
            sys.exit(code)
    from assay.cli.main import app

    try:
        app(prog_name="assay")
        status = 0
    except SystemExit as done:  # how typer ends every command, failed or not
        status = exit_status(done.code)
    finally:
        if use_worker and sys.argv[1:2] != ["server"]:  # 'server stop' must not leave a worker behind
            warm.start_worker(environ)
    exit_now(status)
