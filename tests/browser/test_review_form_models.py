"""The review forms without a browser: one form per step with a bulk choice, the most informative items first
with their evidence in the fields, answers mapped back to ids, what was changed, refused answers, policies,
and a review resumed after a crash (the pause is replaced by a scripted reviewer)."""

from pathlib import Path
from typing import Any

import pytest
from assay.flows import review
from assay.flows.review import ReviewContext, review_calibration, review_cases, review_clusters, review_topics
from assay.flows.review_forms import (
    ACCEPT,
    MEANINGFUL,
    NEXT_GROUP,
    NOT_MEANINGFUL,
    REFUSED,
    REVIEW,
    REVIEW_AND_MORE,
    calibration_review,
    case_review,
    cluster_review,
    topic_review,
)
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from assay.mrm.approvals import DecisionStore
from assay.storage.artifacts import ArtifactStore
from assay.storage.local import LocalObjectStore
from tests.browser import review_flow as data

ITEM = "answer_similarity/similarity/sample-rag/case-{}".format


def _context(tmp_path: Path, interactive: bool = True, page_size: int = 4) -> ReviewContext:
    store = DecisionStore(ArtifactStore(LocalObjectStore(tmp_path / "store")), "run-1")
    return ReviewContext(store=store, interactive=interactive, approvals=None, page_size=page_size, poll_s=1)


def _properties(form: Any) -> dict[str, Any]:
    return form.model_json_schema()["properties"]


def test_topic_form_opens_with_the_bulk_choice_and_shows_each_topic_in_its_field() -> None:
    topics = topic_review(data.topic_model(), data.chunks())
    properties = _properties(topics.form(1))
    assert list(properties) == ["how", "item_1", "item_2", "item_3", "reviewer"]
    assert properties["how"]["enum"] == [REVIEW, ACCEPT] and properties["how"]["default"] == REVIEW
    assert "Every one of the 3 topics is in the forms so far." in properties["how"]["description"]
    assert properties["item_1"]["enum"] == ["keep", "exclude"] and properties["item_1"]["default"] == "keep"
    assert properties["item_3"]["title"] == "3. Topic 2: security (2 chunks)"
    evidence = properties["item_1"]["description"]
    assert evidence.startswith("Keywords: refund, receipt\n\nExample chunk: Refunds are paid within 14 days")
    hostile = properties["item_2"]["description"]  # the corpus's text, drawn as text in V1's Markdown
    assert "\\<script>" in hostile and "\\[click\\](javascript:" in hostile
    assert "<script>" not in hostile.replace("\\<script>", "") and "[click]" not in hostile
    assert topics.form(1).model_json_schema()["required"] == ["reviewer"]


def test_case_form_puts_the_outliers_first_with_the_reason_and_says_what_the_rest_get() -> None:
    suite, validation = data.suite()
    cases = case_review(suite, validation, per_form=2)
    assert cases.offered[0] == "case-3"  # the flagged outlier first
    properties = _properties(cases.form(1))
    assert properties["item_1"]["title"] == "1. Case case-3: flagged outlier, proposed exclude"
    assert properties["item_1"]["default"] == "exclude" and properties["item_2"]["default"] == "keep"
    evidence = properties["item_2"]["description"]
    for shown in ("Question: How fast are refunds paid?", "Expected answer: answer 1", "cosine 0.80",
                  "BERTScore F1 0.70", "Generator: question-generator"):  # fmt: skip
        assert shown in evidence
    assert "Why flagged: far from its source" in properties["item_1"]["description"]
    assert properties["how"]["enum"] == [REVIEW, REVIEW_AND_MORE, ACCEPT]
    assert "2 more cases are not shown: the proposals keep 2 of them" in properties["how"]["description"]
    assert cases.names(2) == {"item_3": cases.offered[2], "item_4": cases.offered[3]}
    assert _properties(cases.form(2))["how"]["enum"] == [REVIEW, ACCEPT]  # nothing left to ask for


def test_calibration_is_one_metric_at_a_time_nearest_the_threshold_first() -> None:
    answers = calibration_review(data.grounded_items() + data.review_items(), min_labels=6, per_form=4)
    # groundedness: its marker and 10 answers on forms of 4 (1-3); similarity the same (4-6)
    assert answers.forms == 6 and answers.offered[:2] == ["groundedness/groundedness", "groundedness/groundedness/"
                                                          "sample-rag/case-7"]  # fmt: skip
    properties = _properties(answers.form(1))
    assert list(properties) == ["how", "item_1", "item_2", "item_3", "item_4", "item_5", "reviewer"]
    assert properties["how"]["enum"] == [REVIEW, REVIEW_AND_MORE, NEXT_GROUP, ACCEPT]
    bulk = properties["how"]["description"]
    assert "Form 1: groundedness, answers 1-4 of its 10, nearest the threshold first." in bulk, bulk
    assert "6 more sampled answers of this metric" in bulk and "Next metric: similarity (answer_similarity)" in bulk
    marker = properties["item_1"]
    assert marker["title"] == "Is groundedness meaningful for this system?"
    assert marker["enum"] == [MEANINGFUL, NOT_MEANINGFUL] and marker["default"] == MEANINGFUL
    # nearest first, alternating sides: 0.7 (at the threshold, PASS), 0.6 (FAIL), 0.8, 0.5
    titles = [properties[f"item_{n}"]["title"] for n in range(2, 6)]
    assert titles[0] == "1. groundedness says PASS (0.700 >= 0.700), case case-7"
    assert [title.split(", case ")[1] for title in titles] == ["case-7", "case-6", "case-8", "case-5"]
    evidence = properties["item_3"]["description"]
    assert "Retrieved context: Passage 6 says refunds take 6 days." in evidence
    assert "Expected answer" not in evidence  # groundedness does not read it
    assert "Verdict: higher is better: 0.600 is below 0.700, so FAIL" in evidence
    assert properties["item_3"]["default"] == "fail" and properties["item_3"]["enum"] == ["pass", "fail", "skip"]

    assert answers.next_page(1, REVIEW_AND_MORE) == 2 and answers.next_page(1, NEXT_GROUP) == 4
    assert answers.next_page(3, REVIEW_AND_MORE) is None and answers.next_page(1, REVIEW) is None
    assert "item_1" not in answers.names(2) and len(answers.shown(2)) == 4  # the marker is on the first form only
    similarity = _properties(answers.form(4))
    assert similarity["item_12"]["title"] == "Is similarity (answer_similarity) meaningful for this system?"
    assert "Expected answer: expected 5" in similarity["item_13"]["description"]  # this metric reads it
    last = _properties(answers.form(6))
    assert last["how"]["enum"] == [REVIEW, ACCEPT]
    assert "This is the last sampled metric." in last["how"]["description"]


def test_a_metric_marked_not_meaningful_gives_no_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = data.grounded_items() + data.review_items()
    answers = calibration_review(items, 6, 4)
    first = answers.shown(1)
    reviewer = ScriptedReviewer(
        [
            {"how": NEXT_GROUP, "item_2": "fail", "reviewer": "Ada"},  # flips the answer at the threshold
            {"how": REVIEW, "item_12": NOT_MEANINGFUL, "reviewer": "Ada"},
        ]
    )
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    decision = review_calibration(items, _context(tmp_path), per_form=4)
    assert decision.decision["not_meaningful"] == ["answer_similarity/similarity"]
    labelled = decision.decision["passed_item_ids"] + decision.decision["failed_item_ids"]
    assert sorted(labelled) == sorted(item.item_id for item in first[1:])  # groundedness's four, nothing else
    assert first[1].item_id in decision.decision["failed_item_ids"]
    assert (decision.review.forms, decision.review.shown) == (2, 10)
    assert "similarity (answer_similarity) marked not meaningful for this system" in decision.in_words


def test_accepting_the_proposals_ignores_the_fields_and_records_no_change() -> None:
    suite, validation = data.suite()
    cases = case_review(suite, validation)
    accepted = cases.answer(1, {"how": ACCEPT, "item_1": "keep", "item_2": "exclude", "reviewer": " Ada  Lovelace "})
    assert accepted.values == {"case-3": "exclude", "case-1": "keep", "case-2": "keep", "case-4": "keep"}
    assert accepted.reviewer == "Ada Lovelace" and cases.changed([accepted]) == []
    reviewed = cases.answer(1, {"how": REVIEW, "item_1": "keep", "item_2": "exclude", "reviewer": "Ada"})
    assert sorted(cases.changed([reviewed])) == ["case-1", "case-3"]


def test_cluster_form_prefills_the_keyword_names() -> None:
    clusters = cluster_review(data.clusters())
    properties = _properties(clusters.form(1))
    assert properties["item_1"]["default"] == "refund, days, paid" and "enum" not in properties["item_1"]
    assert properties["item_1"]["title"] == "1. Name of cluster 0 (3 failures)"
    assert "Example questions: How fast are refunds paid?" in properties["item_1"]["description"]


def test_a_form_refuses_unknown_choices_and_a_missing_name() -> None:
    topics = topic_review(data.topic_model(), data.chunks())
    form = topics.form(1)
    with pytest.raises(ValidationError, match="reviewer"):
        form(item_1="keep")
    with pytest.raises(ValidationError, match="item_1"):
        form(item_1="drop", reviewer="Ada")
    again = topics.form(1, {"item_2": "exclude", "reviewer": "Ada"}, error="reviewer: give your name")
    assert again._description.startswith("**Not accepted, please correct:** reviewer: give your name")
    assert _properties(again)["how"]["description"].startswith("NOT ACCEPTED, please correct: reviewer: give")
    assert again(reviewer="Ada").item_2 == "exclude"


def test_policies_without_a_reviewer(tmp_path: Path) -> None:
    ctx = _context(tmp_path, interactive=False)
    labels = review_calibration(data.review_items(), ctx)
    assert labels.decision == {"passed_item_ids": [], "failed_item_ids": [], "not_meaningful": []}
    assert labels.note == "no reviewer: thresholds stay at their defaults" and labels.source == "policy"
    assert review_cases(*data.suite(), ctx).decision == {"excluded_case_keys": ["case-3"]}
    assert review_topics(data.topic_model(), data.chunks(), ctx).decision == {"excluded_topic_ids": []}
    assert review_clusters(data.clusters(), ctx).decision["names"] == {"0": "refund, days, paid", "1": "shipping, cost"}


class ScriptedReviewer:
    """Stands in for ``pause_flow_run``: answers each form in turn and records what it was shown."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.shown: list[str] = []
        self.forms: list[Any] = []
        self.keys: list[str] = []

    def __call__(self, wait_for_input: Any, timeout: int, poll_interval: int, key: str) -> Any:
        self.keys.append(key)
        self.shown.append(wait_for_input._description)
        self.forms.append(wait_for_input)
        return wait_for_input(**as_the_ui_sends(wait_for_input, self.answers.pop(0)))


def as_the_ui_sends(form: Any, answers: dict[str, Any]) -> dict[str, Any]:
    """Prefect's UI sends every field at its shown value, except one a person emptied (``None`` here)."""
    shown = {
        name: field.default
        for name, field in form.model_fields.items()
        if name != "metadata" and field.default is not PydanticUndefined
    }
    return {name: value for name, value in (shown | answers).items() if value is not None}


def test_one_form_per_step_by_default_and_the_record_says_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context(tmp_path, page_size=25)
    reviewer = ScriptedReviewer([{"item_1": "keep", "reviewer": "Ada"}])
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    decision = review_cases(*data.suite(), ctx)
    assert len(reviewer.shown) == 1
    assert decision.decision == {"excluded_case_keys": []}
    assert decision.review is not None
    assert (decision.review.how, decision.review.shown, decision.review.offered) == ("reviewed item by item", 4, 4)
    assert decision.review.changed == ["case-3"]
    assert "reviewed item by item, 1 of 4 shown changed" in decision.note

    # Accepting every proposal after changing one is asked about, not silently dropped; put back, it is taken.
    reviewer = ScriptedReviewer(
        [{"how": ACCEPT, "item_1": "exclude", "reviewer": "Ada"}, {"how": ACCEPT, "item_1": "keep", "reviewer": "Ada"}]
    )
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    accepted = review_topics(data.topic_model(), data.chunks(), ctx)
    reopened = _properties(reviewer.forms[1])["how"]["description"]
    assert reopened.startswith(REFUSED) and "but changed 1. Topic 0" in reopened, reopened
    assert accepted.decision == {"excluded_topic_ids": []}
    assert (accepted.review.how, accepted.review.changed) == ("accepted the proposals", [])


def test_an_emptied_cluster_name_is_refused_not_replaced_by_the_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context(tmp_path)
    reviewer = ScriptedReviewer(
        [{"item_1": None, "reviewer": "Ada"}, {"item_1": "Refund delays", "reviewer": "Ada"}]  # None: emptied
    )
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    decision = review_clusters(data.clusters(), ctx)
    reopened = _properties(reviewer.forms[1])["how"]["description"]
    assert reopened.startswith(REFUSED) and "left empty: " in reopened, reopened
    assert decision.decision["names"]["0"] == "Refund delays"
    assert decision.reviewer == "Ada"


def test_calibration_asks_for_more_only_when_the_person_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _context(tmp_path, page_size=4)
    answers = calibration_review(data.review_items(), 6, 4)
    first, second = answers.shown(1), answers.shown(2)
    flip = {"pass": "fail", "fail": "pass"}
    reviewer = ScriptedReviewer(
        [
            {"how": REVIEW_AND_MORE, "item_2": flip[first[1].proposal], "item_3": "skip", "reviewer": "Ada"},
            {"how": REVIEW, "reviewer": "Ada"},
        ]
    )
    monkeypatch.setattr(review, "pause_flow_run", reviewer)
    decision = review_calibration(data.review_items(), ctx, per_form=4)
    assert len(reviewer.shown) == 2  # the third form was never asked for
    assert len(set(reviewer.keys)) == 2 and all(key.startswith("calibration-") for key in reviewer.keys), reviewer.keys
    labelled = set(decision.decision["passed_item_ids"]) | set(decision.decision["failed_item_ids"])
    assert labelled == {item.item_id for item in (*first[1:], *second)} - {first[2].item_id}
    assert decision.review.changed == [first[1].item_id] and decision.review.skipped == [first[2].item_id]
    assert (decision.review.forms, decision.review.shown, decision.review.offered) == (2, 9, 11)


def test_a_resumed_calibration_asks_only_the_open_form_and_refuses_a_blank_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _context(tmp_path)
    items = data.review_items()
    answers = calibration_review(items, 6, 4)
    saved = answers.answer(1, {"how": REVIEW_AND_MORE, "item_2": "fail", "reviewer": "Ada"})
    ctx.store.save_page("calibration", 1, saved.to_json())  # answered before a crash
    reviewer = ScriptedReviewer([{"item_7": "fail", "reviewer": "   "}, {"item_6": "pass", "reviewer": "Ada"}])
    monkeypatch.setattr(review, "pause_flow_run", reviewer)

    decision = review_calibration(items, ctx, per_form=4)

    assert len(reviewer.shown) == 2 and "Form 2" in _properties(reviewer.forms[0])["how"]["description"]
    assert reviewer.shown[1].startswith("**Not accepted, please correct:** reviewer: give your name")
    second = answers.shown(2)
    # the refused answer's "fail" for the second item of form 2 was kept on the re-opened form, so it counts
    assert second[1].item_id in decision.decision["failed_item_ids"]
    assert second[0].item_id in decision.decision["passed_item_ids"]
    assert answers.offered[1] in decision.decision["failed_item_ids"]
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
    assert decision.review.changed == ["0"]


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
    first_field = _properties(reviewer.forms[1])["how"]["description"]  # what V1 shows at the top
    assert first_field.startswith("NOT ACCEPTED, please correct: reviewer: give your name")


def test_decisions_are_recorded_in_words_naming_each_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = _context(tmp_path)
    monkeypatch.setattr(review, "pause_flow_run", ScriptedReviewer([{"item_1": "exclude", "reviewer": "Ada"}]))
    topics = review_topics(data.topic_model(), data.chunks(), ctx)
    (excluded,) = topics.decision["excluded_topic_ids"]
    label = next(topic.label for topic in data.topic_model().topics if topic.id == excluded)
    assert topics.in_words == [f'topic {excluded} "{label}" excluded']
    assert f'topic {excluded} "{label}" excluded' in capsys.readouterr().out  # the run's log says it too

    monkeypatch.setattr(review, "pause_flow_run", ScriptedReviewer([{"item_1": "Refund delays", "reviewer": "Ada"}]))
    clusters = review_clusters(data.clusters(), ctx)
    assert clusters.in_words[0] == 'cluster 0 (3 failures) named "Refund delays"', clusters.in_words
    assert any(words.endswith("(the proposal, kept)") for words in clusters.in_words[1:])

    policy_ctx = _context(tmp_path / "policy", interactive=False)
    suite, validation = data.suite()
    cases = review_cases(suite, validation, policy_ctx)
    assert cases.decided_by == "policy" and len(cases.in_words) == 1
    assert cases.in_words[0].startswith('case case-3 ("<script>') and cases.in_words[0].endswith('") excluded')


def test_an_approvals_file_marks_a_metric_not_meaningful_by_its_key(tmp_path: Path) -> None:
    from assay.mrm.approvals import ApprovalsFile, DecisionError

    items = data.grounded_items() + data.review_items()
    approvals = ApprovalsFile.model_validate(
        {
            "reviewer": "Bo",
            "calibration": {"failed_item_ids": [items[7].item_id], "not_meaningful": ["groundedness/groundedness"]},
        }
    )
    ctx = ReviewContext(store=_context(tmp_path).store, interactive=False, approvals=approvals)
    decision = review_calibration(items, ctx)
    assert decision.decision["not_meaningful"] == ["groundedness/groundedness"]
    assert "groundedness marked not meaningful for this system" in decision.in_words
    mistyped = ApprovalsFile.model_validate({"calibration": {"not_meaningful": ["groundedness/groundednes"]}})
    with pytest.raises(DecisionError, match="not_meaningful: unknown review item id"):
        review_calibration(
            items, ReviewContext(store=_context(tmp_path / "b").store, interactive=False, approvals=mistyped)
        )
