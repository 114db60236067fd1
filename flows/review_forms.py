"""The review forms a person fills in the Prefect UI, built per pause: one field per item, no ids to type.

What the Prefect 3.8 UI (the default V2 UI, checked in chromium) does with a ``RunInput`` model: a
``Literal[...]`` field renders as a select whose label is the field's title, a ``str`` field as a text box,
fields keep their order, a field with a default is marked "(Optional)", and a missing required field is
refused by the server with a message naming it. The pause's description renders as Markdown, but a
field's description is shown as plain text. So every item's details (escaped corpus and answer text) go in
the page's Markdown description, numbered like the fields; a field's title and description carry only a
short plain line. Field names are ``item_1``, ``item_2``... (identifiers); the page keeps which id each
name stands for, so ids never travel through the browser.
"""

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prefect.input import RunInput
from pydantic import Field, create_model

from assay.escaping import for_markdown_text, visible_controls
from assay.models import TestSuite
from assay.models.corpus import Chunk
from assay.models.mrm import FailureClusters, ReviewItem, SuiteValidation, TopicModel

REVIEWER_TITLE = "Your name"
REVIEWER_HELP = "Required: the decision is recorded under this name."
EXCERPT_CHARS = 280
ANSWER_CHARS = 400


@dataclass(frozen=True)
class ItemField:
    """One form field standing for one offered item (a topic, a case, an answer, a cluster)."""

    item_id: str
    title: str
    help: str
    choices: tuple[str, ...] | None
    default: str


@dataclass(frozen=True)
class FormPage:
    """One pause's form: its fields, the Markdown shown above them, and how an answer maps back to ids."""

    step: str
    number: int
    of: int
    fields: tuple[ItemField, ...]
    description: str

    @property
    def offered(self) -> list[str]:
        return [item.item_id for item in self.fields]

    @property
    def names(self) -> dict[str, str]:
        """Field name -> the item id it stands for (kept server-side)."""
        return {f"item_{index}": item.item_id for index, item in enumerate(self.fields, 1)}

    def form(self, values: dict[str, str] | None = None, error: str = "") -> type[RunInput]:
        """The ``RunInput`` to pause with: defaults are the proposal, or the person's last answer when the
        form is shown again, with the reason it was not accepted at the top."""
        values = values or {}
        definitions: dict[str, Any] = {}
        for name, item in zip(self.names, self.fields, strict=True):
            kind: Any = Literal[item.choices] if item.choices else str
            last = values.get(name, "")  # a refused blank shows the proposal again, not the blank
            shown = last if last.strip() else item.default
            definitions[name] = (kind, Field(shown, title=item.title, description=item.help))
        name = values.get("reviewer", "").strip()
        reviewer = (
            Field(name, title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1)
            if name
            else Field(title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1)
        )
        model = create_model(f"{_camel(self.step)}Review", __base__=RunInput, **definitions, reviewer=(str, reviewer))
        return model.with_initial_data(description=refusal(error) + self.description)

    def decision(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The step's decision (same shape as its decision model) from the answered fields."""
        chosen = {self.names[name]: str(value) for name, value in answer.items() if name in self.names}
        if self.step == "topic-modeling":
            return {"excluded_topic_ids": [int(item) for item, value in chosen.items() if value == "exclude"]}
        if self.step == "test-validation":
            return {"excluded_case_keys": [item for item, value in chosen.items() if value == "exclude"]}
        if self.step == "calibration":
            return {
                "passed_item_ids": [item for item, value in chosen.items() if value == "pass"],
                "failed_item_ids": [item for item, value in chosen.items() if value == "fail"],
            }
        names = {item: " ".join(value.split()) for item, value in chosen.items()}
        proposed = {item.item_id: " ".join(item.default.split()) for item in self.fields}
        return {"names": names, "kept_proposed": [item for item, name in names.items() if name == proposed[item]]}


def refusal(error: str) -> str:
    """What opens a form shown again: the reasons the last answer was refused (one a line, each naming the
    field and what is expected) above everything else, set off by a rule, so they are the first thing the
    person reads; the UI closes the dialog on Resume either way, so the re-opened form is where they show."""
    problems = [for_markdown_text(line) for line in error.splitlines() if line.strip()]
    if not problems:
        return ""
    listed = f" {problems[0]}" if len(problems) == 1 else "".join(f"\n- {problem}" for problem in problems)
    return f"**Not accepted, please correct:**{listed}\n\n---\n\n"


def merge_decisions(step: str, parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One decision from the pages' decisions (lists joined, names merged)."""
    merged: dict[str, Any] = {"names": {}, "kept_proposed": []} if step == "failure-clustering" else {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, dict):
                merged.setdefault(key, {}).update(value)
            else:
                merged[key] = [*merged.get(key, []), *value]
    return merged


def topic_pages(topic_model: TopicModel, chunks: Sequence[Chunk], page_size: int) -> list[FormPage]:
    texts = {chunk.ref: chunk.text for chunk in chunks}

    def section(index: int, topic: Any) -> str:
        samples = [texts[ref] for ref in topic.chunk_refs if ref in texts][:2] or [topic.representative]
        quotes = "\n\n".join(f"> {_md(sample, EXCERPT_CHARS)}" for sample in samples if sample)
        return (
            f"**{index}. Topic {topic.id}** ({len(topic.chunk_refs)} chunks) — keywords: "
            f"{_md(', '.join(topic.keywords[:8]), 200)}\n\n{quotes}"
        )

    fields = [
        ItemField(
            str(t.id),
            f"{i}. Topic {t.id}: {_plain(t.label, 60)}",
            f"{len(t.chunk_refs)} chunks",
            ("keep", "exclude"),
            "keep",
        )
        for i, t in enumerate(topic_model.topics, 1)
    ]
    intro = "### Topics found in the corpus\nChoose **exclude** for a topic to leave it out of test generation."
    return _paginate("topic-modeling", fields, topic_model.topics, section, intro, page_size)


def case_pages(suite: TestSuite, validation: SuiteValidation, page_size: int) -> list[FormPage]:
    checks = {check.test_case_key: check for check in validation.cases}
    cases = [case for _, case in suite.cases()]

    def section(index: int, case: Any) -> str:
        check = checks.get(case.key)
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
        flag = f"\n- **flagged**: {_md('; '.join(check.reasons), 300)}" if check and check.outlier else ""
        return (
            f"**{index}. {_md(case.key, 80)}** (generator: {_md(case.generator or 'unknown', 40)}; "
            f"{', '.join(measures) or 'not validated'})\n- question: {_md(case.prompt, 300)}\n"
            f"- expected answer: {_md(case.expected_output, ANSWER_CHARS)}{flag}"
        )

    def field(index: int, case: Any) -> ItemField:
        check = checks.get(case.key)
        outlier = bool(check and check.outlier)
        hint = "flagged as an outlier: proposed exclude" if outlier else "not flagged"
        return ItemField(
            case.key,
            f"{index}. Case {_plain(case.key, 60)}",
            hint,
            ("keep", "exclude"),
            "exclude" if outlier else "keep",
        )

    fields = [field(index, case) for index, case in enumerate(cases, 1)]
    intro = (
        "### Generated test cases\nFlagged outliers are set to **exclude**; change any choice to keep or drop "
        "a case before evaluation."
    )
    return _paginate("test-validation", fields, cases, section, intro, page_size)


def calibration_pages(items: Sequence[ReviewItem], page_size: int, min_labels: int) -> list[FormPage]:
    per_metric = Counter(f"{item.evaluator_id}/{item.metric}" for item in items)

    def verdict(item: ReviewItem) -> str:
        if item.threshold is None:
            return f"metric says {'pass' if item.metric_passes else 'fail'} (score {item.score:.3f})"
        sign = (">=" if item.metric_passes else "<") if item.higher_is_better else ("<=" if item.metric_passes else ">")
        word = "pass" if item.metric_passes else "fail"
        return f"metric says {word} (score {item.score:.3f} {sign} threshold {item.threshold:.3f})"

    def section(index: int, item: ReviewItem) -> str:
        return (
            f"**{index}. {_md(item.evaluator_id)}/{_md(item.metric)}** on {_md(item.model_key, 60)}, case "
            f"{_md(item.test_case_key, 60)}: {verdict(item)}\n- question: {_md(item.question, 300)}\n"
            f"- expected answer: {_md(item.expected_output, ANSWER_CHARS)}\n"
            f"- actual answer: {_md(item.actual_output, ANSWER_CHARS)}"
        )

    fields = [
        ItemField(
            item.item_id,
            f"{i}. {_plain(item.metric, 40)} on case {_plain(item.test_case_key, 40)}",
            verdict(item),
            ("pass", "fail", "skip"),
            "skip",
        )
        for i, item in enumerate(items, 1)
    ]
    needs = "; ".join(f"{_md(metric)}: {count} offered" for metric, count in sorted(per_metric.items()))
    intro = (
        "### Do you agree with the metric?\nFor each answer choose **pass** (acceptable) or **fail** "
        f"(unacceptable), or **skip** it. A metric's threshold is refitted from your labels once it has at least "
        f"**{min_labels} labels**, both passes and fails among them ({needs}); with fewer, its default stays."
    )
    return _paginate("calibration", fields, list(items), section, intro, page_size)


def cluster_pages(clusters: FailureClusters, page_size: int) -> list[FormPage]:
    def section(index: int, cluster: Any) -> str:
        examples = "\n".join(f"  - {_md(question, 200)}" for question in cluster.example_questions[:3])
        return (
            f"**{index}. Cluster {cluster.id}** ({cluster.size} failures) — keywords: "
            f"{_md(', '.join(cluster.keywords[:8]), 200)}\n- example questions:\n{examples or '  - none'}"
        )

    fields = [
        ItemField(
            str(c.id),
            f"{i}. Name of cluster {c.id}",
            f"{c.size} failures; proposed: its top keywords",
            None,
            _plain(", ".join(c.keywords[:3]), 80),
        )
        for i, c in enumerate(clusters.clusters, 1)
    ]
    intro = "### Failure clusters\nName the weakness each cluster shows (the keyword name is proposed)."
    return _paginate("failure-clustering", fields, clusters.clusters, section, intro, page_size)


def _paginate(step: str, fields: list[ItemField], items: Sequence[Any], section: Any, intro: str, size: int):
    """Split into pages of ``size`` fields, each page's Markdown describing its own items only."""
    size = max(1, size)
    count = (len(fields) + size - 1) // size
    pages = []
    for start in range(0, len(fields), size):
        number = start // size + 1
        sections = [section(index, item) for index, item in enumerate(items[start : start + size], start + 1)]
        heading = (
            f"{intro}\n\n**Page {number} of {count}** (items {start + 1}-{start + len(sections)} of {len(fields)})"
        )
        description = "\n\n".join([heading, *sections, "Then enter your name and press **Resume**."])
        pages.append(FormPage(step, number, count, tuple(fields[start : start + size]), description))
    return pages


def _shorten(text: object, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _md(text: object, limit: int = 120) -> str:
    """Text from a corpus, a generator or the system under test, shortened and escaped for Markdown."""
    return for_markdown_text(_shorten(text, limit))


def _plain(text: object, limit: int) -> str:
    """For a field's title (shown as plain text): one short line, control characters made visible."""
    return _shorten(visible_controls(str(text)), limit)


def _camel(step: str) -> str:
    return re.sub(r"(?:^|-)(\w)", lambda match: match.group(1).upper(), step)
