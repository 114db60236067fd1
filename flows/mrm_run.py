"""The bookkeeping of one MRM run, kept out of flows/mrm.py so the flow reads like the workflow's table of
contents: the run's state in the object store (id, parameters, content fingerprints), its export folder, the
reviewers' decisions, publishing each step's documents, and the per-step counts and log lines."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.artifacts.step_summaries import StepSummary
from assay.evaluators.selection import run_parameters
from assay.flows.attempts import OpenRun, open_run
from assay.flows.review import ReviewContext
from assay.tasks import mrm as steps
from assay.tasks.control_room import progress_part, publish_step_summary, step_progress
from assay.tasks.evaluate import ANSWERS_SHARE, build_lab, evaluate, publish, select
from assay.tasks.timing import step_library_seconds, step_scope
from prefect.runtime import flow_run
from prefect.utilities.annotations import quote

from assay.config import load_settings
from assay.corpora import sample_data_path
from assay.hosts.files import host_configs
from assay.models import ModelHost, TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.workflow import MrmParameters
from assay.mrm.approvals import DecisionStore, load_approvals
from assay.storage.artifacts import ArtifactStore
from assay.storage.factory import open_object_store, open_signer
from assay.storage.runs import RunRecord, StepTimings, fingerprint, folder_fingerprint


@dataclass
class WorkflowRun:
    opened: OpenRun
    prefix: str
    review: ReviewContext
    hosts: list[ModelHost]
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.opened.id

    @property
    def record(self) -> RunRecord:
        return self.opened.record

    @property
    def out_dir(self) -> Path:
        return self.opened.out_dir

    @classmethod
    def open(
        cls,
        *,
        corpus: str | None,
        hosts: list[str | dict[str, Any]] | None,
        evaluators: list[str] | None,
        out: str | None,
        name: str,
        seed: int,
        interactive: bool,
        approvals: str | None,
        parameters: MrmParameters,
        run_id: str | None,
    ) -> "WorkflowRun":
        """Continue the unfinished run of the same inputs (same corpus content, hosts, evaluators, step
        parameters, seed and name) or start a new one, which inherits no decision of any other run."""
        settings = load_settings()
        store = open_object_store(settings)
        configs = host_configs(hosts)
        approvals_file = load_approvals(Path(approvals)) if approvals else None
        corpus_folder = Path(corpus) if corpus else sample_data_path() / "corpus"
        fingerprints = {
            "corpus": folder_fingerprint(corpus_folder),
            "hosts": fingerprint([host.model_dump(mode="json") for host in configs]),
            "parameters": fingerprint(parameters.model_dump(mode="json"), evaluators, seed, name),
        }
        given = {
            "corpus": corpus,
            "hosts": [host.model_dump(mode="json") for host in configs],
            "evaluators": evaluators,
            "name": name,
            "seed": seed,
            "interactive": interactive,
            "approvals": approvals,
            **parameters.model_dump(mode="json"),
        }
        opened = open_run(
            workflow="mrm-workflow",
            inputs_fingerprint=fingerprint(fingerprints),
            run_id=run_id,
            out=out,
            parameters=given,
            fingerprints=fingerprints,
        )
        record, out_dir = opened.record, opened.out_dir
        for note in parameters.deprecation_notes:
            print(f"run {record.run_id}: {note}")
        print(
            f"run {record.run_id}: corpus {corpus_folder} ({fingerprints['corpus'][:12]}), "
            f"{len(configs)} host(s), export to {out_dir}"
        )
        review = ReviewContext(
            store=DecisionStore(ArtifactStore(store, signer=open_signer(settings)), record.run_id),
            interactive=interactive,
            approvals=approvals_file,
            page_size=parameters.review.page_size,
        )
        return cls(opened=opened, prefix=f"mrm/{name}", review=review, hosts=configs)

    @contextmanager
    def step(self, step: str) -> Iterator[dict[str, Any]]:
        """Attribute the step's library time to it (kept per attempt in the store) and log its outcome."""
        counts = self.counts.setdefault(step, {})
        print(f"{step}: started")
        with step_scope(step):
            yield counts
        attempt = str(flow_run.id or "local")
        StepTimings(open_object_store(load_settings()), self.id).record(attempt, step_library_seconds(attempt))
        shown = ", ".join(f"{key} {value}" for key, value in counts.items() if key != "artifacts")
        print(f"{step}: done ({shown})")

    def step_seconds(self) -> dict[str, float]:
        """Seconds each step's library code computed for, over every attempt of the run."""
        return StepTimings(open_object_store(load_settings()), self.id).totals()

    def publish(self, step: str, documents: dict[str, Any]) -> None:
        """Write the step's documents to the export folder and as versions in the artifact store."""
        prepared = {
            f"{step}/{key}": value.model_dump(mode="json") if hasattr(value, "model_dump") else value
            for key, value in documents.items()
        }
        names = steps.publish_step(step, quote(prepared), str(self.out_dir), self.prefix, self.id)
        self.counts.setdefault(step, {})["artifacts"] = names

    def show(self, step: str, summary: StepSummary) -> None:
        """The step's summary and tables in the run's Artifacts tab (stable keys ``mrm-<step>-...``)."""
        publish_step_summary(step, summary, f"{self.prefix}/{self.id}")

    def evaluate(
        self, suite: TestSuite, evaluators: list[str] | None, run_key: str
    ) -> tuple[TestLab, list[EvaluationResult], list[str], dict[str, str]]:
        """Ask the hosts (answers checkpointed per run key) and run every selected evaluator, each its own
        task run named after the evaluator. They fill the rest of the step's progress bar (after perturbing,
        in a robustness step): the answers ANSWERS_SHARE of it, each evaluator an equal part of the rest."""
        start = step_progress().fraction
        answered = start + (1.0 - start) * ANSWERS_SHARE
        with progress_part(start, answered):
            lab = build_lab(quote(suite), self.hosts, run_key)
        requested = evaluators or ["recommended"]
        selected, skipped = select(quote(lab), requested)
        share = (1.0 - answered) / max(1, len(selected))
        results = []
        for index, evaluator_id in enumerate(selected):
            with progress_part(answered + share * index, answered + share * (index + 1)):
                results.append(evaluate(quote(lab), evaluator_id, run_parameters(requested, evaluator_id), run_key))
        return lab, results, selected, skipped

    def publish_evaluation(
        self, lab: TestLab, results: list[EvaluationResult], skipped: dict[str, str], name: str
    ) -> dict[str, Any]:
        return publish(quote(lab), quote(results), str(self.out_dir / "automated-evaluation"), name, self.id, skipped)

    def finish(self) -> None:
        self.opened.finish()
