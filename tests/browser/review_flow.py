"""A small flow that asks all four reviews on synthetic step outputs, for the browser test to answer.

Run as ``python -m tests.browser.review_flow OUT_DIR`` with a Prefect server's environment; it writes the
decisions it got to ``OUT_DIR/decisions.json`` (step -> stored decision) as each review completes.
"""

import json
import subprocess
import sys
import time
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
from tests.support.prefect_server import api


class ReviewRun:
    """The review flow's run as a browser test sees it through the API: each new pause, one per form."""

    def __init__(self, api_url: str, process: subprocess.Popen, log: Path, wait_s: float = 90) -> None:
        self.api_url, self.process, self.log, self.wait_s = api_url, process, log, wait_s
        self.id = ""
        self.seen: list[str] = []

    def state(self) -> dict:
        return api(self.api_url, f"/flow_runs/{self.id}")["state"]

    def next_pause(self) -> int:
        """Wait until the run pauses in a state not seen before (a new form); its number."""
        deadline = time.monotonic() + self.wait_s
        while time.monotonic() < deadline:
            if not self.id:
                mine = {"flows": {"name": {"any_": ["review-forms"]}}, "limit": 1}  # not the evaluations beside it
                runs = api(self.api_url, "/flow_runs/filter", mine)
                self.id = runs[0]["id"] if runs else ""
            if self.id:
                state = self.state()
                if state["type"] == "PAUSED" and state["id"] not in self.seen:
                    self.seen.append(state["id"])
                    return len(self.seen)
            assert self.process.poll() is None, f"the flow ended early:\n{self.log.read_text()[-3000:]}"
            time.sleep(0.5)
        raise AssertionError(f"no pause {len(self.seen) + 1} within {self.wait_s} s:\n{self.log.read_text()[-3000:]}")


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
