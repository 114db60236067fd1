"""The artifacts of one run: every version it produced, whatever later runs published over them.

A run's reviewer decisions are artifacts too, named ``runs/<run id>/decisions/<step>.json``, so compliance
finds, fetches, verifies and bundles them like any report.
"""

from assay.models.artifacts import ArtifactManifest
from assay.storage.artifacts import ArtifactStore

DECISIONS_FLOW = "mrm-review"


def decision_artifact_name(run_id: str, step: str) -> str:
    return f"runs/{run_id}/decisions/{step}.json"


def run_versions(store: ArtifactStore, run_id: str, prefix: str = "") -> list[ArtifactManifest]:
    """Every committed version under ``prefix`` whose producer is ``run_id``, by name then version."""
    return [
        manifest
        for name in store.names(prefix)
        for manifest in store.versions(name)
        if manifest.producer.run_id == run_id
    ]
