"""Sharded evaluation gives exactly the result of one run, for every evaluator that runs offline."""

from typing import Any

import pytest
from assay.evaluators import Services, build_evaluator, evaluator_class, evaluator_ids, run_evaluator
from assay.evaluators.shards import (
    join_labs,
    merge_judge_summaries,
    merge_results,
    plan_shards,
    shard_lab,
    shard_suite,
    unshardable_reason,
)

from assay.embeddings import EmbeddingEngine
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow, TestSuite
from assay.models.judges import JudgeAccount, JudgeEndpoint, JudgeRunOptions, JudgeSummary

# CaseContext field -> where a test case or a lab row keeps it
_CASE_FIELDS = {"question": "prompt", "case_weight": "weight"}
_ROW_FIELDS = {"duration": "actual_duration", "host_error": "error"}
_ROW_ONLY = {"actual_output", "cost", "input_tokens", "output_tokens", "tool_calls"}


def _row(key: str, model_key: str, fields: dict[str, Any]) -> TestLabRow:
    case: dict[str, Any] = {"key": key, "prompt": ""}
    row: dict[str, Any] = {"model_key": model_key}
    for name, value in fields.items():
        if name == "retrieved_context":
            row["context"] = [
                chunk if isinstance(chunk, RetrievedChunk) else RetrievedChunk(text=chunk, rank=rank)
                for rank, chunk in enumerate(value)
            ]
        elif name == "relationships":
            case["relationships"] = [{"type": kind, "target": target} for kind, target in value]
        elif name in _ROW_FIELDS or name in _ROW_ONLY:
            row[_ROW_FIELDS.get(name, name)] = value
        else:
            case[_CASE_FIELDS.get(name, name)] = value
    return TestLabRow(test_case=TestCase.model_validate(case), **row)


def golden_lab() -> TestLab:
    """Every evaluator's golden good and bad case, answered by two models (the second swaps good and bad
    answers), so each evaluator finds cases it scores among many it leaves unscored."""
    models = [ModelHost(key="first", type="sample-rag"), ModelHost(key="second", type="sample-rag")]
    rows: dict[str, list[TestLabRow]] = {"first": [], "second": []}
    for evaluator_id in evaluator_ids():
        golden = evaluator_class(evaluator_id).golden
        for kind, other in (("good", "bad"), ("bad", "good")):
            key = f"{evaluator_id}-{kind}"
            rows["first"].append(_row(key, "first", golden[kind]))
            swapped = dict(golden[kind])
            if "actual_output" in golden[other]:
                swapped["actual_output"] = golden[other]["actual_output"]
            rows["second"].append(_row(key, "second", swapped))
    return TestLab(name="golden", models=models, rows=rows["first"] + rows["second"])


def same(left: Any, right: Any) -> bool:
    """Equal, but for floats one unit of the 6th decimal apart: a model's float32 forward pass (bertscore's token
    vectors) moves in its last bits with the shape of the batch, as changing ``batch_size`` does in one run."""
    if isinstance(left, float) and isinstance(right, float):
        return abs(left - right) <= 1.01e-6
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[key], right[key]) for key in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def _offline(services: Services) -> list[str]:
    ready = []
    for evaluator_id in evaluator_ids():
        evaluator = build_evaluator(evaluator_id, services)
        if "llm" not in evaluator.spec.needs and evaluator.unavailable_reason() is None:
            ready.append(evaluator_id)
    return ready


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def test_shards_split_by_test_case_and_keep_lab_order() -> None:
    lab = golden_lab()
    shards = shard_lab(lab, 2)
    assert all(len({row.test_case.key for row in shard.rows}) <= 2 for shard in shards)
    assert all({row.model_key for row in shard.rows} == {"first", "second"} for shard in shards)
    assert sorted(row.row_key for shard in shards for row in shard.rows) == sorted(row.row_key for row in lab.rows)
    with pytest.raises(ValueError, match="at least 1"):
        shard_lab(lab, 0)


def test_suite_shards_join_back_into_the_lab_order() -> None:
    lab = golden_lab()
    cases = [row.test_case for row in lab.rows if row.model_key == "first"]
    suite = TestSuite(name="s", tests=[{"key": "a", "test_cases": cases[:5]}, {"key": "b", "test_cases": cases[5:9]}])
    parts = shard_suite(suite, 4)
    assert [[case.key for _, case in part.cases()] for part in parts] == [
        [case.key for case in cases[start : min(start + 4, 9)]] for start in (0, 4, 8)
    ]
    assert [test.key for test in parts[1].tests] == ["a", "b"]
    labs = [
        TestLab(
            name="s",
            models=lab.models,
            rows=[TestLabRow(test_case=case, model_key=model.key) for model in lab.models for _, case in part.cases()],
        )
        for part in parts
    ]
    joined = join_labs(labs)
    assert [row.row_key for row in joined.rows] == [f"{model}:{case.key}" for model in ("first", "second")
                                                    for case in cases[:9]]  # fmt: skip


def test_every_offline_evaluator_scores_the_same_in_shards_of_two(services: Services) -> None:
    """The conformance check of sharding: rows, reasons, aggregates, corpus-level values and details identical."""
    lab = golden_lab()
    ready = _offline(services)
    assert {"answer_semantic_similarity", "text_matching", "classification", "bleu", "groundedness"} <= set(ready)
    for evaluator_id in ready:
        evaluator = build_evaluator(evaluator_id, services)
        assert unshardable_reason(evaluator) is None, evaluator_id
        whole = run_evaluator(evaluator, lab)
        parts = [run_evaluator(build_evaluator(evaluator_id, services), shard) for shard in shard_lab(lab, 2)]
        merged = merge_results(build_evaluator(evaluator_id, services), lab, list(reversed(parts)))
        assert same(merged.model_dump(exclude={"elapsed_s"}), whole.model_dump(exclude={"elapsed_s"})), evaluator_id
        assert merged.elapsed_s == pytest.approx(sum(part.elapsed_s for part in parts), abs=0.01)


def test_merge_refuses_shards_that_do_not_cover_the_lab(services: Services) -> None:
    lab = golden_lab()
    evaluator = build_evaluator("text_matching", services)
    parts = [run_evaluator(evaluator, shard) for shard in shard_lab(lab, 3)]
    with pytest.raises(ValueError, match="missing"):
        merge_results(evaluator, lab, parts[1:])
    with pytest.raises(ValueError, match="two shards"):
        merge_results(evaluator, lab, [parts[0], *parts])


def test_a_judge_budget_or_a_declaration_keeps_an_evaluator_whole() -> None:
    judged = next(i for i in evaluator_ids() if "llm" in evaluator_class(i).spec.needs)
    assert unshardable_reason(build_evaluator(judged, Services(judge_options=JudgeRunOptions()))) is None
    budgeted = build_evaluator(judged, Services(judge_options=JudgeRunOptions(budget=5)))
    assert "budget" in (unshardable_reason(budgeted) or "")
    evaluator = build_evaluator("text_matching")
    type(evaluator).shardable = False
    try:
        assert "depends on the other cases" in (unshardable_reason(evaluator) or "")
    finally:
        del type(evaluator).shardable


def test_judge_summaries_add_up() -> None:
    endpoint = JudgeEndpoint(base_url="http://127.0.0.1:1/v1", model="m")
    first = JudgeSummary(
        endpoint=endpoint,
        options=JudgeRunOptions(cascade=True),
        templates={"a": "1"},
        account=JudgeAccount(calls=3, input_tokens=30, cost=0.5, wall_s=1.0),
        cascade={"proxy": "p", "band": 0.15, "budget": None, "cases": 4, "sent_to_judge": 3, "decided_offline": 1,
                 "offline_pass": 1, "offline_fail": 0, "over_budget": 0},
        flaky_cases=1,
    )
    second = first.model_copy(update={"templates": {"b": "2"}, "account": JudgeAccount(calls=2, wall_s=0.5)})
    merged = merge_judge_summaries([first, None, second])
    assert merged is not None
    assert merged.account.calls == 5 and merged.account.input_tokens == 30 and merged.account.cost == 0.5
    assert merged.account.wall_s == 1.5 and merged.templates == {"a": "1", "b": "2"} and merged.flaky_cases == 2
    assert merged.cascade is not None and merged.cascade["cases"] == 8 and merged.cascade["proxy"] == "p"
    assert merge_judge_summaries([None, None]) is None


def test_the_plan_gives_each_evaluator_its_shards_or_the_whole_lab() -> None:
    lab = golden_lab()
    judged = next(i for i in evaluator_ids() if "llm" in evaluator_class(i).spec.needs)
    parameters = {"text_matching": {}, judged: {}}
    cases = len({row.test_case.key for row in lab.rows})

    unbudgeted = plan_shards(lab, parameters, 7, JudgeRunOptions())
    assert unbudgeted.shard_count == -(-cases // 7)
    assert [(share.evaluator_id, len(share.parts), share.whole_reason) for share in unbudgeted.evaluators] == [
        ("text_matching", unbudgeted.shard_count, None),
        (judged, unbudgeted.shard_count, None),
    ]
    assert [part.rows for part in unbudgeted.evaluators[0].parts] == [part.rows for part in shard_lab(lab, 7)]

    budgeted = plan_shards(lab, {**parameters, judged: {"metric_threshold": 0.9}}, 7, JudgeRunOptions(budget=5))
    whole = budgeted.evaluators[1]
    assert whole.parts == [lab] and "budget" in (whole.whole_reason or "")
    assert whole.parameters == {"metric_threshold": 0.9}
    assert budgeted.shard_count == unbudgeted.shard_count
