"""Choosing where the evaluate flow's tasks run: in the flow's process (the default) or on Dask, through
Prefect's own ``prefect-dask`` task runner (a local cluster of N worker processes, or any running scheduler).

One rule for every way a run starts (``assay evaluate``, a served deployment, a worker-run one): the run's
``dask_address`` / ``dask_workers`` parameters choose; left empty (None), the settings ``ASSAY_DASK_ADDRESS`` /
``ASSAY_DASK_WORKERS`` of the process running the flow do; neither: no Dask.

Importing this module imports neither Prefect nor Dask, so the CLI can check the choice before any flow starts.
"""

import importlib.util
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect.task_runners import TaskRunner

DASK_EXTRA = "pip install 'assay[dask]'"
CLI_NAMES = ("--dask-address", "--dask-workers")
PARAMETER_NAMES = ("dask_address", "dask_workers")
SETTING_NAMES = ("ASSAY_DASK_ADDRESS", "ASSAY_DASK_WORKERS")
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ws|wss)://)?[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


def dask_choice(address: str, workers: int, names: tuple[str, str] = CLI_NAMES) -> str | None:
    """Check a Dask selection (``address`` of a scheduler, or ``workers`` for a local cluster); returns a
    one-line description, or None when Dask is not selected. ``ValueError`` says what is wrong, naming the
    option, parameter or setting (``names``: address's, workers') the values came from."""
    address = address.strip()
    address_name, workers_name = names
    if not address and workers == 0:
        return None
    if workers < 0:
        raise ValueError(f"{workers_name} must be 0 (no Dask) or more, got {workers}")
    if address and workers:
        raise ValueError(f"give {address_name} (a running scheduler) or {workers_name} (a local cluster), not both")
    if address and not _ADDRESS.match(address):
        raise ValueError(f"{address_name} {address!r} is not a scheduler address such as tcp://10.0.0.5:8786")
    missing = [name for name in ("distributed", "prefect_dask") if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"Dask scale-out needs {' and '.join(missing)}, which are not installed: {DASK_EXTRA}")
    return f"Dask scheduler {address}" if address else f"local Dask cluster of {workers} worker process(es)"


@dataclass(frozen=True)
class ScaleOut:
    """A run's checked choice: Dask (``address`` or ``workers``) or not, the shard size, and what chose it."""

    address: str
    workers: int
    shard_size: int
    description: str
    chosen_by: str

    @property
    def on_dask(self) -> bool:
        return bool(self.address or self.workers)

    def line(self) -> str:
        """What the run's log says about it."""
        if not self.on_dask:
            sharding = f", shards of {self.shard_size} test cases on the flow's task runner" if self.shard_size else ""
            return f"scale-out: {self.description} ({self.chosen_by}){sharding}"
        return f"scale-out: {self.description} (chosen by {self.chosen_by}), shards of {self.shard_size} test cases"


def choose_scale_out(
    address: str | None,
    workers: int | None,
    shard_size: int,
    names: tuple[str, str] = PARAMETER_NAMES,
) -> ScaleOut:
    """The one owner of a run's sharding and scale-out (the evaluate flow and ``assay evaluate`` both ask it):
    the choice from its ``address`` / ``workers`` (``names`` says what they are called), else from the
    settings when both are None. On Dask a ``shard_size`` of 0 means ``ASSAY_SHARD_SIZE`` (250), as
    ``assay evaluate --dask-workers N`` without ``--shard-size`` does. ``ValueError`` names what is wrong."""
    from assay.config import load_settings

    if shard_size < 0:
        raise ValueError(f"{'shard_size' if names == PARAMETER_NAMES else '--shard-size'} must be 0 (no shards) "
                         f"or more, got {shard_size}")  # fmt: skip
    settings = load_settings()
    origin = "parameter" if names == PARAMETER_NAMES else "option"
    if address is None and workers is None:
        address, workers, names, origin = settings.dask_address, settings.dask_workers, SETTING_NAMES, "setting"
    address, workers = (address or "").strip(), workers or 0
    choice = dask_choice(address, workers, names)
    if choice is None:
        if origin == "setting":
            reason = f"default: no {'/'.join(PARAMETER_NAMES)} parameter or ASSAY_DASK_* setting"
        else:
            reason = f"{origin} {names[1]}={workers}"
        return ScaleOut("", 0, shard_size, "no Dask", reason)
    return ScaleOut(
        address,
        workers,
        shard_size or settings.shard_size,
        choice,
        f"{origin} {names[0] if address else names[1]}",
    )


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


def where_they_ran(what: str, futures: Iterable[Any]) -> str | None:
    """A log line naming the Dask workers that ran ``futures`` (resolved prefect-dask futures: a result stays
    on the worker that computed it), or None when none of them ran on Dask."""
    distributed = sys.modules.get("distributed")  # not imported: nothing ran on Dask
    if distributed is None:
        return None
    wrapped = [getattr(future, "wrapped_future", None) for future in futures]
    dask_futures = [future for future in wrapped if isinstance(future, distributed.Future)]
    if not dask_futures:
        return None
    holders = dask_futures[0].client.who_has(dask_futures)
    workers = sorted({worker for addresses in holders.values() for worker in addresses})
    return f"{len(dask_futures)} {what} task(s) ran on {len(workers)} Dask worker(s): {', '.join(workers)}"
