"""A finished run's documents, wherever they are: its export folder, or (when that folder is gone, e.g. on
another machine) the versions its run id wrote to the artifact store.

Reports, comparisons and the ZIP archive are rendered from these documents only, so a report can be rebuilt
for any past run and two runs are compared on exactly what each one published."""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assay.storage.artifacts import ArtifactStore
from assay.storage.runs import RUN_FILE, RunStates

RunKind = Literal["evaluation", "mrm"]
MRM_EVALUATION = "automated-evaluation"
"""The sub-folder of an MRM run that holds its automated evaluation, in the evaluate flow's layout."""

_READ = (".json", ".md", ".txt")


@dataclass
class RunDocuments:
    """Relative name (``summary.json``, ``groundedness/results.json``) -> parsed JSON, or text for .md/.txt."""

    source: str
    documents: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> RunKind:
        return "mrm" if "workflow_summary.json" in self.documents or "report.json" in self.documents else "evaluation"

    @property
    def run_id(self) -> str | None:
        for name, key in ((RUN_FILE, "run_id"), ("summary.json", "run_id"), ("workflow_summary.json", "run_id")):
            document = self.documents.get(name)
            if isinstance(document, dict) and document.get(key):
                return str(document[key])
        return None

    def get(self, name: str, default: Any = None) -> Any:
        return self.documents.get(name, default)

    def evaluation(self) -> "RunDocuments":
        """The evaluation part: the run itself for ``assay evaluate``, the automated-evaluation step for MRM."""
        if self.kind == "evaluation":
            return self
        prefix = f"{MRM_EVALUATION}/"
        return RunDocuments(
            source=f"{self.source} ({MRM_EVALUATION})",
            documents={name[len(prefix) :]: doc for name, doc in self.documents.items() if name.startswith(prefix)},
        )

    def evaluator_ids(self) -> list[str]:
        """Evaluators with a ``<id>/results.json``, in the order the summary lists them (else sorted)."""
        present = {
            name.split("/")[0] for name in self.documents if name.count("/") == 1 and name.endswith("/results.json")
        }
        summary = self.documents.get("summary.json") or {}
        ordered = [evaluator_id for evaluator_id in summary.get("evaluators", []) if evaluator_id in present]
        return ordered + sorted(present - set(ordered))

    def results(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for evaluator_id in self.evaluator_ids():
            yield evaluator_id, self.documents[f"{evaluator_id}/results.json"]


def read_folder(folder: Path) -> RunDocuments:
    """Every JSON, Markdown and text file under ``folder``; a file that does not parse is named in the error."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such run folder")
    documents: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in _READ or path.name.endswith(".tmp"):
            continue
        relative = path.relative_to(folder).as_posix()
        text = path.read_text(encoding="utf-8")
        try:
            documents[relative] = json.loads(text) if path.suffix == ".json" else text
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from error
    if "summary.json" not in documents and "workflow_summary.json" not in documents:
        raise ValueError(f"{folder}: not an Assay run folder (no summary.json or workflow_summary.json)")
    return RunDocuments(source=str(folder), documents=documents)


def read_from_store(run_id: str, store: ArtifactStore) -> RunDocuments:
    """The latest version each artifact name got from ``run_id``, named relative to its evaluation or MRM
    prefix (``evaluations/NAME/`` or ``mrm/NAME/``); an MRM run's evaluation lands under automated-evaluation/.
    Every version is looked at, not only each name's latest: a later run may have written newer ones."""
    found: dict[str, bytes] = {}
    for name in store.names(""):
        if not name.endswith(_READ):
            continue
        mine = [manifest.version for manifest in store.versions(name) if manifest.producer.run_id == run_id]
        if mine:
            found[name] = store.get(name, max(mine))[1]
    if not found:
        raise ValueError(f"run {run_id!r}: nothing in the artifact store was written by this run")
    mrm = any(name.startswith("mrm/") for name in found)
    documents: dict[str, Any] = {}
    for name, data in found.items():
        root, _, rest = name.partition("/")
        relative = rest.partition("/")[2]
        if mrm and root == "evaluations":
            relative = f"{MRM_EVALUATION}/{relative}"
        documents[relative] = json.loads(data) if name.endswith(".json") else data.decode("utf-8")
    return RunDocuments(source=f"artifact store, run {run_id}", documents=documents)


def load_run(
    reference: str | Path, *, runs: RunStates | None = None, store: ArtifactStore | None = None
) -> RunDocuments:
    """A run by folder, or by run id: its export folder while that still holds this run (a later run exported
    to the same folder replaces its files, and is then not this run), else the artifact store."""
    path = Path(reference)
    if path.is_dir():
        return read_folder(path)
    run_id = str(reference)
    record = runs.get(run_id) if runs is not None else None
    if record is not None and record.export and Path(record.export).is_dir():
        try:
            exported = read_folder(Path(record.export))
        except ValueError:  # half-written by a later run, or not a run folder any more
            exported = None
        if exported is not None and exported.run_id == run_id:
            return exported
    if store is not None:
        return read_from_store(run_id, store)
    raise FileNotFoundError(f"{reference}: neither a run folder nor a known run id")
