"""Scores checkpointed shard by shard: a rerun after a crash scores only what was not stored, and the result
is the one a single uninterrupted run gives; tampered or foreign checkpoints are scored again."""

import json
from pathlib import Path

import pytest
from assay.evaluators import build_evaluator, run_evaluator
from assay.evaluators.bleu import Bleu
from assay.evaluators.score_checkpoints import run_with_checkpoints, score_prefix

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.storage import LocalObjectStore, Signer


def lab(cases: int = 10) -> TestLab:
    models = [ModelHost(key="a", type="sample-rag"), ModelHost(key="b", type="sample-rag")]
    rows = [
        TestLabRow(
            test_case=TestCase(
                key=f"case-{index}", prompt=f"Question {index}?", expected_output=f"The fee is £{index}."
            ),
            model_key=model.key,
            actual_output=f"The fee is £{index if model.key == 'a' else index + 1}.",
        )
        for model in models
        for index in range(cases)
    ]
    return TestLab(name="checkpoints", models=models, rows=rows)


class Crash(Exception):
    pass


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The test case keys BLEU scores, in order."""
    scored: list[str] = []
    original = Bleu.score

    def counting(self: Bleu, case):  # type: ignore[no-untyped-def]
        scored.append(case.test_case_key)
        return original(self, case)

    monkeypatch.setattr(Bleu, "score", counting)
    return scored


def test_a_rerun_after_a_crash_scores_only_the_unstored_shards(
    tmp_path: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, signer, test_lab = LocalObjectStore(tmp_path / "store"), Signer(key_file=tmp_path / "key"), lab()
    whole = run_evaluator(build_evaluator("bleu"), test_lab)
    counted.clear()
    put = store.put

    def crash_after_two_shards(key: str, data: bytes, **options):  # type: ignore[no-untyped-def]
        if key.startswith(score_prefix("r", "bleu")) and len(store.list(score_prefix("r", "bleu"))) == 2:
            raise Crash("killed while storing the third shard")
        return put(key, data, **options)

    monkeypatch.setattr(store, "put", crash_after_two_shards)
    with pytest.raises(Crash):
        run_with_checkpoints(build_evaluator("bleu"), test_lab, store=store, run_id="r", signer=signer, shard_size=3)
    assert len(store.list(score_prefix("r", "bleu"))) == 2  # 3 + 3 test cases (both models' rows) kept
    monkeypatch.setattr(store, "put", put)
    counted.clear()

    resumed = run_with_checkpoints(
        build_evaluator("bleu"), test_lab, store=store, run_id="r", signer=signer, shard_size=3
    )

    assert sorted(set(counted)) == [f"case-{index}" for index in range(6, 10)]  # shards 3 and 4 only
    assert resumed.rows == whole.rows and resumed.aggregates == whole.aggregates
    assert resumed.model_details == whole.model_details  # corpus BLEU over all cases, not the last shards'
    assert store.list(score_prefix("r", "bleu")) == []  # merged: the task's persisted result holds them now


def _stored_after_crash(store: LocalObjectStore, signer: Signer, test_lab: TestLab) -> list[str]:
    """Checkpoints of every shard, left as a crash during the merge would leave them."""
    import assay.evaluators.score_checkpoints as module

    def crash(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise Crash("killed during the merge")

    original, module.merge_results = module.merge_results, crash
    try:
        with pytest.raises(Crash):
            run_with_checkpoints(
                build_evaluator("bleu"), test_lab, store=store, run_id="r", signer=signer, shard_size=4
            )
    finally:
        module.merge_results = original
    return store.list(score_prefix("r", "bleu"))


def test_an_edited_checkpoint_fails_its_signature_and_is_scored_again(tmp_path: Path, counted: list[str]) -> None:
    store, signer, test_lab = LocalObjectStore(tmp_path / "store"), Signer(key_file=tmp_path / "key"), lab()
    keys = _stored_after_crash(store, signer, test_lab)
    document = json.loads(store.get(keys[0]))
    document["result"]["rows"][0]["scores"]["bleu_1"] = 0.5  # it scored 1.0
    store.put(keys[0], json.dumps(document).encode(), overwrite=True)
    counted.clear()

    resumed = run_with_checkpoints(
        build_evaluator("bleu"), test_lab, store=store, run_id="r", signer=signer, shard_size=4
    )

    assert len(set(counted)) == 4  # the edited shard's four test cases, nothing else
    assert resumed.rows == run_evaluator(build_evaluator("bleu"), test_lab).rows


def test_checkpoints_are_never_reused_for_other_answers_other_parameters_or_another_run(
    tmp_path: Path, counted: list[str]
) -> None:
    store, signer, test_lab = LocalObjectStore(tmp_path / "store"), Signer(key_file=tmp_path / "key"), lab()
    _stored_after_crash(store, signer, test_lab)
    edited = test_lab.model_copy(deep=True)
    edited.rows[0].actual_output = "Something else entirely."
    counted.clear()
    run_with_checkpoints(build_evaluator("bleu"), edited, store=store, run_id="r", signer=signer, shard_size=4)
    assert len(set(counted)) == 4  # the shard holding the edited answer
    _stored_after_crash(store, signer, test_lab)
    counted.clear()
    run_with_checkpoints(
        build_evaluator("bleu", lowercase=True), test_lab, store=store, run_id="r", signer=signer, shard_size=4
    )
    assert len(set(counted)) == 10
    counted.clear()
    run_with_checkpoints(build_evaluator("bleu"), test_lab, store=store, run_id="other", signer=signer, shard_size=4)
    assert len(set(counted)) == 10


def test_small_labs_and_no_store_run_whole(tmp_path: Path, counted: list[str]) -> None:
    store = LocalObjectStore(tmp_path / "store")
    run_with_checkpoints(build_evaluator("bleu"), lab(3), store=store, run_id="r", shard_size=3)
    run_with_checkpoints(build_evaluator("bleu"), lab(), store=None, run_id="r", shard_size=3)
    assert store.list("runs/") == [] and len(counted) == 2 * 3 + 2 * 10
