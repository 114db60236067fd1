"""The ``assay`` executable: hand the command to a warm worker when one serves this environment, else run it
here (and leave a worker behind for the next command). See ``assay.cli.warm``."""

import os
import sys

from assay.cli import warm


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
    finally:
        if use_worker and sys.argv[1:2] != ["server"]:  # 'server stop' must not leave a worker behind
            warm.start_worker(environ)
