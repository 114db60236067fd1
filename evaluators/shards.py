"""Evaluating a test lab in shards (disjoint sets of test cases) and merging the shards' results back into
exactly the result one run over the whole lab gives.

Why sharding is exact: ``score`` sees one case, and every ``prepare`` hook only batches per-text work (embeddings,
model forward passes, judge calls) into content-keyed caches; nothing a case scores depends on the other cases.
What does depend on all cases is recomputed at the merge: per-model aggregates and corpus-level metrics (macro
F1, corpus BLEU) and run-level details, with the very function ``run_evaluator`` uses. Two things are not
shard-invariant and keep an evaluator whole (see :func:`unshardable_reason`): an evaluator class that declares
``shardable = False``, and an LLM judge under a call budget (the budget ranks every case of the run).

A shard holds every model's rows of its test cases, so per-case comparisons between models stay in one shard.
Two caveats, by design: the merged ``elapsed_s`` is the *sum* of the shards' times (the evaluator's work, not the
wall time of a parallel run); and a batch that fails in ``prepare`` marks only the cases of its shard.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.evaluators.base import Evaluator, Services
from assay.evaluators.registry import build_evaluator
from assay.evaluators.runner import aggregate

from assay.models import TestLab, TestSuite
from assay.models.evaluation import CaseScores, EvaluationResult
from assay.models.judges import JudgeRunOptions, JudgeSummary


@dataclass(frozen=True)
class EvaluatorShards:
    """One evaluator's share of a sharded run: the labs its tasks get, and why it runs whole (None: in shards,
    merged with :func:`merge_results` at the end)."""

    evaluator_id: str
    parameters: dict[str, Any]
    parts: list[TestLab]
    whole_reason: str | None


@dataclass(frozen=True)
class ShardPlan:
    shard_count: int
    evaluators: list[EvaluatorShards]


def plan_shards(
    lab: TestLab, parameters: Mapping[str, dict[str, Any]], shard_size: int, judge_options: JudgeRunOptions
) -> ShardPlan:
    """Each evaluator (``parameters``: evaluator id -> its run parameters) with the parts of ``lab`` it is run
    on: the shards of ``shard_size`` test cases, or the whole lab when :func:`unshardable_reason` says so."""
    shards = shard_lab(lab, shard_size)
    plan = []
    for evaluator_id, values in parameters.items():
        reason = unshardable_reason(build_evaluator(evaluator_id, Services(judge_options=judge_options), **values))
        plan.append(EvaluatorShards(evaluator_id, values, [lab] if reason is not None else shards, reason))
    return ShardPlan(len(shards), plan)


def unshardable_reason(evaluator: Evaluator) -> str | None:
    """Why ``evaluator`` must see the whole lab in one run, or None when shards give the same result."""
    if not type(evaluator).shardable:
        return f"{evaluator.spec.id} declares that a case's score depends on the other cases"
    options = evaluator.services.judge_options
    if "llm" in evaluator.spec.needs and options is not None and options.budget is not None:
        return "a judge budget ranks every case of the run (the most uncertain first)"
    return None


def _chunks(keys: Sequence[str], shard_size: int) -> list[list[str]]:
    if shard_size < 1:
        raise ValueError(f"shard size must be at least 1, got {shard_size}")
    return [list(keys[start : start + shard_size]) for start in range(0, len(keys), shard_size)]


def shard_lab(lab: TestLab, shard_size: int) -> list[TestLab]:
    """Labs of at most ``shard_size`` test cases each (with all models' rows of those cases), rows in lab order."""
    keys = list(dict.fromkeys(row.test_case.key for row in lab.rows))
    shards = []
    for chunk in _chunks(keys, shard_size):
        wanted = set(chunk)
        rows = [row for row in lab.rows if row.test_case.key in wanted]
        shards.append(lab.model_copy(update={"rows": rows}))
    return shards


def shard_suite(suite: TestSuite, shard_size: int) -> list[TestSuite]:
    """Suites of at most ``shard_size`` test cases each, in suite order; each test keeps its documents."""
    keys = [case.key for _, case in suite.cases()]
    shards = []
    for chunk in _chunks(keys, shard_size):
        wanted = set(chunk)
        tests = [
            test.model_copy(update={"test_cases": [case for case in test.test_cases if case.key in wanted]})
            for test in suite.tests
        ]
        shards.append(suite.model_copy(update={"tests": [test for test in tests if test.test_cases]}))
    return shards


def join_labs(parts: Sequence[TestLab]) -> TestLab:
    """One lab from the labs built for consecutive suite shards: rows in (model, suite) order, as
    ``build_test_lab`` orders the lab of the whole suite."""
    if not parts:
        raise ValueError("no lab shards to join")
    models = [model.key for model in parts[0].models]
    by_model: dict[str, list] = {key: [] for key in models}
    for part in parts:
        if [model.key for model in part.models] != models:
            raise ValueError("lab shards were built against different hosts")
        for row in part.rows:
            by_model[row.model_key].append(row)
    rows = [row for key in models for row in by_model[key]]
    return parts[0].model_copy(update={"rows": rows})


def merge_results(evaluator: Evaluator, lab: TestLab, parts: Sequence[EvaluationResult]) -> EvaluationResult:
    """The result of ``run_evaluator(evaluator, lab)`` from the results of its shards (any order).

    Every row of ``lab`` must be scored by exactly one shard; aggregates and run-level details are recomputed
    over all rows; judge accounts are added up."""
    if not parts:
        raise ValueError("no shard results to merge")
    by_row: dict[tuple[str, str], CaseScores] = {}
    for part in parts:
        if part.evaluator.id != evaluator.spec.id or part.parameters != parts[0].parameters:
            raise ValueError(f"a shard result of {part.evaluator.id} does not belong to this {evaluator.spec.id} run")
        for row in part.rows:
            key = (row.model_key, row.test_case_key)
            if key in by_row:
                raise ValueError(f"model {key[0]}, test case {key[1]} was scored by two shards")
            by_row[key] = row
    wanted = [(row.model_key, row.test_case.key) for row in lab.rows]
    missing = [key for key in wanted if key not in by_row]
    if missing or len(by_row) != len(wanted):
        raise ValueError(f"the shards do not cover the lab exactly: {len(missing)} row(s) missing, e.g. {missing[:3]}")
    rows = [by_row[key] for key in wanted]
    aggregates, details = aggregate(evaluator, [evaluator.context_for(row) for row in lab.rows], rows)
    return EvaluationResult(
        evaluator=parts[0].evaluator,
        parameters=parts[0].parameters,
        rows=rows,
        aggregates=aggregates,
        model_details=details,
        judge=merge_judge_summaries([part.judge for part in parts]),
        origin=parts[0].origin,
        elapsed_s=round(sum(part.elapsed_s for part in parts), 3),
    )


def merge_judge_summaries(summaries: Sequence[JudgeSummary | None]) -> JudgeSummary | None:
    """One judge section from the shards': accounts and cascade counts added up, templates united."""
    present = [summary for summary in summaries if summary is not None]
    if not present:
        return None
    merged = present[0].model_copy(deep=True)
    for summary in present[1:]:
        merged.account = merged.account.merged(summary.account)
        merged.templates = dict(sorted((merged.templates | summary.templates).items()))
        merged.flaky_cases += summary.flaky_cases
        merged.cascade = _merged_counts(merged.cascade, summary.cascade)
    merged.account.wall_s = round(merged.account.wall_s, 3)
    return merged


def _merged_counts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any] | None:
    """Cascade counts: numbers add up (cases, sent to the judge...); settings (proxy, band, budget) are shared."""
    if left is None or right is None:
        return left or right
    counts = {"cases", "sent_to_judge", "decided_offline", "offline_pass", "offline_fail", "over_budget"}
    return {key: left[key] + right.get(key, 0) if key in counts else left[key] for key in left}
