"""Tasks of the re-validation flow: gate expressions checked before anything runs, and the run judged
against its approved baseline, with the outcome published beside the run and in its Artifacts tab."""

from pathlib import Path
from typing import Any

from assay.artifacts.failed_requests import failed_requests_limit
from assay.artifacts.gates import catalogue_from_specs, parse_gates, validate_gates
from assay.artifacts.publish import publish_documents
from assay.artifacts.report.run_documents import load_run
from assay.artifacts.revalidation import assess, recorded_verdict, verdict_words
from assay.evaluators import evaluator_class
from assay.tasks.control_room import prefect_key
from assay.tasks.timing import library_time
from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from assay.baselines import Baselines, pinned
from assay.config import load_settings
from assay.models.artifacts import Producer
from assay.models.gates import FailOn, Gate
from assay.models.revalidation import BaselineApproval, BaselineCandidate
from assay.storage.factory import open_artifact_store, open_object_store
from assay.storage.runs import RunStates


@task(name="check-gates", cache_policy=NO_CACHE, persist_result=False)
def checked_gates(expressions: list[str], evaluator_ids: list[str]) -> list[Gate]:
    """A gate naming no metric of the chosen evaluators fails the run before any host is asked."""
    with library_time():
        gates = parse_gates(expressions)
        if gates:
            validate_gates(gates, catalogue_from_specs(evaluator_class(e).full_spec() for e in evaluator_ids))
        return gates


@task(name="compare-with-baseline", cache_policy=NO_CACHE, persist_result=False)
def judge_against_baseline(
    name: str,
    run_id: str,
    baseline_run_id: str | None,
    gates: list[Gate],
    fail_on: FailOn | None,
    fail_on_regression: bool,
    max_failed_requests_share: float | None = None,
) -> dict[str, Any]:
    """Compare the run with the deployment's pinned baseline, else the one a person approved for ``name``;
    publish verdict, gates and comparison under ``<export>/revalidation/``; return the verdict. Failed requests
    are judged on ``max_failed_requests_share`` (empty: the default share), never by ``fail_on``."""
    with library_time():
        settings = load_settings()
        object_store, artifact_store = open_object_store(settings), open_artifact_store(settings)
        runs = RunStates(object_store)
        record = runs.get(run_id)
        if record is None:
            raise ValueError(f"run {run_id!r} has no state in the store")
        current = load_run(record.export, runs=runs, store=artifact_store)
        approval = pinned(name, baseline_run_id) if baseline_run_id else Baselines(object_store).get(name)
        note = ""
        if approval is None:
            note = (f"No baseline is approved for '{name}' yet: after reviewing a run, approve it with "
                    f"`assay baseline approve RUN_ID --name {name} --by YOUR_NAME`.")  # fmt: skip
        elif approval.run_id == run_id:
            note, approval = "This run is the approved baseline itself: nothing to compare.", None
        baseline = (approval, load_run(approval.run_id, runs=runs, store=artifact_store)) if approval else None
        verdict, documents, markdown = assess(
            name,
            current,
            baseline=baseline,
            gates=gates,
            fail_on=fail_on,
            fail_on_regression=fail_on_regression,
            baseline_note=note,
            failed_requests=failed_requests_limit(max_failed_requests_share),
        )
        publish_documents(
            documents,
            out_dir=Path(record.export),
            artifact_store=artifact_store,
            prefix=f"evaluations/{name}",
            producer=Producer(flow="revalidation", run_id=run_id),
        )
    create_markdown_artifact(
        markdown=markdown,
        key=prefect_key("revalidation", name),
        description=f"Re-validation {name}: {verdict.verdict}",
        _sync=True,
    )
    return verdict.model_dump(mode="json")


@task(name="baseline-candidate", cache_policy=NO_CACHE, persist_result=False)
def baseline_candidate(run_id: str, name: str) -> BaselineCandidate:
    """What an approver is shown, by label: the run's own re-validation verdict, the run (refused here, before
    any pause, unless known and complete) and the baseline it would replace."""
    with library_time():
        settings = load_settings()
        object_store = open_object_store(settings)
        baselines = Baselines(object_store)
        record = baselines.approvable(run_id)
        current = baselines.get(name)
        try:
            documents = load_run(run_id, runs=RunStates(object_store), store=open_artifact_store(settings))
        except (FileNotFoundError, ValueError):  # nothing exported or stored: no verdict to show
            documents = None
        verdict = recorded_verdict(documents) if documents is not None else None
    finished = record.finished_at.isoformat(timespec="seconds") if record.finished_at else "not recorded"
    replaces = "none (the first baseline of this name)"
    if current is not None:
        at = current.approved_at.isoformat(timespec="seconds")
        replaces = f"run {current.run_id}, approved by {current.approved_by} at {at}"
    facts = {
        "Verdict": verdict_words(verdict),
        "Run": record.run_id,
        "Re-validation": name,
        "Workflow": record.workflow or "not recorded",
        "Finished": finished,
        "Export": record.export or "not recorded",
        "Replaces": replaces,
    }
    return BaselineCandidate(facts=facts, run_verdict=verdict.verdict if verdict else None)


@task(name="approve-baseline", cache_policy=NO_CACHE, persist_result=False)
def approve_baseline(
    name: str, run_id: str, approver: str, note: str, candidate: BaselineCandidate, failed_run_reason: str = ""
) -> BaselineApproval:
    """Recorded "via prefect-ui", with the run's verdict and, for a failed run, the approver's reason."""
    with library_time():
        return Baselines(open_object_store(load_settings())).approve(
            name, run_id, approver, note, via="prefect-ui", run_verdict=candidate.run_verdict,
            failed_run_reason=failed_run_reason,
        )  # fmt: skip
