"""The review forms without a browser: a field per item, answers mapped back to ids, refused answers,
policies, and a paged review resumed after a crash (the pause is replaced by a scripted reviewer)."""

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from assay.mrm.approvals import DecisionStore
from assay.storage.artifacts import ArtifactStore
from assay.storage.local import LocalObjectStore
from flows import review
from flows.review import ReviewContext, review_calibration, review_cases, review_clusters, review_topics
from flows.review_forms import calibration_pages, case_pages, cluster_pages, merge_decisions, topic_pages
from tests.browser import review_flow as data

ITEM = "answer_similarity/similarity/sample-rag/case-{}".format


def _context(tmp_path: Path, interactive: bool = True, page_size: int = 4) -> ReviewContext:
    store = DecisionStore(ArtifactStore(LocalObjectStore(tmp_path / "store")), "run-1")
    return ReviewContext(store=store, interactive=interactive, approvals=None, page_size=page_size, poll_s=1)


def test_topic_form_has_a_choice_per_topic_and_escapes_the_corpus() -> None:
    (page,) = topic_pages(data.topic_model(), data.chunks(), page_size=8)
    schema = page.form().model_json_schema()
    assert list(schema["properties"]) == ["item_1", "item_2", "item_3", "reviewer"]
    assert schema["properties"]["item_1"]["enum"] == ["keep", "exclude"]
    assert schema["properties"]["item_1"]["default"] == "keep"
    assert schema["properties"]["item_3"]["title"] == "3. Topic 2: security"
    assert schema["required"] == ["reviewer"]
    assert "Refunds are paid within 14 days" in page.description
    assert "keywords: refund, receipt" in page.description
    assert "<script>" not in page.description and "](javascript:" not in page.description
    assert page.decision({"item_1": "keep", "item_2": "exclude", "item_3": "exclude", "reviewer": "Ada"}) == {
        "excluded_topic_ids": [1, 2]
    }


def test_case_form_proposes_the_outliers_and_shows_the_measures() -> None:
    suite, validation = data.suite()
    (page,) = case_pages(suite, validation, page_size=8)
    properties = page.form().model_json_schema()["properties"]
    assert [properties[f"item_{n}"]["default"] for n in range(1, 5)] == ["keep", "keep", "exclude", "keep"]
    for shown in ("How fast are refunds paid?", "expected answer: answer 1", "question-generator", "cosine 0.80",
                  "BERTScore F1 0.70", "far from its source"):  # fmt: skip
        assert shown in page.description
    assert "NLI" not in page.description
    assert page.names["item_3"] == "case-3"
    assert page.decision({"item_1": "exclude", "item_3": "keep"}) == {"excluded_case_keys": ["case-1"]}


def test_calibration_is_paged_and_says_how_many_labels_are_needed() -> None:
    pages = calibration_pages(data.review_items(), page_size=4, min_labels=6)
    assert [len(page.fields) for page in pages] == [4, 4, 2]
    assert "**Page 2 of 3**" in pages[1].description
    assert "at least **6 labels**" in pages[0].description and "similarity: 10 offered" in pages[0].description
    assert "expected answer: expected 5" in pages[1].description and "actual answer: actual 5" in pages[1].description
    assert "score 0.500 >= threshold 0.500" in pages[1].description
    assert pages[1].names == {f"item_{n}": ITEM(n + 4) for n in range(1, 5)}
    assert pages[1].form().model_json_schema()["properties"]["item_1"]["enum"] == ["pass", "fail", "skip"]
    answer = {"item_1": "pass", "item_2": "fail", "item_3": "skip", "item_4": "fail", "reviewer": "Ada"}
    assert pages[1].decision(answer) == {"passed_item_ids": [ITEM(5)], "failed_item_ids": [ITEM(6), ITEM(8)]}


def test_cluster_form_prefills_the_keyword_names() -> None:
    (page,) = cluster_pages(data.clusters(), page_size=8)
    properties = page.form().model_json_schema()["properties"]
    assert properties["item_1"]["default"] == "refund, days, paid" and "enum" not in properties["item_1"]
    assert "How fast are refunds paid?" in page.description and "(3 failures)" in page.description
    assert page.decision({"item_1": "  Slow   refunds ", "item_2": "x"}) == {
        "names": {"0": "Slow refunds", "1": "x"},
        "kept_proposed": [],
    }
    # a name left as proposed is recorded as the proposal's, not as one the person gave
    assert page.decision({"item_1": "refund,  days, paid", "item_2": "x"})["kept_proposed"] == ["0"]


def test_a_form_refuses_unknown_choices_and_a_missing_name() -> None:
    (page,) = topic_pages(data.topic_model(), data.chunks(), page_size=8)
    form = page.form()
    with pytest.raises(ValidationError, match="reviewer"):
        form(item_1="keep")
    with pytest.raises(ValidationError, match="item_1"):
        form(item_1="drop", reviewer="Ada")
    again = page.form({"item_2": "exclude", "reviewer": "Ada"}, error="reviewer: give your name")
    assert again._description.startswith("**Not accepted, please correct:** reviewer: give your name")
    assert again(reviewer="Ada").item_2 == "exclude"


def test_merge_joins_pages() -> None:
    assert merge_decisions("calibration", [{"passed_item_ids": ["a"], "failed_item_ids": []},
                                           {"passed_item_ids": ["b"], "failed_item_ids": ["c"]}]) == {
        "passed_item_ids": ["a", "b"], "failed_item_ids": ["c"]}  # fmt: skip
    assert merge_decisions("failure-clustering", []) == {"names": {}, "kept_proposed": []}


def test_policies_without_a_reviewer(tmp_path: Path) -> None:
    ctx = _context(tmp_path, interactive=False)
    labels = review_calibration(data.review_items(), ctx)
    assert labels.decision == {"passed_item_ids": [], "failed_item_ids": []}
    assert labels.note == "no reviewer: thresholds stay at their defaults" and labels.source == "policy"
    assert review_cases(*data.suite(), ctx).decision == {"excluded_case_keys": ["case-3"]}
    assert review_topics(data.topic_model(), data.chunks(), ctx).decision == {"excluded_topic_ids": []}
    assert review_clusters(data.clusters(), ctx).decision["names"] == {"0": "refund, days, paid", "1": "shipping, cost"}


class ScriptedReviewer:
    """Stands in for ``pause_flow_run``: answers each form in turn and records what it was shown."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.shown: list[str] = []

    def __call__(self, wait_for_input: Any, timeout: int, poll_interval: int) -> Any:
        self.shown.append(wait_for_input._description)
        return wait_for_input(**self.answers.pop(0))


def test_a_resumed_calibration_asks_only_the_open_page_and_refuses_a_blank_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context(tmp_path)
    items = data.review_items()
    pages = calibration_pages(items, 4, 6)
    for page, labels in zip(pages[:2], ({"item_1": "fail"}, {"item_1": "pass"}), strict=True):
        saved = {"offered": page.offered, "decision": page.decision(labels), "reviewer": "Ada"}
        ctx.store.save_page("calibration", page.number, saved)  # answered before a crash
    reviewer = ScriptedReviewer([{"item_2": "fail", "reviewer": "   "}, {"item_1": "pass", "reviewer": "Ada"}])
    monkeypatch.setattr(review, "pause_flow_run", reviewer)

    decision = review_calibration(items, ctx)

    assert len(reviewer.shown) == 2 and "**Page 3 of 3**" in reviewer.shown[0]
    assert reviewer.shown[1].startswith("**Not accepted, please correct:** reviewer: give your name")
    # the refused answer's "fail" for case 10 was kept on the re-opened form, so it counts
    assert decision.decision == {"passed_item_ids": [ITEM(5), ITEM(9)], "failed_item_ids": [ITEM(1), ITEM(10)]}
    assert (decision.reviewer, decision.source, decision.decided_by) == ("Ada", "prefect-ui", "person")
    assert ctx.store.get("calibration") == decision
    # a stored decision is returned as it is, without asking again
    monkeypatch.setattr(review, "pause_flow_run", ScriptedReviewer([]))
    assert review_calibration(items, ctx) == decision


def test_an_unnamed_cluster_is_sent_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reviewer = ScriptedReviewer([{"item_1": " ", "reviewer": "Ada"}, {"item_1": "Refund delays", "reviewer": "Ada"}])
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    decision = review_clusters(data.clusters(), _context(tmp_path))
    assert reviewer.shown[1].startswith("**Not accepted, please correct:** names: give every cluster a name (cluster 0")
    assert decision.decision == {"names": {"0": "Refund delays", "1": "shipping, cost"}, "kept_proposed": ["1"]}
    assert (decision.decided_by, decision.reviewer) == ("person", "Ada")


def test_every_refusal_is_listed_on_top_and_a_blank_name_reopens_with_the_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reviewer = ScriptedReviewer([{"item_1": "", "reviewer": " \t"}, {"reviewer": "Ada"}])
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    decision = review_clusters(data.clusters(), _context(tmp_path))
    first_lines = reviewer.shown[1].split("\n---\n", 1)[0]
    assert first_lines.startswith("**Not accepted, please correct:**\n- reviewer: give your name in 'Your name'")
    assert "\n- names: give every cluster a name (cluster 0 has none)" in first_lines
    # nothing the person gave: both names are the proposal's, and the record says so
    assert decision.decision["kept_proposed"] == ["0", "1"]
    assert decision.decision["names"] == {"0": "refund, days, paid", "1": "shipping, cost"}


@pytest.mark.parametrize("step", ["topics", "cases", "calibration", "clusters"])
def test_a_refused_answer_reopens_every_review_form_with_the_reason_first(
    step: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reviewer = ScriptedReviewer([{"reviewer": "  "}, {"reviewer": "Ada"}])
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    ctx = _context(tmp_path, page_size=100)
    reviews = {
        "topics": lambda: review_topics(data.topic_model(), data.chunks(), ctx),
        "cases": lambda: review_cases(*data.suite(), ctx),
        "calibration": lambda: review_calibration(data.review_items(), ctx),
        "clusters": lambda: review_clusters(data.clusters(), ctx),
    }
    assert reviews[step]().reviewer == "Ada"
    assert not reviewer.shown[0].startswith("**Not accepted")
    assert reviewer.shown[1].startswith("**Not accepted, please correct:** reviewer: give your name in 'Your name'")
    assert reviewer.shown[1].endswith(reviewer.shown[0])  # the reason, then the form's usual description
