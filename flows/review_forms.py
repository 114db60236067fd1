"""The review forms a person fills in the Prefect UI: one pause per reviewed step, a bulk choice first, then at
most ``per_form`` items (the most informative first), each carrying its evidence in the field itself.

What Prefect 3.8's two UIs do with a ``RunInput`` model (checked in chromium at 1280x800): both show each
field's title and description and keep the fields' order; a ``Literal[...]`` field is a select, a ``str`` a text
box, a field with a default is marked "(Optional)", and a missing required field is refused naming it. The
pause's own description (Markdown) is drawn 0 px high by the default UI (V1) below ~1600 px, so nothing a person
needs may live only there: the item's evidence (question, expected answer, the answer's first characters, score
against threshold; keywords and a chunk; cluster size and examples) is in its field's title and description,
and the counts of what the proposals decide for the items not shown, and any refusal, are in the first field's
description. V1 renders a field description as Markdown and V2 as plain text, so descriptions are Markdown-
escaped with backslashes (a rare bracket, an e-mail's @ or a URL's :// shows its backslash in V2; no link,
autolink or image can reach V1) and their
parts are separate paragraphs (one line in V2). Field names are ``item_1``, ``item_2``...; the form keeps which
id each stands for, so ids never travel through the browser.
"""

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from prefect.input import RunInput
from pydantic import Field, create_model

from assay.escaping import for_field_description, for_markdown_text, short_line, visible_controls
from assay.models import TestSuite
from assay.models.corpus import Chunk
from assay.models.evaluation import on_good_side
from assay.models.mrm import FailureClusters, ReviewItem, SuiteValidation, TopicModel
from assay.models.steps import Step
from assay.models.workflow import CALIBRATION_ANSWERS_PER_FORM, REVIEW_PAGE_SIZE
from assay.mrm.policies import proposed_name
from assay.names import person_name

REVIEWER_TITLE = "Your name"
REVIEWER_HELP = "Required: the decision is recorded under this name."
REFUSED = "NOT ACCEPTED, please correct: "  # opens a re-opened form's first field
BULK_TITLE = "How do you decide?"
REVIEW = "review the items below"
REVIEW_AND_MORE = "review the items below, then show me more"
NEXT_GROUP = "review the items below, then the next metric"
ACCEPT = "accept every proposal as shown"
SKIP = "skip"
MEANINGFUL = "meaningful: label its answers"
NOT_MEANINGFUL = "not meaningful for this system"
CONTEXT_CHARS = 400
ANSWER_CHARS = 300
EXCERPT_CHARS = 300
PAGE_TITLES = {
    Step.TOPIC_MODELING: "Topics found in the corpus",
    Step.TEST_VALIDATION: "Generated test cases",
    Step.CALIBRATION: "Do you agree with the metric?",
    Step.FAILURE_CLUSTERING: "Failure clusters",
}


@dataclass(frozen=True)
class ItemField:
    """One form field standing for one offered item (a topic, a case, an answer, a cluster)."""

    item_id: str
    title: str
    evidence: str  # the field's description: what a person must see to decide (escaped for both UIs)
    choices: tuple[str, ...] | None  # None: a text box (a name)
    proposal: str  # the field's starting value: what the step proposes
    unshown: str  # what the item is decided as when the person never sees it
    name: str = ""  # the item in words, for the record: 'topic 17 "disputes"', 'case gen-3 ("How do I...?")'
    group: str = ""  # items of one group (a calibrated metric) share forms; '' for steps without groups
    group_name: str = ""  # the group in words ('groundedness (Groundedness)')


@dataclass(frozen=True)
class FormAnswer:
    """One form's answer, mapped back to item ids."""

    values: dict[str, str]  # item id -> the choice (or name) for every item shown
    reviewer: str
    how: str  # REVIEW, REVIEW_AND_MORE or ACCEPT
    shown: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values, "reviewer": self.reviewer, "how": self.how, "shown": self.shown}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "FormAnswer":
        return cls(dict(data["values"]), str(data["reviewer"]), str(data["how"]), list(data["shown"]))


@dataclass(frozen=True)
class StepReview:
    """What one step asks a person: its items in the order they are worth a look, shown ``per_form`` at a
    time; the first form is the review unless the person asks for more. Items with a ``group`` (calibration:
    one metric) are paged group by group, each group's forms holding only its items: "show me more" continues
    the group, "the next metric" goes on to the next group's first form. Forms are numbered as pages, in
    that order; which pages a person sees depends on their answers (``next_page``)."""

    step: str
    heading: str  # what the step asks, one sentence
    items: tuple[ItemField, ...]
    per_form: int = REVIEW_PAGE_SIZE
    rest_word: str = "items"

    @property
    def offered(self) -> list[str]:
        return [item.item_id for item in self.items]

    @property
    def can_ask_for_more(self) -> bool:
        return self.step in {Step.TEST_VALIDATION, Step.CALIBRATION}

    @property
    def proposals(self) -> dict[str, str]:
        return {item.item_id: item.proposal for item in self.items}

    @property
    def forms(self) -> int:
        return len(self._pages)

    @cached_property
    def _pages(self) -> tuple[tuple[int, int], ...]:
        """Each form's items as an index range of ``items``: ``per_form`` at a time, never across a group; a
        group's marker (its first item, whose id is the group) rides with the group's first form."""
        size = max(1, self.per_form)
        pages: list[tuple[int, int]] = []
        start = 0
        while start < len(self.items):
            group = self.items[start].group
            end = start
            while end < len(self.items) and self.items[end].group == group:
                end += 1
            first = start + 1 if group and self.items[start].item_id == group else start
            pages += [(start if at == first else at, min(at + size, end)) for at in range(first, end, size)]
            if first == end:  # a marker without answers
                pages.append((start, end))
            start = end
        return tuple(pages) or ((0, 0),)

    def _first(self, number: int) -> int:
        """The index in ``items`` of form ``number``'s first item (past the end after the last form)."""
        return self._pages[number - 1][0] if number <= self.forms else len(self.items)

    def shown(self, number: int) -> tuple[ItemField, ...]:
        """The items of form ``number`` (1-based)."""
        start, end = self._pages[number - 1]
        return self.items[start:end]

    def next_page(self, number: int, how: str) -> int | None:
        """The form after form ``number`` answered with ``how``: the next of the same group (more), the next
        group's first (the next metric), or None (done)."""
        if how == REVIEW_AND_MORE and self._more_left(number):
            return number + 1
        if how == NEXT_GROUP:
            return self._next_group(number)
        return None

    def _next_group(self, number: int) -> int | None:
        group = self.shown(number)[0].group if self.shown(number) else ""
        if not group:
            return None
        later = [page for page in range(number + 1, self.forms + 1) if self.shown(page)[0].group != group]
        return later[0] if later else None

    def rest(self, number: int) -> str:
        """What the proposals decide for the items no form up to ``number`` shows, in counts."""
        if self.step == Step.CALIBRATION:
            return self._rest_of_calibration(number)
        left = self.items[self._first(number + 1) :]
        if not left:
            return f"Every one of the {len(self.items)} {self.rest_word} is in the forms so far."
        if self.step == Step.FAILURE_CLUSTERING:
            return f"{len(left)} more {self.rest_word} are not shown: they keep their proposed keyword names."
        counts = Counter(item.unshown for item in left)
        decided = ", ".join(f"{verb} {count}" for verb, count in sorted(counts.items()))
        more = f"; choose '{REVIEW_AND_MORE}' to see them" if self.can_ask_for_more else ""
        return f"{len(left)} more {self.rest_word} are not shown: the proposals {decided} of them{more}."

    def _rest_of_calibration(self, number: int) -> str:
        """This metric's answers not shown yet, and the metrics after it."""
        shown = self.shown(number)
        group = shown[0].group if shown else ""
        end = self._pages[number - 1][1]
        more = sum(1 for item in self.items[end:] if item.group == group)
        later = list(dict.fromkeys(item.group_name for item in self.items[end:] if item.group != group))
        parts = [
            f"{more} more sampled {self.rest_word} of this metric: choose '{REVIEW_AND_MORE}' to label them."
            if more
            else f"Every sampled {self.rest_word.rstrip('s')} of this metric is on the forms so far."
        ]
        if later:
            parts.append(
                f"Next metric: {later[0]}" + (f", then {len(later) - 1} more" if len(later) > 1 else "")
                + f" (choose '{NEXT_GROUP}'); a metric you do not label keeps its default threshold."
            )  # fmt: skip
        else:
            parts.append("This is the last sampled metric.")
        return " ".join(parts)

    def names(self, number: int) -> dict[str, str]:
        """Field name -> the item id it stands for (kept server-side)."""
        start = self._first(number)
        return {f"item_{start + index}": item.item_id for index, item in enumerate(self.shown(number), 1)}

    def form(self, number: int, values: Mapping[str, str] | None = None, error: str = "") -> type[RunInput]:
        """The ``RunInput`` to pause with: the bulk choice, the items' fields starting at the proposal (or the
        person's last answer when the form is shown again), the reviewer's name. A refused answer's reasons
        open the first field's description and the page's Markdown."""
        values = values or {}
        more = (REVIEW_AND_MORE,) if self._more_left(number) else ()
        next_group = (NEXT_GROUP,) if self._next_group(number) is not None else ()
        choices = (REVIEW, *more, *next_group, ACCEPT)
        last_how = values.get("how", REVIEW)
        definitions: dict[str, Any] = {
            "how": (
                Literal[choices],
                Field(
                    last_how if last_how in choices else REVIEW,
                    title=BULK_TITLE,
                    description=self._bulk_help(number, error),
                ),
            )
        }
        for name, item in zip(self.names(number), self.shown(number), strict=True):
            kind: Any = Literal[item.choices] if item.choices else str
            last = values.get(name, "")  # a refused blank shows the proposal again, not the blank
            shown = last if last.strip() else item.proposal
            definitions[name] = (kind, Field(shown, title=item.title, description=item.evidence))
        name = values.get("reviewer", "").strip()
        reviewer = (
            Field(name, title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1)
            if name
            else Field(title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1)
        )
        model = create_model(f"{_camel(self.step)}Review", __base__=RunInput, **definitions, reviewer=(str, reviewer))
        return model.with_initial_data(description=self._page_markdown(number, error))

    def answer(self, number: int, raw: Mapping[str, Any]) -> FormAnswer:
        """The form's answer by item id; with ``ACCEPT`` every shown item takes its proposal, whatever the
        fields say."""
        how = str(raw.get("how") or REVIEW)
        shown = self.shown(number)
        values = {
            item.item_id: str(raw[name]) if how != ACCEPT and name in raw else item.proposal
            for name, item in zip(self.names(number), shown, strict=True)
        }
        return FormAnswer(values, person_name(raw.get("reviewer") or ""), how, [item.item_id for item in shown])

    def form_problems(self, number: int, given: Mapping[str, Any]) -> list[str]:
        """What is wrong with the fields a form sent (``given``: only those it sent). Prefect's UI leaves out a
        field a person emptied, which would otherwise read as the proposal; and a person who changed items and
        then chose to accept every proposal is asked which they meant rather than have the changes dropped."""
        how = str(given.get("how") or REVIEW)
        fields = list(zip(self.names(number), self.shown(number), strict=True))
        if how == ACCEPT:
            changed = [item.title for name, item in fields
                       if name in given and _one_line(given[name]) != _one_line(item.proposal)]  # fmt: skip
            if not changed:
                return []
            return [f"you chose '{ACCEPT}' but changed {'; '.join(changed)}: choose '{REVIEW}' to keep your "
                    "changes, or put the proposals back"]  # fmt: skip
        emptied = [item.title for name, item in fields if name not in given]
        if not emptied:
            return []
        return [f"left empty: {'; '.join(emptied)}; an emptied field is not a decision: give each a value (the "
                "form shows its proposal again)"]  # fmt: skip

    def in_words(self, decision: Mapping[str, Any]) -> list[str]:
        """The step's decision item by item, each item named as its form showed it (an item no form offered,
        from an approvals file, by its id)."""
        named = {item.item_id: item.name or item.item_id for item in self.items}

        def name(item_id: object) -> str:
            return named.get(str(item_id), str(item_id))

        if self.step in (Step.TOPIC_MODELING, Step.TEST_VALIDATION):
            key = "excluded_topic_ids" if self.step == Step.TOPIC_MODELING else "excluded_case_keys"
            excluded = [f"{name(item)} excluded" for item in decision.get(key) or []]
            return excluded or [f"every {self.rest_word.rstrip('s')} kept"]
        if self.step == Step.CALIBRATION:
            labels = [
                f"{name(item)}: labelled {verdict}"
                for verdict, key in (("pass", "passed_item_ids"), ("fail", "failed_item_ids"))
                for item in decision.get(key) or []
            ]
            marked = [f"{name(metric)} marked {NOT_MEANINGFUL}" for metric in decision.get("not_meaningful") or []]
            return marked + labels or ["no answer labelled"]
        kept = set(decision.get("kept_proposed") or [])
        return [
            f'{name(item)} named "{_one_line(value)}"' + (" (the proposal, kept)" if item in kept else "")
            for item, value in (decision.get("names") or {}).items()
        ]

    def values_for_all(self, answers: Sequence[FormAnswer]) -> dict[str, str]:
        """Every item's value: what the person chose where a form showed it, else what an unseen item gets."""
        values = {item.item_id: item.unshown for item in self.items}
        for answer in answers:
            values.update(answer.values)
        return values

    def changed(self, answers: Sequence[FormAnswer]) -> list[str]:
        """Shown items whose answer differs from the proposal (a calibration skip is not a change)."""
        proposals = self.proposals
        return [
            item
            for answer in answers
            for item, value in answer.values.items()
            if value != SKIP and _one_line(value) != _one_line(proposals[item])
        ]

    def decision(self, values: Mapping[str, str]) -> dict[str, Any]:
        """The step's decision (same shape as its decision model) from the items' values."""
        if self.step == Step.TOPIC_MODELING:
            return {"excluded_topic_ids": [int(item) for item, value in values.items() if value == "exclude"]}
        if self.step == Step.TEST_VALIDATION:
            return {"excluded_case_keys": [item for item, value in values.items() if value == "exclude"]}
        if self.step == Step.CALIBRATION:
            # A metric marked not meaningful gives no labels: its answers were judged by a metric the reviewer
            # says does not apply.
            dropped = {item for item, value in values.items() if value == NOT_MEANINGFUL}
            group = {item.item_id: item.group for item in self.items}
            labels = {item: value for item, value in values.items() if group.get(item) not in dropped}
            return {
                "passed_item_ids": [item for item, value in labels.items() if value == "pass"],
                "failed_item_ids": [item for item, value in labels.items() if value == "fail"],
                "not_meaningful": sorted(dropped),
            }
        proposals = self.proposals
        names = {item: _one_line(value) for item, value in values.items()}
        kept = [item for item, name in names.items() if name == _one_line(proposals[item])]
        return {"names": names, "kept_proposed": kept}

    def _more_left(self, number: int) -> bool:
        """Whether "show me more" has a form to show: the next page, in the same group."""
        if not self.can_ask_for_more or number >= self.forms:
            return False
        return self.shown(number + 1)[0].group == self.shown(number)[0].group

    def _bulk_help(self, number: int, error: str) -> str:
        problems = [for_field_description(line) for line in _problems(error)]
        refused = [REFUSED + " / ".join(problems)] if problems else []
        parts = [
            *refused,
            f"{self.heading} {self._position(number)}",
            self.rest(number),
            "Every item below starts at its proposal (so the UI marks it Optional): leave it to agree, change it "
            "where you disagree.",
            f"'{ACCEPT}' takes every proposal below as it stands (recorded as accepted, not as reviewed).",
        ]
        if self.step == Step.CALIBRATION:
            parts.append(f"'{REVIEW}' ends the calibration with this form.")
        return "\n\n".join(parts)

    def _position(self, number: int) -> str:
        """Where form ``number`` stands: 'Form 2: cases 26-50 of 70, the most informative first.', or for a
        group 'Form 2: groundedness (Groundedness), answers 9-16 of its 20, nearest the threshold first.'"""
        shown = self.shown(number)
        if shown and shown[0].group:
            group = shown[0].group
            answers = [item for item in self.items if item.group == group and item.item_id != group]
            mine = [item for item in shown if item.item_id != group]
            start = answers.index(mine[0]) + 1 if mine else 0
            return (
                f"Form {number}: {shown[0].group_name}, {self.rest_word} {start}-{start + len(mine) - 1} of its "
                f"{len(answers)}, nearest the threshold first."
            )
        start = self._first(number) + 1
        return (
            f"Form {number}: {self.rest_word} {start}-{start + len(shown) - 1} of {len(self.items)}, the most "
            "informative first."
        )

    def _page_markdown(self, number: int, error: str) -> str:
        problems = [for_markdown_text(line) for line in _problems(error)]
        refused = ""
        if problems:
            listed = f" {problems[0]}" if len(problems) == 1 else "".join(f"\n- {p}" for p in problems)
            refused = f"**Not accepted, please correct:**{listed}\n\n---\n\n"
        return (
            f"{refused}### {PAGE_TITLES[self.step]}\n{for_markdown_text(self.heading)}\n\n"
            f"{for_markdown_text(self.rest(number))}\n\n"
            "Each item's evidence is under its title. Then enter your name and submit."
        )


def topic_review(topic_model: TopicModel, chunks: Sequence[Chunk], per_form: int = REVIEW_PAGE_SIZE) -> StepReview:
    """Largest topics first; each with its keywords and one chunk."""
    texts = {chunk.ref: chunk.text for chunk in chunks}
    ordered = sorted(topic_model.topics, key=lambda topic: (-len(topic.chunk_refs), topic.id))

    def field(index: int, topic: Any) -> ItemField:
        sample = next((texts[ref] for ref in topic.chunk_refs if ref in texts), topic.representative)
        evidence = _paragraphs(
            ("Keywords", ", ".join(topic.keywords[:8]), 200), ("Example chunk", sample or "none", EXCERPT_CHARS)
        )
        title = f"{index}. Topic {topic.id}: {_plain(topic.label, 60)} ({len(topic.chunk_refs)} chunks)"
        name = f'topic {topic.id} "{_plain(topic.label, 60)}"'
        return ItemField(str(topic.id), title, evidence, ("keep", "exclude"), "keep", "keep", name)

    fields = tuple(field(index, topic) for index, topic in enumerate(ordered, 1))
    heading = "Choose exclude for a topic to leave it out of test generation (proposed: keep every topic)."
    return StepReview(Step.TOPIC_MODELING, heading, fields, per_form, "topics")


def case_review(suite: TestSuite, validation: SuiteValidation, per_form: int = REVIEW_PAGE_SIZE) -> StepReview:
    """Flagged outliers first (proposed: exclude), then the cases least similar to their source."""
    checks = {check.test_case_key: check for check in validation.cases}
    cases = [case for _, case in suite.cases()]

    def rank(case: Any) -> tuple[int, float, str]:
        check = checks.get(case.key)
        cosine = check.cosine if check is not None and check.cosine is not None else 2.0
        return (0 if check is not None and check.outlier else 1, cosine, case.key)

    def field(index: int, case: Any) -> ItemField:
        check = checks.get(case.key)
        outlier = bool(check and check.outlier)
        measures = []
        if check is not None:
            measures = [
                f"{label} {value:.2f}"
                for label, value in (
                    ("cosine", check.cosine),
                    ("BERTScore F1", check.bertscore_f1),
                    ("NLI", check.nli_entailment),
                )
                if value is not None
            ]
        flag = "flagged outlier, proposed exclude" if outlier else "not flagged"
        title = f"{index}. Case {_plain(case.key, 50)}: {flag}"
        evidence = _paragraphs(
            ("Question", case.prompt, ANSWER_CHARS),
            ("Expected answer", case.expected_output, ANSWER_CHARS),
            ("Why flagged", "; ".join(check.reasons) if outlier and check else "", 300),
            ("Measures", ", ".join(measures) or "not validated", 120),
            ("Generator", case.generator or "unknown", 60),
        )
        proposal = "exclude" if outlier else "keep"
        name = f'case {_plain(case.key, 50)} ("{_plain(case.prompt, 80)}")'
        return ItemField(case.key, title, evidence, ("keep", "exclude"), proposal, proposal, name)

    fields = tuple(field(index, case) for index, case in enumerate(sorted(cases, key=rank), 1))
    heading = "Choose exclude to drop a case before evaluation (proposed: exclude the flagged outliers)."
    return StepReview(Step.TEST_VALIDATION, heading, fields, per_form, "cases")


def calibration_review(
    items: Sequence[ReviewItem], min_labels: int, per_form: int = CALIBRATION_ANSWERS_PER_FORM
) -> StepReview:
    """One metric at a time, in the sample's order (most decision-relevant first): first whether the metric is
    meaningful for this system, then its answers nearest the threshold, alternating sides. Each answer starts
    at the metric's verdict, so a label records whether the person confirmed or changed it, and carries what the
    metric read: the question, the retrieved passages, the expected answer where the metric uses it."""
    by_metric: dict[str, list[ReviewItem]] = {}
    for item in items:
        by_metric.setdefault(f"{item.evaluator_id}/{item.metric}", []).append(item)
    fields: list[ItemField] = []
    by_metric_seen: list[str] = []  # one marker field per metric so far: answers are numbered without them
    for metric, group in by_metric.items():
        by_metric_seen.append(metric)
        group_name = _metric_name(group[0])
        fields.append(
            ItemField(
                metric,
                f"Is {group_name} meaningful for this system?",
                for_field_description(
                    f"Choose '{NOT_MEANINGFUL}' if this metric does not judge what matters for this system: its "
                    "labels below are then not used, it keeps its default threshold and leaves the verdict."
                ),
                (MEANINGFUL, NOT_MEANINGFUL),
                MEANINGFUL,
                MEANINGFUL,
                group_name,
                metric,
                group_name,
            )
        )
        for item in _nearest_alternating(group):
            fields.append(_calibration_field(len(fields) + 1 - len(by_metric_seen), item, metric, group_name))
    heading = (
        "One metric at a time: each answer starts at the metric's verdict; keep it to confirm, change it where you "
        f"disagree, or skip. A threshold is refitted when the metric has {min_labels} labels, at least one of "
        f"them against its verdict, and its scores separate your passes from your fails ({len(by_metric)} metrics "
        "sampled)."
    )
    return StepReview(Step.CALIBRATION, heading, tuple(fields), per_form, "answers")


def _calibration_field(index: int, item: ReviewItem, metric: str, group_name: str) -> ItemField:
    verdict = "pass" if item.metric_passes else "fail"
    case = _plain(item.test_case_key, 40)
    title = f"{index}. {_plain(item.metric, 40)} says {verdict.upper()} ({_against(item)}), case {case}"
    contexts = " / ".join(short_line(text, CONTEXT_CHARS // 2) for text in item.contexts[:3])
    evidence = _paragraphs(
        ("Question", item.question, ANSWER_CHARS),
        ("Retrieved context", contexts or ("(none retrieved)" if "retrieved_context" in item.reads else ""),
         CONTEXT_CHARS),
        ("Expected answer", item.expected_output if _uses_expected(item) else "", ANSWER_CHARS),
        ("Answer", item.actual_output or "(empty)", ANSWER_CHARS),
        ("Verdict", _direction(item), 160),
        ("Metric", f"{item.evaluator_id}/{item.metric} on {item.model_key}", 120),
    )  # fmt: skip
    name = f"{_plain(item.metric, 40)} on case {case} ({_plain(item.model_key, 40)})"
    return ItemField(item.item_id, title, evidence, ("pass", "fail", SKIP), verdict, SKIP, name, metric, group_name)


def _uses_expected(item: ReviewItem) -> bool:
    """Whether the metric reads the expected answer (items recorded before ``reads`` existed: shown)."""
    return "expected_output" in item.reads or not item.reads


def _metric_name(item: ReviewItem) -> str:
    return item.metric if item.metric == item.evaluator_id else f"{item.metric} ({item.evaluator_id})"


def _nearest_alternating(group: Sequence[ReviewItem]) -> list[ReviewItem]:
    """The answers nearest the threshold first, taken in turn from the passing and the failing side (the side
    holding the nearest one first)."""
    sides = [sorted((item for item in group if item.metric_passes is side), key=_distance) for side in (False, True)]
    sides.sort(key=lambda side: _distance(side[0]) if side else (float("inf"), ""))
    return [side[turn] for turn in range(max(map(len, sides))) for side in sides if turn < len(side)]


_SIDES = {(True, True): "at or above", (True, False): "below", (False, True): "at or below", (False, False): "above"}
"""(higher is better, on the good side) -> where the score stands to its threshold, in words."""


def _direction(item: ReviewItem) -> str:
    """'higher is better: 0.620 is below 0.750, so FAIL'."""
    if item.threshold is None:
        return f"score {item.score:.3f}, no threshold"
    score, threshold = _numbers(item)
    good = on_good_side(item.score, item.threshold, item.higher_is_better)
    side = _SIDES[item.higher_is_better, good]
    better = "higher" if item.higher_is_better else "lower"
    return f"{better} is better: {score} is {side} {threshold}, so {'PASS' if item.metric_passes else 'FAIL'}"


def cluster_review(clusters: FailureClusters, per_form: int = REVIEW_PAGE_SIZE) -> StepReview:
    """Largest clusters first; each with its keywords and two example questions."""
    ordered = sorted(clusters.clusters, key=lambda cluster: (-cluster.size, cluster.id))

    def field(index: int, cluster: Any) -> ItemField:
        examples = " / ".join(short_line(question, 150) for question in cluster.example_questions[:2])
        evidence = _paragraphs(
            ("Keywords", ", ".join(cluster.keywords[:8]), 200), ("Example questions", examples or "none", 320)
        )
        title = f"{index}. Name of cluster {cluster.id} ({cluster.size} failures)"
        proposal = proposed_name(cluster)
        name = f"cluster {cluster.id} ({cluster.size} failures)"
        return ItemField(str(cluster.id), title, evidence, None, proposal, proposal, name)

    fields = tuple(field(index, cluster) for index, cluster in enumerate(ordered, 1))
    heading = "Name the weakness each cluster of failures shows (proposed: its top keywords)."
    return StepReview(Step.FAILURE_CLUSTERING, heading, fields, per_form, "clusters")


def _distance(item: ReviewItem) -> tuple[float, str]:
    return (abs(item.score - item.threshold) if item.threshold is not None else float("inf"), item.item_id)


def _against(item: ReviewItem) -> str:
    """'0.664 < 0.750'."""
    if item.threshold is None:
        return f"score {item.score:.3f}"
    score, threshold = _numbers(item)
    return f"{score} {'>=' if on_good_side(item.score, item.threshold, higher_is_better=True) else '<'} {threshold}"


def _numbers(item: ReviewItem) -> tuple[str, str]:
    """Score and threshold with digits added until they read apart ('0.74996' and '0.75000', never '0.750'
    twice)."""
    score, threshold = item.score, item.threshold if item.threshold is not None else item.score
    digits = 3
    while digits < 9 and score != threshold and f"{score:.{digits}f}" == f"{threshold:.{digits}f}":
        digits += 1
    return f"{score:.{digits}f}", f"{threshold:.{digits}f}"


def _paragraphs(*parts: tuple[str, object, int]) -> str:
    """'Label: text' paragraphs (empty texts left out), each shortened and escaped for both UIs."""
    shown = [(label, for_field_description(short_line(text, limit))) for label, text, limit in parts if str(text)]
    return "\n\n".join(f"{label}: {text}" for label, text in shown)


def _problems(error: str) -> list[str]:
    """A refusal's reasons, one a line."""
    return [line for line in error.splitlines() if line.strip()]


def _one_line(text: object) -> str:
    """Runs of white space (line breaks too) as one space, none at either end."""
    return " ".join(str(text).split())


def _plain(text: object, limit: int) -> str:
    """For a field's title (shown as plain text in both UIs): one short line, control characters visible."""
    return short_line(visible_controls(str(text)), limit)


def _camel(step: str) -> str:
    return re.sub(r"(?:^|-)(\w)", lambda match: match.group(1).upper(), step)
