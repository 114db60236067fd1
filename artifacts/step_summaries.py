"""What each MRM step shows in the Prefect UI's Artifacts tab while the run goes on: a short Markdown summary
(counts, what the reviewer decided, what to look at next) and small tables a validator can sort and search.

Built from the step outputs the flow already holds, with the numbers of the workflow report's helpers, so the
control room and the final report never disagree. Topic labels, questions, answers, keywords and reviewer
names come from corpora, generators and systems under test: every text cell is shortened, then escaped for
Markdown (the UI renders table cells and descriptions as Markdown). Pure builders, no I/O, no Prefect."""

from collections import Counter
from collections.abc import Iterable, Sequence

from assay.artifacts.calibration_validity import validity_facts
from assay.artifacts.findings import find_problems, leaderboard
from assay.artifacts.workflow_report import (
    calibration_numbers,
    cluster_numbers,
    robustness_numbers,
    topic_numbers,
    validation_numbers,
)
from pydantic import BaseModel, ConfigDict

from assay.escaping import for_markdown_cell, for_markdown_text
from assay.models import TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.findings import Problem
from assay.models.mrm import (
    Calibration,
    Decision,
    FailureClusters,
    ReviewItem,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
)
from assay.models.steps import Step, step_title

Cell = str | int | float | None
Rows = list[dict[str, Cell]]
CELL_CHARS = 120
NONE = "—"


class StepSummary(BaseModel):
    """One step's page in the control room: ``tables`` maps a table name (letters, digits, dashes) to rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    markdown: str
    tables: dict[str, Rows] = {}


def text_cell(value: object, limit: int = CELL_CHARS) -> str:
    """Whitespace collapsed, cut to ``limit`` characters, then escaped (cut first: escaping lengthens it)."""
    text = " ".join(str(value).split())
    return for_markdown_cell(text if len(text) <= limit else text[: limit - 1] + "…")


def _number(value: float | None, digits: int = 3) -> float | str:
    return NONE if value is None else round(value, digits)


def _words(items: Iterable[object], limit: int = CELL_CHARS) -> str:
    return text_cell(", ".join(str(item) for item in items), limit)


def _counts(counts: Counter[str]) -> str:
    return _words((f"{name} {count}" for name, count in sorted(counts.items())), 400)


def _page(step: str, facts: Sequence[str], decision: str | None, next_look: str) -> str:
    """The summary's layout: title, facts as a list, the decision, then where to look next."""
    lines = [f"## {step_title(step)}", "", *(f"- {fact}" for fact in facts)]
    if decision is not None:
        lines += ["", f"**Decision:** {decision}"]
    return "\n".join([*lines, "", f"**Look next:** {next_look}", ""])


def who_decided(decision: Decision | Sequence[Decision] | None) -> str:
    """A person's name and where they decided (UI form, approvals file), else that the policy did. Several
    decisions (calibration's review pages) name each distinct reviewer once, without the times."""
    if decision is not None and not isinstance(decision, Decision):
        taken = list(decision)
        if len(taken) != 1:
            return "; ".join(dict.fromkeys(_who(item, when=False) for item in taken)) or who_decided(None)
        decision = taken[0]
    return "no reviewer (no decision recorded)" if decision is None else _who(decision, when=True)


def _who(decision: Decision, *, when: bool) -> str:
    if decision.decided_by == "policy":
        return "no reviewer (policy)"
    name = for_markdown_text(decision.reviewer) if decision.reviewer.strip() else "an unnamed reviewer"
    at = f" at {for_markdown_text(decision.decided_at)}" if when and decision.decided_at else ""
    review = decision.review
    how = ""
    if when and review is not None:
        how = (
            f" ({review.how}: {review.shown} of {review.offered} shown in {review.forms} form"
            f"{'s' * (review.forms != 1)}, {len(review.changed)} changed)"
        )
    return f"{name} via {decision.source}{at}{how}"


def summarise_topics(model: TopicModel, decision: Decision | None = None) -> StepSummary:
    numbers, _ = topic_numbers(model)
    excluded = set(decision.decision.get("excluded_topic_ids", [])) if decision else set()
    kept = ", ".join(f"{key}={value}" for key, value in model.config.items() if isinstance(value, str | int | float))
    facts = [
        f"{numbers['topics']} topics over {numbers['chunks']} chunks ({numbers['outlier_chunks']} outlier chunks)",
        f"silhouette {_number(model.silhouette)} (best of {numbers['configurations_tried']} configurations tried)",
        f"kept configuration: {text_cell(kept, 400)}",
    ]
    labels = [topic.label for topic in model.topics if topic.id in excluded]
    excluded_labels = _words(labels) or "none"
    said = None if decision is None else f"{who_decided(decision)} excluded {len(excluded)} topics: {excluded_labels}"
    topics = [
        {
            "id": topic.id,
            "label": text_cell(topic.label, 60),
            "keywords": _words(topic.keywords[:10]),
            "chunks": len(topic.chunk_refs),
            "excluded": "yes" if topic.id in excluded else "no",
        }
        for topic in model.topics
    ]
    grid = [
        {
            "configuration": index,
            "clustering": text_cell(record.get("clustering", "")),
            "min topic size": record.get("min_topic_size"),
            "silhouette": _number(record.get("silhouette")),
            "topics": record.get("topics"),
            "outliers": record.get("outliers"),
        }
        for index, record in enumerate(model.grid, start=1)
    ]
    look = "topics with few chunks or vague labels; topics excluded here get no test cases."
    return StepSummary(markdown=_page(Step.TOPIC_MODELING, facts, said, look), tables={"topics": topics, "grid": grid})


def summarise_generation(suite: TestSuite) -> StepSummary:
    cases = [case for _, case in suite.cases()]
    by_generator = Counter(case.generator or "unknown" for case in cases)
    by_topic = Counter(case.topic or "unknown" for case in cases)
    facts = [
        f"{len(cases)} test cases in {len(suite.tests)} tests",
        f"by generator: {_counts(by_generator)}",
        f"by topic: {_counts(by_topic)}",
    ]
    rows = [
        {
            "key": text_cell(case.key, 60),
            "topic": text_cell(case.topic or "", 60),
            "generator": text_cell(case.generator or "", 40),
            "question": text_cell(case.prompt),
            "expected answer": text_cell(case.expected_output),
        }
        for case in cases
    ]
    look = "a sample of questions per generator: do they read naturally and match the expected answers?"
    return StepSummary(markdown=_page(Step.TEST_GENERATION, facts, None, look), tables={"cases": rows})


def summarise_validation(
    validation: SuiteValidation, decision: Decision | None = None, suite: TestSuite | None = None
) -> StepSummary:
    """``suite`` adds each case's question to the table."""
    numbers, _ = validation_numbers(validation)
    questions = {case.key: case.prompt for _, case in suite.cases()} if suite else {}
    reasons = Counter(reason.split(" ")[0] for case in validation.cases for reason in case.reasons)
    thresholds = ", ".join(f"{key} {value:.3f}" for key, value in sorted(validation.thresholds.items()))
    facts = [
        f"{numbers['cases']} cases checked, {numbers['outliers']} flagged as outliers"
        + (f" ({_counts(reasons)})" if reasons else ""),
        f"mean cosine {_number(numbers['mean_cosine'])}; outlier cut-offs: {text_cell(thresholds or NONE)}",
        f"BERTScore: {text_cell(validation.bertscore_status)}; NLI: {text_cell(validation.nli_status)}",
    ]
    said = None
    if decision is not None:
        excluded = set(decision.decision.get("excluded_case_keys", []))
        flagged = {case.test_case_key for case in validation.cases if case.outlier}
        said = (
            f"{who_decided(decision)} excluded {len(excluded)} cases "
            f"({len(excluded & flagged)} of the {len(flagged)} flagged, {len(excluded - flagged)} others)"
        )
    rows = [
        {
            "key": text_cell(case.test_case_key, 60),
            **({"question": text_cell(questions.get(case.test_case_key, ""))} if suite else {}),
            "cosine": _number(case.cosine),
            "bertscore f1": _number(case.bertscore_f1),
            "nli entailment": _number(case.nli_entailment),
            "outlier": "yes" if case.outlier else "no",
            "reasons": _words(case.reasons),
        }
        for case in validation.cases
    ]
    look = "the flagged cases: a low cosine often means the expected answer is not in the source text."
    return StepSummary(markdown=_page(Step.TEST_VALIDATION, facts, said, look), tables={"cases": rows})


def summarise_evaluation(
    lab: TestLab, results: Sequence[EvaluationResult], problems: Sequence[Problem] | None = None
) -> StepSummary:
    """``problems`` are found here when the flow has not found them already."""
    found = list(find_problems(lab, results) if problems is None else problems)
    severities = Counter(problem.severity for problem in found)
    answered = sum(row.answered for row in lab.rows)
    board_rows: Rows = []
    for result in results:
        board = leaderboard(lab, result)
        primary = board["primary_metric"]
        for row in board["table"]:
            passed = result.aggregates[row["model_key"]][primary].passed
            board_rows.append(
                {
                    "evaluator": text_cell(board["evaluator"], 60),
                    "metric": text_cell(primary, 60),
                    "rank": row["rank"],
                    "model": text_cell(row["model_name"], 60),
                    "mean": _number(row[primary]),
                    "pass rate": _number(passed / row["scored"]) if row["scored"] else NONE,
                    "scored": row["scored"],
                    "unscored": row["unscored"],
                }
            )
    facts = [
        f"{len(lab.models)} models x {len({row.test_case.key for row in lab.rows})} cases: "
        f"{answered} of {len(lab.rows)} answered ({len(lab.rows) - answered} host errors)",
        f"{len(results)} evaluators: {_words(result.evaluator.id for result in results)}",
        "problems by severity: " + ", ".join(f"{level} {severities[level]}" for level in ("high", "medium", "low")),
    ]
    problem_rows = [
        {
            "severity": problem.severity,
            "type": text_cell(problem.problem_type, 40),
            "problem": text_cell(problem.description),
        }
        for problem in sorted(found, key=lambda problem: ("high", "medium", "low").index(problem.severity))
    ]
    look = "the high-severity problems, then each evaluator's lowest-ranked model and its unscored count."
    return StepSummary(
        markdown=_page(Step.AUTOMATED_EVALUATION, facts, None, look),
        tables={"leaderboard": board_rows, "problems": problem_rows},
    )


def summarise_calibration(
    calibration: Calibration, decision: Decision | Sequence[Decision] | None = None
) -> StepSummary:
    """``decision`` is the reviewer's labelling (who, where, when), one per review page; without one no person
    labelled. Each metric's agreement with the labels follows, one line each (``artifacts.calibration_validity``)."""
    numbers, _ = calibration_numbers(calibration)
    labelled_by = who_decided(decision)
    facts = [
        f"{numbers['calibrated']} of {numbers['metrics']} metrics calibrated from {numbers['labels']} labels "
        f"in {numbers['rounds']} rounds",
        f"labelled by {labelled_by}",
        f"{numbers['human_passed_failures']} answers failed by a metric were passed by the reviewer",
        *validity_facts(calibration),
    ]
    rows = [
        {
            "evaluator": text_cell(item.evaluator_id, 60),
            "metric": text_cell(item.metric, 60),
            "better": "higher" if item.higher_is_better else "lower",
            "default threshold": _number(item.default_threshold),
            "calibrated threshold": _number(item.calibrated_threshold),
            "labels": item.labels,
            "agreement before": _number(item.agreement_before),
            "agreement after": _number(item.agreement_after),
            "interval": NONE if item.interval is None else f"{item.interval[0]:.3f} – {item.interval[1]:.3f}",
            "stable": "yes" if item.stable else "no",
            "labelled by": labelled_by,
        }
        for item in calibration.metrics
    ]
    look = "metrics left at their default ('—'): they had too few or one-sided labels; label more answers."
    return StepSummary(markdown=_page(Step.CALIBRATION, facts, None, look), tables={"thresholds": rows})


def summarise_review_sample(items: Sequence[ReviewItem]) -> StepSummary:
    """Before the calibration review: the sampled answers the reviewer is asked about, per metric."""
    per_metric = Counter(f"{item.evaluator_id} / {item.metric}" for item in items)
    facts = [
        f"{len(items)} answers sampled for review over {len(per_metric)} metrics, half of them nearest the threshold",
        "the review form starts each answer at the metric's verdict; the reviewer confirms or changes it",
    ]
    rows = [
        {
            "metric": text_cell(f"{item.evaluator_id} / {item.metric}", 60),
            "case": text_cell(item.test_case_key, 60),
            "score": _number(item.score),
            "threshold": _number(item.threshold),
            "metric says": "pass" if item.metric_passes else "fail",
            "question": text_cell(item.question),
        }
        for item in items
    ]
    look = "the review form of this run (Resume): answers nearest their threshold come first."
    return StepSummary(markdown=_page(Step.CALIBRATION, facts, None, look), tables={"review-sample": rows})


def summarise_clusters(clusters: FailureClusters, decision: Decision | None = None) -> StepSummary:
    numbers, _ = cluster_numbers(clusters)
    facts = [f"{numbers['failures']} failed answers in {numbers['clusters']} clusters"]
    if clusters.message:
        facts.append(text_cell(clusters.message, 300))
    said = None
    if decision is not None:  # names a person left as proposed came from the proposal, not from them
        kept = {str(cluster) for cluster in decision.decision.get("kept_proposed") or []}
        given = sum(bool(cluster.weakness) and str(cluster.id) not in kept for cluster in clusters.clusters)
        said = f"{who_decided(decision)} named {given} of {len(clusters.clusters)} clusters"
        said += f"; {len(kept)} kept the proposed keyword name" if kept else ""
    rows = [
        {
            "id": cluster.id,
            "weakness": text_cell(cluster.weakness or NONE, 80),
            "size": cluster.size,
            "keywords": _words(cluster.keywords[:8]),
            "example question": text_cell(cluster.example_questions[0] if cluster.example_questions else ""),
        }
        for cluster in clusters.clusters
    ]
    look = "the largest clusters: their weakness names feed the system-prompt extension."
    return StepSummary(
        markdown=_page(Step.FAILURE_CLUSTERING, facts, said, look),
        tables={"clusters": rows},
    )


def summarise_weaknesses(report: WeaknessReport) -> StepSummary:
    """The topic x question-type grid, one row per cell (model, topic, question type) and metric."""
    grid: Rows = []
    weakest: Rows = []
    for metric in report.metrics:
        for group, cells in metric.grid.items():
            model_key, _, topic = group.partition(":")
            grid += [
                {
                    "evaluator": text_cell(metric.evaluator_id, 60),
                    "metric": text_cell(metric.metric, 60),
                    "model": text_cell(model_key, 60),
                    "topic": text_cell(topic, 60),
                    "question type": text_cell(kind, 40),
                    "mean": _number(stat.mean),
                    "cases": stat.cases,
                    "pass rate": _number(stat.pass_rate),
                }
                for kind, stat in cells.items()
            ]
        weakest += [
            {
                "evaluator": text_cell(metric.evaluator_id, 60),
                "metric": text_cell(metric.metric, 60),
                "group": text_cell(group),
            }
            for group in metric.weakest
        ]
    facts = [f"{len(report.metrics)} primary metrics broken down by topic x question type; {len(weakest)} weak groups"]
    facts += [f"{row['evaluator']} / {row['metric']}: {row['group']}" for row in weakest[:5]]
    look = "the weakest groups: a topic weak for every question type points at the corpus, not the model."
    return StepSummary(
        markdown=_page(Step.WEAKNESS_DETECTION, facts, None, look),
        tables={"grid": grid, "weakest": weakest},
    )


def summarise_robustness(reports: Sequence[RobustnessReport], step: str) -> StepSummary:
    """``step`` is ``Step.ROBUSTNESS_INPUT_VARIATIONS`` or ``Step.ROBUSTNESS_ADVERSARIAL``; the reports of that kind
    count."""
    kind = {Step.ROBUSTNESS_INPUT_VARIATIONS: "input_variations", Step.ROBUSTNESS_ADVERSARIAL: "adversarial"}[step]
    numbers, details = robustness_numbers(reports, kind)
    rows: Rows = [
        {
            "evaluator": text_cell(item["evaluator_id"], 60),
            "metric": text_cell(item["metric"], 60),
            "perturbator": text_cell(name, 60),
            "cases": count["cases"],
            "flips": count["flips"],
            "flip rate": _number(count["flips"] / count["cases"]) if count["cases"] else NONE,
            "pass to fail": count["pass_to_fail"],
            "fail to pass": count["fail_to_pass"],
        }
        for item in details["by_evaluator"]
        for name, count in item["by_perturbator"].items()
    ]
    worst = max(rows, key=lambda row: (row["flips"], row["perturbator"]), default=None)
    rate = _number(numbers["flips"] / numbers["cases"]) if numbers["cases"] else NONE
    facts = [f"{numbers['flips']} verdict flips over {numbers['cases']} perturbed cases (flip rate {rate})"]
    if worst is not None and worst["flips"]:
        facts.append(f"most flips: {worst['perturbator']} ({worst['flips']} on {worst['evaluator']})")
    look = "perturbators with a high flip rate: the verdict there depends on wording, not on the content."
    return StepSummary(markdown=_page(step, facts, None, look), tables={"flips": rows})
