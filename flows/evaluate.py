"""The evaluate flow: build the test lab, run the evaluators, publish the results."""

from pathlib import Path
from typing import Any

from assay.evaluators import Services, build_evaluator
from assay.evaluators.selection import run_parameters
from assay.evaluators.shards import plan_shards, shard_suite
from assay.flows.attempts import open_run, run_tag
from assay.flows.scale_out import ScaleOut, choose_scale_out, dask_task_runner, where_they_ran
from assay.tasks.evaluate import build_lab, evaluate, join, merge, publish, select
from assay.tasks.report import REPORT_FILE, link_report
from prefect import flow, tags
from prefect.utilities.annotations import quote

from assay.config import load_settings
from assay.formats import import_file
from assay.hosts import files as host_files
from assay.models import ModelHost, TestLab, TestSuite
from assay.models.evaluation import DEFAULT_EVALUATORS, EvaluationResult
from assay.models.judges import JudgeEndpoint, JudgeRunOptions
from assay.models.plugins import EvaluatorSelection
from assay.storage.runs import fingerprint


@flow(name="evaluate", log_prints=True, persist_result=False)
def evaluate_flow(
    out: str | None = None,
    suite: str | None = None,
    suite_format: str = "auto",
    lab: str | None = None,
    lab_format: str = "auto",
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[EvaluatorSelection] | None = None,
    evaluator_parameters: dict[str, dict[str, Any]] | None = None,
    name: str | None = None,
    run_id: str | None = None,
    judge: dict[str, Any] | None = None,
    judge_options: dict[str, Any] | None = None,
    shard_size: int = 0,
    dask_address: str | None = None,
    dask_workers: int | None = None,
) -> dict[str, Any]:
    """Evaluate a suite against hosts (``suite`` + ``hosts``) or a test lab's precomputed answers (``lab``).

    Args:
        out: The export folder; {run_id} in it is replaced by the run id. Empty: each run gets its own,
            <assay home>/exports/<run id>, so two runs (a weekly re-validation) never mix their files.
        suite: A test suite file to ask the hosts; give suite or lab, not both.
        suite_format: The suite file's format: auto (detected from the content), assay, eval-studio-suite, mlflow,
            mlflow-genai, ragas, deepeval or promptfoo.
        lab: A test lab file with precomputed answers, evaluated as it is (no host is asked); give suite or lab,
            not both.
        lab_format: The lab file's format: auto (detected from the content), assay, eval-studio-testlab, mlflow,
            mlflow-genai, ragas, deepeval or promptfoo.
        hosts: With a suite, the hosts to ask: host types (sample-rag), host files (.json or .toml) or host
            configurations as objects; empty: sample-rag. Not used with a lab.
        evaluators: Evaluator ids to run, or all (every evaluator the lab has inputs for) or recommended (the
            offline checks that mean something on any suite); empty: answer_semantic_similarity and
            text_matching (offline, fast, and meaningful on any suite).
        evaluator_parameters: Parameters per evaluator id, such as {"rouge": {"use_stemmer": true}} (assay
            evaluators list --json shows each evaluator's); a parameter an evaluator does not take fails the run
            before any host is asked.
        name: The evaluation's name in the artifact store (evaluations/<name>/); empty: made from the suite's or
            lab's name.
        run_id: The id of an unfinished run to continue; empty: the unfinished run of the same inputs (suite or
            lab content, hosts, evaluators and their parameters, judge) is continued if there is one, else a new
            run starts.
        judge: The LLM judge endpoint (JudgeEndpoint: base_url, model, api_key_env...; no secret, only the name of
            the key's environment variable); empty: the one in Assay's settings (ASSAY_JUDGE__*), if any.
        judge_options: How the run spends its judge (JudgeRunOptions): repeats, the cascade (cascade, band) and a
            budget, such as {"repeats": 3}; empty: each case judged once, no cascade, no budget.
        shard_size: 0 runs one task per evaluator over the whole lab. N > 0 asks the hosts and runs each evaluator
            in shards of N test cases, all submitted at once, then merges them in order. Without Dask, shards go
            to this flow's own task runner; on Dask, 0 means the setting ASSAY_SHARD_SIZE (250 by default).
        dask_address: A running Dask scheduler to run the shards on (tcp://host:8786); give it or dask_workers,
            not both. When both are empty, the settings ASSAY_DASK_ADDRESS / ASSAY_DASK_WORKERS of the process
            running the flow decide (flows/scale_out.py, choose_scale_out; the log says what chose). On
            Dask the shards run in the subflow evaluate-shards, with a Dask task runner made at run time.
        dask_workers: Run the shards on a local Dask cluster of N worker processes; 0: no Dask; empty: see
            dask_address.
    """
    _check_arguments(suite, lab, evaluator_parameters)
    scale_out = choose_scale_out(dask_address, dask_workers, shard_size)
    evaluator_ids, parameters, judge_config, options = _run_settings(
        evaluators, evaluator_parameters, judge, judge_options
    )
    source, host_configs, inputs = _read_inputs(suite, suite_format, lab, lab_format, hosts)
    evaluation_name = name or _slug(source.name)
    run = open_run(
        workflow="evaluate",
        inputs_fingerprint=fingerprint(inputs, evaluator_ids, parameters, judge_config, options),
        run_id=run_id,
        out=out,
        parameters={"suite": suite, "lab": lab, "evaluators": evaluator_ids, "evaluator_parameters": parameters},
        fingerprints={"inputs": inputs},
    )
    print(f"run {run.id}: evaluators {', '.join(evaluator_ids)}")
    print(scale_out.line())
    if scale_out.on_dask:
        given = {"suite": suite, "suite_format": suite_format, "lab": lab, "lab_format": lab_format, "hosts": hosts,
                 "evaluators": evaluators, "evaluator_parameters": evaluator_parameters, "judge": judge,
                 "judge_options": judge_options}  # fmt: skip
        test_lab, results, skipped = _on_dask(scale_out, run.id, inputs, given)
    else:
        test_lab, results, skipped = _ask_and_evaluate(
            source, host_configs, evaluator_ids, parameters, judge_config, options, run.id, scale_out.shard_size
        )
    summary = publish(quote(test_lab), quote(results), str(run.out_dir), evaluation_name, run.id, skipped)
    report_key = f"evaluations/{evaluation_name}/{REPORT_FILE}"
    link_report(f"Evaluation report {evaluation_name}", str(run.out_dir / REPORT_FILE), report_key, run.id)
    run.finish()
    return summary


def _check_arguments(
    suite: str | None, lab: str | None, evaluator_parameters: dict[str, dict[str, Any]] | None
) -> None:
    """Refuse a run that cannot go on, before any host is asked (a misspelt evaluator parameter included:
    each evaluator is built once with its parameters)."""
    if (suite is None) == (lab is None):
        raise ValueError("give exactly one of 'suite' (with hosts) or 'lab'")
    for evaluator_id, values in (evaluator_parameters or {}).items():
        build_evaluator(evaluator_id, Services(), **values)


def _on_dask(
    scale_out: ScaleOut, run_id: str, inputs: str, given: dict[str, Any]
) -> tuple[TestLab, list[EvaluationResult], dict[str, str]]:
    """The shards run in the subflow ``evaluate-shards`` with a Dask task runner made now, from the flow's own
    parameters (``given``), tagged with the run so that a killed attempt's subflow is marked Crashed with it."""
    on_dask = evaluate_shards_flow.with_options(
        task_runner=dask_task_runner(scale_out.address, scale_out.workers), flow_run_name=f"shards-of-{run_id}"
    )
    with tags(run_tag(run_id)):
        shards = on_dask(run_id=run_id, inputs=inputs, shard_size=scale_out.shard_size, **given)
    return shards.unquote()


@flow(name="evaluate-shards", log_prints=True, persist_result=False)
def evaluate_shards_flow(
    run_id: str,
    inputs: str,
    shard_size: int,
    suite: str | None = None,
    suite_format: str = "auto",
    lab: str | None = None,
    lab_format: str = "auto",
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[EvaluatorSelection] | None = None,
    evaluator_parameters: dict[str, dict[str, Any]] | None = None,
    judge: dict[str, Any] | None = None,
    judge_options: dict[str, Any] | None = None,
) -> "quote[tuple[TestLab, list[EvaluationResult], dict[str, str]]]":
    """The sharded part of an evaluate run on Dask (host shards, selection, evaluator shards), a subflow so
    that its task runner is chosen while the run runs: a served or deployed flow is loaded from its
    entrypoint by Prefect's runner, so a task runner set with ``evaluate_flow.with_options`` beforehand would
    be lost, whereas this one comes from the run's own parameters and settings, the same from the CLI,
    ``serve`` and a worker.

    It takes the parent run's parameters, not its suite or lab: Prefect sends a subflow's parameters to its
    API and records them, which a lab of thousands of answers is too big for. It reads the file again and
    refuses it when it changed since the run started (``inputs`` is its fingerprint). The return value is
    ``quote``d so that Prefect does not walk every row of the lab looking for futures."""
    evaluator_ids, parameters, judge_config, options = _run_settings(
        evaluators, evaluator_parameters, judge, judge_options
    )
    source, host_configs, found = _read_inputs(suite, suite_format, lab, lab_format, hosts)
    if found != inputs:
        raise ValueError(f"{suite or lab} changed since run {run_id} started; start the run again to use it")
    return quote(
        _ask_and_evaluate(source, host_configs, evaluator_ids, parameters, judge_config, options, run_id, shard_size)
    )


def _run_settings(
    evaluators: list[str] | None,
    evaluator_parameters: dict[str, dict[str, Any]] | None,
    judge: dict[str, Any] | None,
    judge_options: dict[str, Any] | None,
) -> tuple[list[str], dict[str, dict[str, Any]], dict[str, Any] | None, dict[str, Any]]:
    """Evaluator ids, their parameters, the judge endpoint (None: no judge) and the judge options of a run."""
    judge_endpoint = JudgeEndpoint.model_validate(judge) if judge is not None else load_settings().judge
    return (
        evaluators or list(DEFAULT_EVALUATORS),
        evaluator_parameters or {},
        judge_endpoint.model_dump(mode="json") if judge_endpoint.configured else None,
        JudgeRunOptions.model_validate(judge_options or {}).model_dump(mode="json"),
    )


def _read_inputs(
    suite: str | None, suite_format: str, lab: str | None, lab_format: str, hosts: list[str | dict[str, Any]] | None
) -> tuple[TestSuite | TestLab, list[ModelHost], str]:
    """The suite (with its hosts) or the lab a run evaluates, and their fingerprint."""
    if suite is not None:
        test_suite = import_file(Path(suite), suite_format)
        if not isinstance(test_suite, TestSuite):
            raise ValueError(f"{suite} holds a test lab; pass it as 'lab'")
        configs = host_files.host_configs(hosts)
        dumps = [host.model_dump(mode="json") for host in configs]
        return test_suite, configs, fingerprint(test_suite.model_dump(mode="json"), dumps)
    test_lab = import_file(Path(str(lab)), lab_format)
    if not isinstance(test_lab, TestLab):
        raise ValueError(f"{lab} holds a test suite without answers; pass it as 'suite'")
    return test_lab, [], fingerprint(test_lab.model_dump(mode="json"))


def _ask_and_evaluate(
    source: TestSuite | TestLab,
    hosts: list[ModelHost],
    evaluator_ids: list[str],
    parameters: dict[str, dict[str, Any]],
    judge: dict[str, Any] | None,
    judge_options: dict[str, Any],
    run_id: str,
    shard_size: int,
) -> tuple[TestLab, list[EvaluationResult], dict[str, str]]:
    """The lab (asked of the hosts when ``source`` is a suite), the results of the evaluators that apply to it,
    and the skipped ones with their reasons; in shards of ``shard_size`` test cases when it is above 0."""
    if isinstance(source, TestLab):
        test_lab = source
    elif shard_size:
        test_lab = _build_lab_in_shards(source, hosts, run_id, shard_size)
    else:
        test_lab = build_lab(quote(source), hosts, run_id)
    # quote(): Prefect would otherwise walk every row of a large lab looking for futures (~0.5 s a task).
    selected, skipped = select(quote(test_lab), evaluator_ids, judge)
    for evaluator_id, reason in skipped.items():
        print(f"skipped {evaluator_id}: {reason}")
    run_args = {evaluator_id: run_parameters(evaluator_ids, evaluator_id, parameters.get(evaluator_id))
                for evaluator_id in selected}  # fmt: skip
    if shard_size:
        return test_lab, _evaluate_in_shards(test_lab, run_args, run_id, judge, judge_options, shard_size), skipped
    results = [
        evaluate(quote(test_lab), evaluator_id, values, run_id, judge, judge_options)
        for evaluator_id, values in run_args.items()
    ]
    return test_lab, results, skipped


def _build_lab_in_shards(suite: TestSuite, hosts: list[ModelHost], run_id: str, shard_size: int) -> TestLab:
    """Every suite shard asked of every host in its own task (each resumable from its checkpoints), joined in order."""
    futures = [
        build_lab.with_options(task_run_name=f"ask-hosts-{run_id}-shard-{index}").submit(part, hosts, run_id)
        for index, part in enumerate(shard_suite(suite, shard_size))
    ]
    parts = [future.result() for future in futures]
    _print_where_they_ran("host shard", futures)
    return join(quote(parts))


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
    plan = plan_shards(lab, run_args, shard_size, JudgeRunOptions.model_validate(judge_options))
    submitted = []
    for share in plan.evaluators:
        if share.whole_reason is not None:
            print(f"{share.evaluator_id} runs unsharded: {share.whole_reason}")
        submitted.append([
            evaluate.with_options(task_run_name=f"evaluate-{share.evaluator_id}-shard-{index}").submit(
                part, share.evaluator_id, share.parameters, run_id, judge, judge_options
            )
            for index, part in enumerate(share.parts)
        ])  # fmt: skip
    print(f"{len(run_args)} evaluator(s) x {plan.shard_count} shard(s) of up to {shard_size} test cases submitted")
    results = []
    for share, futures in zip(plan.evaluators, submitted, strict=True):
        parts = [future.result() for future in futures]
        if share.whole_reason is not None:
            results.append(parts[0])
        else:
            results.append(merge(quote(lab), share.evaluator_id, share.parameters, quote(parts), judge, judge_options))
    _print_where_they_ran("evaluator", [future for futures in submitted for future in futures])
    return results


def _print_where_they_ran(what: str, futures: list[Any]) -> None:
    line = where_they_ran(what, futures)
    if line is not None:
        print(line)


def _slug(text: str) -> str:
    return "-".join("".join(c.lower() if c.isalnum() else " " for c in text).split()) or "evaluation"
