"""The deployments as ``deployments/prefect.yaml`` declares them: the single source of truth that both
``prefect deploy`` and ``python -m assay.deployments.serve`` read, so a served and a deployed flow never differ.

Loading the file is pure (YAML anchors resolved, no Prefect import); importing a deployment's flow is a
separate step because flow modules import Prefect, which must be configured first.
"""

import importlib
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]
PREFECT_FILE = Path(__file__).resolve().with_name("prefect.yaml")


@dataclass(frozen=True)
class ScheduleSpec:
    """One schedule entry of a deployment (prefect.yaml's ``cron``/``interval`` form)."""

    cron: str | None = None
    interval: float | None = None
    timezone: str | None = None
    active: bool = True


@dataclass(frozen=True)
class DeploymentSpec:
    """One deployment: its flow's entrypoint (``path/to/file.py:function``, relative to the repository root),
    its name, the parameters a run starts from and its schedules."""

    name: str
    entrypoint: str
    parameters: dict[str, Any] = field(default_factory=dict)
    schedules: tuple[ScheduleSpec, ...] = ()
    description: str | None = None
    tags: tuple[str, ...] = ()
    work_pool: str | None = None

    @property
    def module(self) -> str:
        """The entrypoint's module as an import name, e.g. ``assay.flows.mrm`` for ``flows/mrm.py:mrm_workflow``
        (the top-level folders install inside the ``assay`` namespace)."""
        path, _, _ = self.entrypoint.partition(":")
        return ".".join(("assay", *Path(path).with_suffix("").parts))

    @property
    def function(self) -> str:
        return self.entrypoint.partition(":")[2]

    def load_flow(self) -> Any:
        """Import the flow object the entrypoint names (a ``prefect.Flow``)."""
        flow = getattr(importlib.import_module(self.module), self.function, None)
        if flow is None or not hasattr(flow, "to_deployment"):
            raise ValueError(f"deployment {self.name!r}: entrypoint {self.entrypoint!r} does not name a flow")
        return flow

    def full_name(self, flow_name: str) -> str:
        """Prefect's ``FLOW/DEPLOYMENT`` name, as ``prefect deployment run`` and the UI show it."""
        return f"{flow_name}/{self.name}"


def load_prefect_file(path: Path = PREFECT_FILE) -> dict[str, Any]:
    """The parsed file with its anchors and merge keys resolved."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or not isinstance(document.get("deployments"), list):
        raise ValueError(f"{path}: expected a mapping with a 'deployments' list")
    return document


def load_deployments(path: Path = PREFECT_FILE) -> list[DeploymentSpec]:
    """Every deployment of the file, in file order."""
    specs = []
    for index, entry in enumerate(load_prefect_file(path)["deployments"]):
        where = f"{path}: deployments[{index}]"
        if not isinstance(entry, dict) or not entry.get("name") or ":" not in str(entry.get("entrypoint", "")):
            raise ValueError(f"{where}: expected 'name' and 'entrypoint' (path/to/file.py:flow_function)")
        specs.append(
            DeploymentSpec(
                name=str(entry["name"]),
                entrypoint=str(entry["entrypoint"]),
                parameters=deepcopy(entry.get("parameters") or {}),
                schedules=tuple(_schedule(item, f"{where}.schedules") for item in entry.get("schedules") or []),
                description=entry.get("description"),
                tags=tuple(entry.get("tags") or ()),
                work_pool=(entry.get("work_pool") or {}).get("name"),
            )
        )
    return specs


def _schedule(item: Any, where: str) -> ScheduleSpec:
    if not isinstance(item, dict) or ("cron" in item) == ("interval" in item):
        raise ValueError(f"{where}: each schedule needs exactly one of 'cron' or 'interval'")
    unknown = set(item) - {"cron", "interval", "timezone", "active"}
    if unknown:
        raise ValueError(f"{where}: unsupported schedule keys {sorted(unknown)}")
    return ScheduleSpec(
        cron=item.get("cron"),
        interval=float(item["interval"]) if "interval" in item else None,
        timezone=item.get("timezone"),
        active=bool(item.get("active", True)),
    )
