"""The evaluate flow: build the test lab, run the evaluators, publish the results."""

from pathlib import Path
from typing import Any

from prefect import flow
from prefect.utilities.annotations import quote

from assay.config import load_settings
from assay.formats import import_file
from assay.hosts import default_host_config
from assay.models import ModelHost, TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.judges import JudgeEndpoint, JudgeRunOptions
from assay.runs import RunStates, export_folder, fingerprint
from assay.storage.factory import open_object_store
from evaluators import Services, build_evaluator
from evaluators.selection import run_parameters
from evaluators.shards import shard_lab, shard_suite, unshardable_reason
from flows.attempts import claim_run
from tasks.evaluate import build_lab, evaluate, join, merge, publish, select
from tasks.report import REPORT_FILE, link_report

DEFAULT_EVALUATORS = ["answer_semantic_similarity", "text_matching"]


def _host_config(host: str | dict[str, Any]) -> ModelHost:
    return default_host_config(host) if isinstance(host, str) else ModelHost.model_validate(host)


@flow(name="evaluate", log_prints=True, persist_result=False)
def evaluate_flow(
    out: str | None = None,
    suite: str | None = None,
    suite_format: str = "auto",
    lab: str | None = None,
    lab_format: str = "auto",
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[str] | None = None,
    evaluator_parameters: dict[str, dict[str, Any]] | None = None,
    name: str | None = None,
    run_id: str | None = None,
    judge: dict[str, Any] | None = None,
    judge_options: dict[str, Any] | None = None,
    shard_size: int = 0,
) -> dict[str, Any]:
    """Evaluate a suite against hosts (``suite`` + ``hosts``) or a test lab's precomputed answers (``lab``).

    ``judge`` is the LLM judge endpoint (``JudgeEndpoint``: no secret, only the key's variable name), else the
    one in Assay's settings; ``judge_options`` sets repeats, the cascade and a budget (``JudgeRunOptions``).
    ``out`` is the export folder (``{run_id}`` in it is replaced by the run id); by default each run gets its
    own, ``<assay home>/exports/<run id>``, so two runs (a weekly re-validation) never mix their files.

    ``shard_size`` 0 runs one task per evaluator over the whole lab. N > 0 asks the hosts and runs each
    evaluator in shards of N test cases, all submitted at once to the flow's task runner (a ``DaskTaskRunner``
    from ``flows.scale_out``: ``evaluate_flow.with_options(task_runner=...)``), then merges them in order."""
    if (suite is None) == (lab is None):
        raise ValueError("give exactly one of 'suite' (with hosts) or 'lab'")
    if shard_size < 0:
        raise ValueError(f"shard_size must be 0 (no shards) or more, got {shard_size}")
    evaluator_ids = evaluators or DEFAULT_EVALUATORS
    parameters = evaluator_parameters or {}
    judge_endpoint = JudgeEndpoint.model_validate(judge) if judge is not None else load_settings().judge
    judge = judge_endpoint.model_dump(mode="json") if judge_endpoint.configured else None
    judge_options = JudgeRunOptions.model_validate(judge_options or {}).model_dump(mode="json")
    for evaluator_id, values in parameters.items():  # a typo fails here, before any host is asked
        build_evaluator(evaluator_id, Services(), **values)
    if suite is not None:
        test_suite = import_file(Path(suite), suite_format)
        if not isinstance(test_suite, TestSuite):
            raise ValueError(f"{suite} holds a test lab; pass it as 'lab'")
        host_configs = [_host_config(host) for host in hosts or ["sample-rag"]]
        inputs = fingerprint(test_suite.model_dump(mode="json"), [h.model_dump(mode="json") for h in host_configs])
        evaluation_name = name or _slug(test_suite.name)
    else:
        test_lab = import_file(Path(lab), lab_format)
        if not isinstance(test_lab, TestLab):
            raise ValueError(f"{lab} holds a test suite without answers; pass it as 'suite'")
        inputs = fingerprint(test_lab.model_dump(mode="json"))
        evaluation_name = name or _slug(test_lab.name)
    settings = load_settings()
    runs = RunStates(open_object_store(settings))
    record = runs.start(
        fingerprint(inputs, evaluator_ids, parameters, judge, judge_options),
        run_id,
        workflow="evaluate",
        parameters={"suite": suite, "lab": lab, "evaluators": evaluator_ids, "evaluator_parameters": parameters},
        fingerprints={"inputs": inputs},
    )
    out_dir = export_folder(out, record.run_id, settings.home)
    record = runs.exported_to(record, str(out_dir))
    superseded = claim_run(record.run_id)
    print(f"run {record.run_id}: evaluators {', '.join(evaluator_ids)}")
    if superseded:
        print(f"marked {len(superseded)} unfinished earlier attempt(s) of this run as crashed")
    if suite is not None and shard_size:
        test_lab = _build_lab_in_shards(test_suite, host_configs, record.run_id, shard_size)
    elif suite is not None:
        test_lab = build_lab(quote(test_suite), host_configs, record.run_id)
    # quote(): Prefect would otherwise walk every row of a large lab looking for futures (~0.5 s a task).
    selected, skipped = select(quote(test_lab), evaluator_ids, judge)
    for evaluator_id, reason in skipped.items():
        print(f"skipped {evaluator_id}: {reason}")
    run_args = {evaluator_id: run_parameters(evaluator_ids, evaluator_id, parameters.get(evaluator_id))
                for evaluator_id in selected}  # fmt: skip
    if shard_size:
        results = _evaluate_in_shards(test_lab, run_args, record.run_id, judge, judge_options, shard_size)
    else:
        results = [
            evaluate(quote(test_lab), evaluator_id, values, record.run_id, judge, judge_options)
            for evaluator_id, values in run_args.items()
        ]
    summary = publish(quote(test_lab), quote(results), str(out_dir), evaluation_name, record.run_id, skipped)
    link_report(
        f"Evaluation report {evaluation_name}",
        str(out_dir / REPORT_FILE),
        f"evaluations/{evaluation_name}/{REPORT_FILE}",
        record.run_id,
    )
    runs.finish(record)
    return summary


def _build_lab_in_shards(suite: TestSuite, hosts: list[ModelHost], run_id: str, shard_size: int) -> TestLab:
    """Every suite shard asked of every host in its own task (each resumable from its checkpoints), joined in order."""
    futures = [
        build_lab.with_options(task_run_name=f"ask-hosts-{run_id}-shard-{index}").submit(part, hosts, run_id)
        for index, part in enumerate(shard_suite(suite, shard_size))
    ]
    return join(quote([future.result() for future in futures]))


def _evaluate_in_shards(
    lab: TestLab,
    run_args: dict[str, dict[str, Any]],
    run_id: str,
    judge: dict[str, Any] | None,
    judge_options: dict[str, Any],
    shard_size: int,
) -> list[EvaluationResult]:
    """Every (evaluator, shard) submitted at once, each task getting only its shard; an evaluator that must see
    every case (``unshardable_reason``) gets the whole lab in one task. Shards are merged in the flow's process.
    Submitted parameters are not ``quote``d: prefect-dask rebuilds a quote into a plain tuple on the way."""
    shards = shard_lab(lab, shard_size)
    options = JudgeRunOptions.model_validate(judge_options)
    submitted: dict[str, tuple[bool, list[Any]]] = {}
    for evaluator_id, values in run_args.items():
        whole_reason = unshardable_reason(build_evaluator(evaluator_id, Services(judge_options=options), **values))
        if whole_reason is not None:
            print(f"{evaluator_id} runs unsharded: {whole_reason}")
        parts = [lab] if whole_reason is not None else shards
        submitted[evaluator_id] = (
            whole_reason is not None,
            [
                evaluate.with_options(task_run_name=f"evaluate-{evaluator_id}-shard-{index}").submit(
                    part, evaluator_id, values, run_id, judge, judge_options
                )
                for index, part in enumerate(parts)
            ],
        )
    print(f"{len(run_args)} evaluator(s) x {len(shards)} shard(s) of up to {shard_size} test cases submitted")
    results = []
    for evaluator_id, (whole, futures) in submitted.items():
        parts = [future.result() for future in futures]
        if whole:
            results.append(parts[0])
        else:
            results.append(merge(quote(lab), evaluator_id, run_args[evaluator_id], quote(parts), judge, judge_options))
    return results


def _slug(text: str) -> str:
    return "-".join("".join(c.lower() if c.isalnum() else " " for c in text).split()) or "evaluation"
