"""Human review in the Prefect UI: the paused flow run shows a form per page; the reviewer's answer resumes it.

Without ``interactive``, decisions come from the approvals file or the step's policy (see
``assay.mrm.approvals``); either way every decision is stored with who made it. A decision already stored for
this run is returned without pausing, and so is every page already answered: a run resumed after a crash
asks the reviewer only for what is still open.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefect.flow_runs import pause_flow_run

from assay.models import TestSuite
from assay.models.base import DomainModel
from assay.models.corpus import Chunk
from assay.models.mrm import Decision, FailureClusters, ReviewItem, SuiteValidation, TopicModel
from assay.mrm.approvals import (
    ApprovalsFile,
    CalibrationDecision,
    CaseDecision,
    DecisionError,
    DecisionStore,
    TopicDecision,
    WeaknessDecision,
    check_decision,
    decide,
    record_person,
)
from flows.review_forms import (
    REVIEWER_TITLE,
    FormPage,
    calibration_pages,
    case_pages,
    cluster_pages,
    merge_decisions,
    topic_pages,
)

REVIEW_TIMEOUT_S = 7 * 24 * 3600


@dataclass
class ReviewContext:
    """What every review of one run shares."""

    store: DecisionStore
    interactive: bool
    approvals: ApprovalsFile | None
    page_size: int = 8
    poll_s: int = 5  # how often a paused run checks whether the reviewer resumed it


def review_topics(topic_model: TopicModel, chunks: list[Chunk], ctx: ReviewContext) -> Decision:
    """Topics to leave out of test generation (policy: keep every topic)."""
    pages = topic_pages(topic_model, chunks, ctx.page_size)
    return _review("topic-modeling", pages, ctx, TopicDecision(), "policy: keep every topic")


def review_cases(suite: TestSuite, validation: SuiteValidation, ctx: ReviewContext) -> Decision:
    """Generated cases to drop before evaluation (policy: the flagged outliers)."""
    outliers = [check.test_case_key for check in validation.cases if check.outlier]
    pages = case_pages(suite, validation, ctx.page_size)
    policy = CaseDecision(excluded_case_keys=outliers)
    return _review("test-validation", pages, ctx, policy, "policy: exclude the flagged outliers")


def review_calibration(items: list[ReviewItem], ctx: ReviewContext, *, min_labels: int = 6) -> Decision:
    """The reviewer's pass/fail labels of sampled answers. The policy gives none: labels are never invented,
    so without a person every threshold keeps its default."""
    pages = calibration_pages(items, ctx.page_size, min_labels)
    return _review("calibration", pages, ctx, CalibrationDecision(), "no reviewer: thresholds stay at their defaults")


def review_clusters(clusters: FailureClusters, ctx: ReviewContext) -> Decision:
    """A weakness name per failure cluster (policy: its top keywords)."""
    names = {str(cluster.id): ", ".join(cluster.keywords[:3]) for cluster in clusters.clusters}
    pages = cluster_pages(clusters, ctx.page_size)
    policy = WeaknessDecision(names=names)
    return _review("failure-clustering", pages, ctx, policy, "policy: name each cluster by its top keywords")


def _review(step: str, pages: Sequence[FormPage], ctx: ReviewContext, policy: DomainModel, note: str) -> Decision:
    """The stored decision, else the file's or policy's (not interactive, or nothing to ask), else the
    person's answers page by page, recorded as one decision once every page is answered."""
    offered = [item for page in pages for item in page.offered]
    if not ctx.interactive or not pages or ctx.store.get(step) is not None:
        return _logged(decide(step, ctx.store, ctx.approvals, policy, note, offered))
    answered = ctx.store.pages(step)
    parts, reviewers = [], []
    for page in pages:
        saved = answered.get(page.number)
        if saved is None or saved.get("offered") != page.offered:
            saved = {"offered": page.offered, **_ask(page, ctx)}
            ctx.store.save_page(step, page.number, saved)
        parts.append(saved["decision"])
        reviewers.append(saved["reviewer"])
    decision = merge_decisions(step, parts)
    check_decision(step, decision, offered)
    return _logged(record_person(ctx.store, step, decision, ", ".join(dict.fromkeys(reviewers)), offered))


def _logged(decision: Decision) -> Decision:
    """One log line per decision: what was decided, by whom, from where (the run's log is its audit trail)."""
    who = decision.reviewer or decision.decided_by
    chosen = {key: len(value) for key, value in decision.decision.items()}
    print(f"review {decision.step}: decided by {who} ({decision.source}, {decision.note}); {chosen}")
    return decision


def _ask(page: FormPage, ctx: ReviewContext) -> dict[str, Any]:
    """Pause until the page's answer is acceptable; a refused one re-opens the form, with the reason on top
    and the person's choices kept, and is never stored."""
    values: dict[str, str] = {}
    error = ""
    while True:
        form = page.form(values, error)
        answer: Any = pause_flow_run(wait_for_input=form, timeout=REVIEW_TIMEOUT_S, poll_interval=ctx.poll_s)
        values = {key: str(value) for key, value in answer.model_dump(exclude={"metadata"}).items()}
        decision = page.decision(values)
        reviewer = " ".join(values.get("reviewer", "").split())
        try:
            _check(page, decision, reviewer)
        except DecisionError as problem:
            error = str(problem)
            reasons = error.replace("\n", " / ")
            print(f"review {page.step} page {page.number}: answer not accepted ({reasons}); the form is open again")
            continue
        return {"decision": decision, "reviewer": reviewer}


def _check(page: FormPage, decision: dict[str, Any], reviewer: str) -> None:
    """Every reason to refuse the answer at once, so the re-opened form lists them all."""
    problems = []
    if not reviewer:
        problems.append(
            f"reviewer: give your name in '{REVIEWER_TITLE}' (blank or spaces are not a name); the decision is "
            "recorded under it"
        )
    try:
        check_decision(page.step, decision, page.offered)
    except DecisionError as problem:
        problems.append(str(problem))
    if problems:
        raise DecisionError("\n".join(problems))
