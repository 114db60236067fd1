"""The evaluate flow on Dask: host calls and evaluators in shards on a running scheduler (``dask_address``, here a
local cluster of two worker processes) give the results of the default in-process run, and the shard tasks really
run on the Dask workers. tests/deployments/test_dask_deployment.py runs the served deployment on Dask."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.flows.evaluate import evaluate_flow
from assay.flows.scale_out import dask_choice, dask_task_runner

distributed = pytest.importorskip("distributed")

EVALUATORS = ["text_matching", "answer_semantic_similarity", "classification"]
HOSTS = ["sample-rag", "sample-rag-keyword"]


@pytest.fixture(scope="module")
def cluster() -> Iterator["distributed.LocalCluster"]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as running:
        yield running


def _scores(out: Path, evaluator_id: str) -> tuple[list[dict], dict]:
    """What the evaluator decided per row (not what the host took: durations differ between two runs). The
    retrieval scores the sample RAG reports are kept to 4 decimals: a question embedded in a batch of another
    size can differ in the 6th (BLAS picks other kernels), which is not a different decision."""
    document = json.loads((out / evaluator_id / "results.json").read_text())
    kept = []
    for row in document["results"]:
        row = {key: value for key, value in row.items() if key not in ("actual_duration", "lab_row")}
        row["context_meta"] = [
            {**meta, "score": round(meta["score"], 4)} if "score" in meta else meta
            for meta in row.get("context_meta") or []
        ]
        kept.append(row)
    return kept, {model["key"]: model.get("aggregates", model) for model in document["models"]}


def test_sharded_run_on_two_dask_workers_equals_the_default_run(
    small_suite: Path, tmp_path: Path, cluster: "distributed.LocalCluster"
) -> None:
    plain = evaluate_flow(
        out=str(tmp_path / "plain"), suite=str(small_suite), hosts=HOSTS, evaluators=EVALUATORS, name="plain"
    )
    with distributed.Client(cluster) as client, distributed.get_task_stream(client) as stream:
        sharded = evaluate_flow(
            out=str(tmp_path / "dask"),
            suite=str(small_suite),
            hosts=HOSTS,
            evaluators=EVALUATORS,
            name="dask",
            shard_size=2,
            dask_address=cluster.scheduler_address,
        )
    assert sharded["run_id"] != plain["run_id"]
    for evaluator_id in EVALUATORS:
        assert _scores(tmp_path / "dask", evaluator_id) == _scores(tmp_path / "plain", evaluator_id), evaluator_id
    names = [task["key"] for task in stream.data]
    workers = {task["worker"] for task in stream.data}
    assert workers == set(cluster.scheduler_info["workers"]) and len(workers) == 2
    # six cases in shards of two: three lab shards, and three shards per evaluator
    assert sum(name.startswith("build_lab") for name in names) == 3, names
    assert sum(name.startswith("evaluate") for name in names) == 3 * len(EVALUATORS), names


def test_the_dask_choice_is_checked_before_any_flow() -> None:
    assert dask_choice("", 0) is None and dask_task_runner("", 0) is None
    assert dask_choice("tcp://10.0.0.5:8786", 0) == "Dask scheduler tcp://10.0.0.5:8786"
    assert "2 worker" in (dask_choice("", 2) or "")
    with pytest.raises(ValueError, match="not both"):
        dask_choice("tcp://10.0.0.5:8786", 2)
    with pytest.raises(ValueError, match="not a scheduler address"):
        dask_choice("http://scheduler", 0)
