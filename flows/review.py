"""Human review in the Prefect UI: one pause per reviewed step, whose form the reviewer's answer resumes.

The form offers a bulk choice (accept every proposal as shown, or review the items shown) and the most
informative items; the person may ask for more (cases, calibration answers), one more form each time. Without
``interactive``, decisions come from the approvals file or the step's policy (see ``assay.mrm.approvals``);
either way every decision is stored with who made it and, for a form, what was shown and what the person
changed (``ReviewRecord``). A decision already stored for this run is returned without pausing, and so is
every form already answered: a run resumed after a crash asks the reviewer only for what is still open.
"""

from dataclasses import dataclass
from typing import Any
from uuid import uuid4

from assay.flows.review_forms import (
    ACCEPT,
    REVIEWER_TITLE,
    SKIP,
    FormAnswer,
    StepReview,
    calibration_review,
    case_review,
    cluster_review,
    topic_review,
)
from prefect.flow_runs import pause_flow_run

from assay.models import TestSuite
from assay.models.corpus import Chunk
from assay.models.mrm import Decision, FailureClusters, ReviewItem, ReviewRecord, SuiteValidation, TopicModel
from assay.models.workflow import CALIBRATION_ANSWERS_PER_FORM, MIN_LABELS, REVIEW_PAGE_SIZE
from assay.mrm.approvals import ApprovalsFile, DecisionError, DecisionStore, check_decision, decide, record_person
from assay.mrm.policies import Policy, calibration_policy, case_policy, cluster_policy, topic_policy

REVIEW_TIMEOUT_S = 7 * 24 * 3600
LOGGED_ITEMS = 20
"""Items of a decision named in its log line; the decision artifact and the report name them all."""


@dataclass
class ReviewContext:
    """What every review of one run shares."""

    store: DecisionStore
    interactive: bool
    approvals: ApprovalsFile | None
    page_size: int = REVIEW_PAGE_SIZE  # items per form; the person asks for more
    poll_s: int = 5  # how often a paused run checks whether the reviewer resumed it


def review_topics(topic_model: TopicModel, chunks: list[Chunk], ctx: ReviewContext) -> Decision:
    """Topics to leave out of test generation."""
    return _review(topic_review(topic_model, chunks, ctx.page_size), ctx, topic_policy())


def review_cases(suite: TestSuite, validation: SuiteValidation, ctx: ReviewContext) -> Decision:
    """Generated cases to drop before evaluation."""
    return _review(case_review(suite, validation, ctx.page_size), ctx, case_policy(validation))


def review_calibration(
    items: list[ReviewItem],
    ctx: ReviewContext,
    *,
    min_labels: int = MIN_LABELS,
    per_form: int = CALIBRATION_ANSWERS_PER_FORM,
) -> Decision:
    """The reviewer's pass/fail labels of sampled answers, one metric at a time, and the metrics they mark not
    meaningful for this system."""
    return _review(calibration_review(items, min_labels, per_form), ctx, calibration_policy())


def review_clusters(clusters: FailureClusters, ctx: ReviewContext) -> Decision:
    """A weakness name per failure cluster."""
    return _review(cluster_review(clusters, ctx.page_size), ctx, cluster_policy(clusters))


def _review(review: StepReview, ctx: ReviewContext, policy: Policy) -> Decision:
    """The stored decision, else the file's or policy's (not interactive, or nothing to ask), else the
    person's: one form, and another each time they ask for more, recorded as one decision at the end."""
    step, offered = review.step, review.offered
    if not ctx.interactive or not offered or ctx.store.get(step) is not None:
        decided = decide(step, ctx.store, ctx.approvals, policy.decision, policy.note, offered, review.in_words)
        return _logged(decided)
    answered = ctx.store.pages(step)
    answers: list[FormAnswer] = []
    page: int | None = 1
    while page is not None:  # the forms the person's answers lead to, each stored as the next in order
        number = len(answers) + 1
        shown = [item.item_id for item in review.shown(page)]
        saved = answered.get(number)
        if saved is None or saved.get("shown") != shown:
            saved = _ask(review, page, ctx).to_json()
            ctx.store.save_page(step, number, saved)
        answers.append(FormAnswer.from_json(saved))
        page = review.next_page(page, answers[-1].how)
    decision = review.decision(review.values_for_all(answers))
    check_decision(step, decision, offered)
    record = ReviewRecord(
        how="accepted the proposals" if answers[-1].how == ACCEPT else "reviewed item by item",
        forms=len(answers),
        shown=sum(len(answer.shown) for answer in answers),
        offered=len(offered),
        changed=review.changed(answers),
        skipped=[item for answer in answers for item, value in answer.values.items() if value == SKIP],
    )
    reviewers = ", ".join(dict.fromkeys(answer.reviewer for answer in answers))
    return _logged(record_person(ctx.store, step, decision, reviewers, offered, record, review.in_words))


def _logged(decision: Decision) -> Decision:
    """One log line per decision: what was decided, by whom, from where (the run's log is its audit trail)."""
    who = decision.reviewer or decision.decided_by
    words = decision.in_words or [f"{key}: {value}" for key, value in decision.decision.items()]
    shown = "; ".join(words[:LOGGED_ITEMS]) + (
        f"; and {len(words) - LOGGED_ITEMS} more" if len(words) > LOGGED_ITEMS else ""
    )
    print(f"review {decision.step}: decided by {who} ({decision.source}, {decision.note}): {shown}")
    return decision


def _ask(review: StepReview, number: int, ctx: ReviewContext) -> FormAnswer:
    """Pause until the form's answer is acceptable; a refused one re-opens the form, with the reasons first
    and the person's choices kept, and is never stored."""
    values: dict[str, str] = {}
    error = ""
    while True:
        form = review.form(number, values, error)
        raw: Any = pause_for_form(form, f"{review.step}-{number}", ctx.poll_s)
        values = {key: str(value) for key, value in raw.model_dump(exclude={"metadata"}).items()}
        answer = review.answer(number, values)
        sent = raw.model_dump(exclude={"metadata"}, exclude_unset=True)  # a field the UI left out is not sent
        try:
            _check(review, answer, review.form_problems(number, sent))
        except DecisionError as problem:
            error = str(problem)
            reasons = error.replace("\n", " / ")
            print(f"review {review.step} form {number}: answer not accepted ({reasons}); the form is open again")
            continue
        return answer


def pause_for_form(form: Any, label: str, poll_s: int = 10) -> Any:
    """Pause the run until the form is answered, and return the answer. Each pause gets a key of its own:
    Prefect's default key counts the pauses of one process, so after a crash the Retry button's new process
    would number its first form 1 again and fail writing a form schema that already exists (409)."""
    key = f"{label}-{uuid4().hex[:12]}"
    return pause_flow_run(wait_for_input=form, timeout=REVIEW_TIMEOUT_S, poll_interval=poll_s, key=key)


def _check(review: StepReview, answer: FormAnswer, form_problems: list[str]) -> None:
    """Every reason to refuse the answer at once, so the re-opened form lists them all."""
    problems = []
    if not answer.reviewer:
        problems.append(
            f"reviewer: give your name in '{REVIEWER_TITLE}' (blank, spaces or invisible characters are not a "
            "name); the decision is recorded under it"
        )
    try:
        check_decision(review.step, review.decision(answer.values), answer.shown)
    except DecisionError as problem:
        problems.append(str(problem))
    problems += form_problems
    if problems:
        raise DecisionError("\n".join(problems))
