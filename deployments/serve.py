"""Serve Assay's deployments from this process, without a work pool or worker.

    python -m deployments.serve          (Assay's kept local server, or the one PREFECT_API_URL names)
    python -m deployments.serve --deployment revalidation --cron "0 7 * * *" --out /data/assay

The deployments, their parameters and schedules come from ``deployments/prefect.yaml`` (the file
``prefect deploy`` reads too), so serving and deploying register the same thing. Runs execute with the
repository root as working directory, where the file's relative paths point. The UI then lists them under
Deployments, where "Run" opens a form with every flow parameter (the MRM step parameters as nested fields).
"""

import argparse
import inspect
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from assay.deployments.definitions import PREFECT_FILE, REPOSITORY_ROOT, DeploymentSpec, ScheduleSpec, load_deployments

from assay.apps.prefect_env import configure_prefect, connect_prefect
from assay.config import load_settings
from assay.storage.runs import RUN_ID_PLACEHOLDER


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--deployment",
        action="append",
        default=None,
        metavar="NAME",
        help="A deployment to serve, by name ('revalidation') or FLOW/NAME; repeatable. Default: all of them.",
    )
    parser.add_argument(
        "--cron",
        default=None,
        help="Replace the schedule of the served deployments that have one, e.g. '0 6 * * 1' (Mondays 06:00 UTC).",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="Results root: each run writes to ROOT/<deployment name>/<run id> instead of its prefect.yaml folder.",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="Delete same-named deployments that 'prefect deploy' registered for a work pool, then serve them.",
    )
    parser.add_argument("--list", action="store_true", help="Print the deployments and their schedules, then exit.")
    return parser.parse_args(argv)


def select_deployments(specs: list[DeploymentSpec], wanted: list[str] | None) -> list[DeploymentSpec]:
    """The specs named in ``wanted`` (deployment name or FLOW/NAME), all when ``wanted`` is empty. Only the
    candidates' flows are imported, so one flow that fails to import does not keep the others from serving."""
    if not wanted:
        return specs
    chosen: list[DeploymentSpec] = []
    for name in wanted:
        flow_name, _, deployment_name = name.rpartition("/")
        matches = [
            spec
            for spec in specs
            if spec.name == deployment_name and (not flow_name or spec.load_flow().name == flow_name)
        ]
        if not matches:
            known = ", ".join(spec.name for spec in specs)
            raise SystemExit(f"no deployment named {name!r} in {PREFECT_FILE.name}; known: {known}")
        chosen.extend(spec for spec in matches if spec not in chosen)
    return chosen


def effective_schedules(spec: DeploymentSpec, cron: str | None) -> tuple[ScheduleSpec, ...]:
    """``--cron`` replaces a scheduled deployment's schedules (keeping its timezone); unscheduled ones stay so."""
    if cron is None or not spec.schedules:
        return spec.schedules
    return (ScheduleSpec(cron=cron, timezone=spec.schedules[0].timezone),)


def effective_parameters(spec: DeploymentSpec, out_root: Path | None) -> dict[str, Any]:
    """The file's parameters, with ``--out``'s folder for the flows that write results (an ``out`` parameter):
    a flow without one (``approve-baseline``) would refuse the run with a signature mismatch."""
    parameters = dict(spec.parameters)
    if out_root is not None and writes_results(spec):
        parameters["out"] = str(out_root / spec.name / RUN_ID_PLACEHOLDER)
    return parameters


def writes_results(spec: DeploymentSpec) -> bool:
    return "out" in inspect.signature(spec.load_flow().fn).parameters


def prefect_schedule(item: ScheduleSpec) -> Any:
    """The ``prefect.schedules`` object for one schedule entry (the loader guarantees cron xor interval)."""
    from prefect.schedules import Cron, Interval

    if item.interval is not None:
        return Interval(timedelta(seconds=item.interval), timezone=item.timezone, active=item.active)
    return Cron(str(item.cron), timezone=item.timezone, active=item.active)


def build_deployments(args: argparse.Namespace) -> list[Any]:
    """Runner deployments (``prefect.deployments.runner.RunnerDeployment``) for the selected specs."""
    configure_prefect(load_settings())
    selected = select_deployments(load_deployments(), args.deployment)
    if args.cron is not None and not any(spec.schedules for spec in selected):
        raise SystemExit("--cron replaces existing schedules, but none of the selected deployments has one")
    out_root = args.out.resolve() if args.out is not None else None
    deployments = []
    for spec in selected:
        schedules = [prefect_schedule(item) for item in effective_schedules(spec, args.cron)]
        deployments.append(
            spec.load_flow().to_deployment(
                name=spec.name,
                parameters=effective_parameters(spec, out_root),
                schedules=schedules or None,
                description=spec.description,
                tags=list(spec.tags),
            )
        )
    return deployments


def describe(deployments: list[Any]) -> str:
    """One line per deployment: ``FLOW/NAME``, then its schedules (cron and timezone) or "no schedule"."""
    lines = []
    for deployment in deployments:
        schedules = [
            f"{getattr(item.schedule, 'cron', item.schedule)} ({getattr(item.schedule, 'timezone', None) or 'UTC'})"
            for item in deployment.schedules or []
        ]
        lines.append(f"{deployment.flow_name}/{deployment.name}\t{', '.join(schedules) or 'no schedule'}")
    return "\n".join(lines)


def take_over_deployed(deployments: list[Any], replace: bool) -> None:
    """A name registered by ``prefect deploy`` keeps its worker-only storage when serve updates it, and its runs
    then crash; so such names are refused, or with ``--replace`` deleted first so serve registers them afresh."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        for deployment in deployments:
            full_name = f"{deployment.flow_name}/{deployment.name}"
            try:
                existing = client.read_deployment_by_name(full_name)
            except ObjectNotFound:
                continue
            if existing.work_pool_name is None and not existing.pull_steps:
                continue  # served before: serve updates it in place
            if not replace:
                raise SystemExit(
                    f"{full_name} is registered for work pool {existing.work_pool_name!r} (prefect deploy); serve it"
                    f" with --replace, or run 'prefect deployment delete {full_name}' first"
                )
            client.delete_deployment(existing.id)
            print(f"deleted the work-pool deployment {full_name}; serving it from this process")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.out is not None:
        args.out = args.out.resolve()  # before the working directory changes
    os.chdir(REPOSITORY_ROOT)  # runs inherit it: prefect.yaml's relative paths are relative to the repository
    # Before Prefect is imported: without PREFECT_API_URL the deployments go to Assay's kept local server,
    # which stays up while they are served.
    server = None if args.list else connect_prefect(load_settings())
    deployments = build_deployments(args)
    if args.list:
        print(describe(deployments))
        return
    if server is not None:
        print(f"serving on the local Prefect server at {server.state.ui_url}", flush=True)
        server.wait(progress=lambda message: print(message, flush=True))
    take_over_deployed(deployments, args.replace)
    from prefect import serve

    serve(*deployments)


if __name__ == "__main__":
    main()
