"""Choosing where the evaluate flow's tasks run: in the flow's process (the default) or on Dask, through
Prefect's own ``prefect-dask`` task runner (a local cluster of N worker processes, or any running scheduler).

Importing this module imports neither Prefect nor Dask, so the CLI can check the choice before any flow starts.
"""

import importlib.util
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prefect.task_runners import TaskRunner

DASK_EXTRA = "pip install 'assay[dask]'"
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ws|wss)://)?[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


def dask_choice(address: str, workers: int) -> str | None:
    """Check a Dask selection (``address`` of a scheduler, or ``workers`` for a local cluster); returns a
    one-line description, or None when Dask is not selected. ``ValueError`` says what is wrong."""
    address = address.strip()
    if not address and workers == 0:
        return None
    if workers < 0:
        raise ValueError(f"--dask-workers must be 0 (no Dask) or more, got {workers}")
    if address and workers:
        raise ValueError("give --dask-address (a running scheduler) or --dask-workers (a local cluster), not both")
    if address and not _ADDRESS.match(address):
        raise ValueError(f"--dask-address {address!r} is not a scheduler address such as tcp://10.0.0.5:8786")
    missing = [name for name in ("distributed", "prefect_dask") if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"Dask scale-out needs {' and '.join(missing)}, which are not installed: {DASK_EXTRA}")
    return f"Dask scheduler {address}" if address else f"local Dask cluster of {workers} worker process(es)"


def dask_task_runner(address: str, workers: int) -> "TaskRunner | None":
    """The task runner for a checked selection (see :func:`dask_choice`), or None for Prefect's default."""
    if dask_choice(address, workers) is None:
        return None
    from prefect_dask import DaskTaskRunner

    if address.strip():
        return DaskTaskRunner(address=address.strip())
    return DaskTaskRunner(
        cluster_class="distributed.LocalCluster",
        cluster_kwargs={
            "n_workers": workers,
            "threads_per_worker": 1,
            "processes": True,
            "host": "127.0.0.1",
            "dashboard_address": None,
        },
    )
