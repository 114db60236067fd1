import shutil
from pathlib import Path
from typing import Any

import assay.evaluators.bertscore as bertscore_module
import pytest
from assay.evaluators import CaseContext, Services, build_evaluator, run_evaluator

from assay.embeddings import PACKAGED_MODEL, resolve_model_path
from assay.embeddings.keyed_store import KeyedJsonStore
from assay.models import ModelHost, TestCase, TestLab, TestLabRow

EXPECTED = "The Easy Access Saver pays 3.25% AER on balances from £10,000."


def bertscore(**parameters: Any):  # type: ignore[no-untyped-def]
    return build_evaluator("bertscore", **parameters)


def test_identical_answers_score_one_on_every_metric() -> None:
    evaluator = bertscore()
    assert evaluator.score(CaseContext.build(actual_output=EXPECTED, expected_output=EXPECTED)) == {
        "bertscore_precision": 1.0,
        "bertscore_recall": 1.0,
        "bertscore_f1": 1.0,
    }


def test_precision_is_over_the_answer_and_recall_over_the_expected_answer() -> None:
    padded = f"{EXPECTED} Our branches also open at 9am on Saturdays and parking is free."
    scores = bertscore().score(CaseContext.build(actual_output=padded, expected_output=EXPECTED))
    # every expected token is in the answer (recall near 1); the extra clause lowers precision
    assert scores["bertscore_recall"] > 0.9
    assert scores["bertscore_precision"] < scores["bertscore_f1"] < scores["bertscore_recall"]
    precision, recall = scores["bertscore_precision"], scores["bertscore_recall"]
    assert scores["bertscore_f1"] == pytest.approx(2 * precision * recall / (precision + recall), abs=2e-6)
    truncated = bertscore().score(CaseContext.build(actual_output=EXPECTED, expected_output=padded))
    assert truncated["bertscore_precision"] == scores["bertscore_recall"]
    assert truncated["bertscore_recall"] == scores["bertscore_precision"]


def test_unrelated_answers_score_low() -> None:
    scores = bertscore().score(
        CaseContext.build(actual_output="Report a lost card by calling us.", expected_output=EXPECTED)
    )
    assert max(scores.values()) < 0.4


def test_prepare_embeds_every_distinct_text_of_the_run_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    passes: list[list[str]] = []
    original = bertscore_module._token_vectors

    def counting(encoder: Any, texts: list[str], batch_size: int) -> Any:
        passes.append(texts)
        return original(encoder, texts, batch_size)

    monkeypatch.setattr(bertscore_module, "_token_vectors", counting)
    evaluator = bertscore()
    answers = ["It pays 3.25% AER.", "Branches open at 9am.", "It pays 3.25% AER.", "Call us to close it."]
    cases = [CaseContext.build(actual_output=answer, expected_output=EXPECTED) for answer in answers]
    evaluator.prepare(cases)
    batched = [evaluator.score(case) for case in cases]
    assert passes == [["It pays 3.25% AER.", EXPECTED, "Branches open at 9am.", "Call us to close it."]]
    alone = [bertscore().score(case) for case in cases]
    assert batched == alone  # a case scores the same whatever else the run holds


def test_scores_agree_with_bert_score_on_a_pair_scored_alone() -> None:
    from bert_score import BERTScorer

    answer = "Balances from £10,000 in the Easy Access Saver earn 3.25% AER."
    ours = bertscore().score(CaseContext.build(actual_output=answer, expected_output=EXPECTED))
    reference = BERTScorer(model_type=str(resolve_model_path(PACKAGED_MODEL)), num_layers=6, device="cpu")
    precision, recall, f1 = (float(value[0]) for value in reference.score([answer], [EXPECTED]))
    assert ours == pytest.approx(
        {"bertscore_precision": precision, "bertscore_recall": recall, "bertscore_f1": f1}, abs=2e-6
    )


def test_the_model_is_loaded_once_per_process() -> None:
    bertscore_module._encoder.cache_clear()
    for answer in ("It pays 3.25% AER.", "It pays 3% AER."):
        bertscore().score(CaseContext.build(actual_output=answer, expected_output=EXPECTED))
    assert bertscore_module._encoder.cache_info().misses == 1


def test_a_missing_model_makes_every_case_unscored_naming_the_model(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    evaluator = bertscore(model=str(missing))
    reason = evaluator.unavailable_reason()
    assert reason is not None and reason.startswith(f"BERTScore model {str(missing)!r} is not available")
    row = TestLabRow(
        test_case=TestCase(key="k", prompt="q", expected_output=EXPECTED), model_key="m", actual_output="a"
    )
    result = run_evaluator(evaluator, TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=[row]))
    assert result.rows[0].unscored_reason == reason and result.rows[0].scores == {}


def test_a_folder_without_config_and_a_layer_the_model_lacks_are_unavailable(tmp_path: Path) -> None:
    assert "config.json is missing" in (bertscore(model=str(tmp_path)).unavailable_reason() or "")
    assert bertscore(num_layers=7).unavailable_reason() == (
        f"BERTScore model {PACKAGED_MODEL!r} has layers 0..6; num_layers=7 is not one"
    )


def test_a_local_model_folder_works_like_the_packaged_name(tmp_path: Path) -> None:
    folder = tmp_path / "minilm"
    shutil.copytree(resolve_model_path(PACKAGED_MODEL), folder)
    case = CaseContext.build(actual_output="It pays 3.25% AER.", expected_output=EXPECTED)
    local = bertscore(model=str(folder), num_layers=3)
    assert local.unavailable_reason() is None
    layer_three = local.score(case)
    layer_six = bertscore().score(case)
    assert layer_three != layer_six and 0 < layer_three["bertscore_f1"] < 1


def _stored_services(folder: Path) -> Services:
    return Services(score_store_factory=lambda: KeyedJsonStore(folder / "scores.sqlite3", table="scores"))


def test_a_later_run_reads_stored_pair_scores_without_loading_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [
        CaseContext.build(actual_output=answer, expected_output=EXPECTED)
        for answer in ("It pays 3.25% AER.", "Branches open at 9am.", "")
    ]
    first = build_evaluator("bertscore", _stored_services(tmp_path))
    first.prepare(cases)
    scored = [first._pair_scores[(case.actual_output, case.expected_output)] for case in cases]
    assert scored[2] is None and all(scored[:2])  # an empty answer has no tokens: kept as such, not as 0

    def no_model(*args: Any) -> Any:
        raise AssertionError("the model was loaded although every pair was stored")

    monkeypatch.setattr(bertscore_module, "_token_vectors", no_model)
    later = build_evaluator("bertscore", _stored_services(tmp_path))  # a new process would open the same file
    later.prepare(cases)
    assert [later._pair_scores[(case.actual_output, case.expected_output)] for case in cases] == scored
    with pytest.raises(AssertionError, match="the model was loaded"):  # another layer is another score
        build_evaluator("bertscore", _stored_services(tmp_path), num_layers=5).prepare(cases)


def test_new_weights_in_the_same_model_folder_are_not_answered_from_the_store(tmp_path: Path) -> None:
    folder = tmp_path / "minilm"
    shutil.copytree(resolve_model_path(PACKAGED_MODEL), folder)
    case = CaseContext.build(actual_output="It pays 3.25% AER.", expected_output=EXPECTED)
    build_evaluator("bertscore", _stored_services(tmp_path), model=str(folder)).prepare([case])
    before = bertscore_module._model_identity(str(folder))
    config = folder / "config.json"
    config.write_text(config.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    bertscore_module._model_identity.cache_clear()
    assert bertscore_module._model_identity(str(folder)) != before
