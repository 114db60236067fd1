"""A small flow that asks all four reviews on synthetic step outputs, for the browser test to answer.

Run as ``python -m tests.browser.review_flow OUT_DIR`` with a Prefect server's environment; it writes the
decisions it got to ``OUT_DIR/decisions.json`` (step -> stored decision) as each review completes.
"""

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.flows.review import ReviewContext, review_calibration, review_cases, review_clusters, review_topics
from prefect import flow

from assay.models import Chunk, Test, TestCase, TestSuite
from assay.models.mrm import (
    CaseValidation,
    FailureCluster,
    FailureClusters,
    ReviewItem,
    SuiteValidation,
    Topic,
    TopicModel,
)
from assay.mrm.approvals import DecisionStore
from assay.storage.artifacts import ArtifactStore
from assay.storage.local import LocalObjectStore

HOSTILE = "<script>alert(1)</script> [click](javascript:alert(1)) | # not a heading"


def chunks() -> list[Chunk]:
    texts = [
        "Refunds are paid within 14 days of a returned order.",
        "A refund needs the original receipt; store credit otherwise.",
        f"Shipping to islands takes five days. {HOSTILE}",
        "Express shipping costs 12 euros per parcel.",
        "Passwords must be reset every 90 days.",
        "Two-factor login uses an authenticator app.",
    ]
    return [
        Chunk(doc_uri=f"docs/policy-{index // 2}.md", index=index % 2, text=text) for index, text in enumerate(texts)
    ]


def topic_model() -> TopicModel:
    groups = [("refunds", ["refund", "receipt"]), ("shipping", ["shipping", "parcel"]), ("security", ["password"])]
    topics = [
        Topic(
            id=index,
            label=f"{label} | {HOSTILE}" if index == 1 else label,
            keywords=keywords,
            chunk_refs=[f"docs/policy-{index}.md#0", f"docs/policy-{index}.md#1"],
        )
        for index, (label, keywords) in enumerate(groups)
    ]
    return TopicModel(topics=topics, config={"k": 3}, silhouette=0.4)


def suite() -> tuple[TestSuite, SuiteValidation]:
    questions = [
        "How fast are refunds paid?",
        "What does express shipping cost?",
        HOSTILE,
        "How often reset passwords?",
    ]
    cases = [
        TestCase(key=f"case-{n}", prompt=question, expected_output=f"answer {n}", generator="question-generator")
        for n, question in enumerate(questions, 1)
    ]
    checks = [
        CaseValidation(
            test_case_key=case.key,
            cosine=0.8 - 0.5 * (case.key == "case-3"),
            bertscore_f1=0.7,
            outlier=case.key == "case-3",
            reasons=["far from its source"] if case.key == "case-3" else [],
        )
        for case in cases
    ]
    return TestSuite(name="shop", tests=[Test(key="t", test_cases=cases)]), SuiteValidation(
        cases=checks, nli_status="model absent"
    )


def _sampled(evaluator: str, metric: str, threshold: float, **per_case: Callable[[int], Any]) -> list[ReviewItem]:
    """Ten answers of one metric, scored 0.1 to 1.0; ``per_case``: fields as functions of the case number."""
    fields: dict[str, Callable[[int], Any]] = {
        "question": lambda n: f"Question {n}?",
        "expected_output": lambda n: f"expected {n}",
        "actual_output": lambda n: f"actual {n}",
        **per_case,
    }
    return [
        ReviewItem(
            item_id=f"{evaluator}/{metric}/sample-rag/case-{n}",
            evaluator_id=evaluator,
            metric=metric,
            model_key="sample-rag",
            test_case_key=f"case-{n}",
            score=n / 10,
            metric_passes=n / 10 >= threshold,
            threshold=threshold,
            **{name: value(n) for name, value in fields.items()},
        )
        for n in range(1, 11)
    ]


def review_items() -> list[ReviewItem]:
    hostile_second = {"actual_output": lambda n: HOSTILE if n == 2 else f"actual {n}"}
    return _sampled("answer_similarity", "similarity", 0.5, **hostile_second)


def grounded_items() -> list[ReviewItem]:
    """A second sampled metric, one that reads the retrieved passages and not the expected answer."""
    return _sampled(
        "groundedness",
        "groundedness",
        0.7,
        reads=lambda n: ["question", "actual_output", "retrieved_context"],
        contexts=lambda n: [f"Passage {n} says refunds take {n} days."],
    )


def clusters() -> FailureClusters:
    return FailureClusters(
        clusters=[
            FailureCluster(
                id=0,
                size=3,
                row_keys=["m:case-1"],
                keywords=["refund", "days", "paid"],
                example_questions=["How fast are refunds paid?"],
            ),
            FailureCluster(
                id=1, size=2, row_keys=["m:case-2"], keywords=["shipping", "cost"], example_questions=[HOSTILE]
            ),
        ],
        failures=5,
    )


@flow(name="review-forms")
def review_forms(out: str) -> None:
    folder = Path(out)
    ctx = ReviewContext(
        store=DecisionStore(ArtifactStore(LocalObjectStore(folder / "store")), "run-1"),
        interactive=True,
        approvals=None,
        page_size=4,
        poll_s=1,
    )
    found: dict[str, dict] = {}

    def keep(decision) -> None:
        found[decision.step] = decision.model_dump(mode="json")
        (folder / "decisions.json").write_text(json.dumps(found, indent=2))

    keep(review_topics(topic_model(), chunks(), ctx))
    keep(review_cases(*suite(), ctx))
    keep(review_calibration(grounded_items() + review_items(), ctx, min_labels=6, per_form=4))
    keep(review_clusters(clusters(), ctx))


if __name__ == "__main__":
    review_forms(sys.argv[1])
