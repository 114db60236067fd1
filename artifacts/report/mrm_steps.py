"""The interpretation of an MRM run's first steps (overview, topics, generated cases, calibration): plain
JSON-ready dicts built from the run's published documents, which the HTML sections then render, so the page
and ``interpretation.json`` never disagree.

Every decision names who took it: a person (with where they decided: the Prefect UI or an approvals file) or
the step's policy, which is never presented as a person's judgement. A missing or unreadable document makes
its part ``available: False`` with a message; nothing here raises on a partial run. Pure, no I/O."""

from collections import Counter
from typing import Any, TypeVar

from assay.artifacts.report.run_documents import RunDocuments
from pydantic import BaseModel, ValidationError

from assay.models import TestSuite
from assay.models.mrm import Calibration, Decision, MetricCalibration, SuiteValidation, TopicModel, WorkflowSummary
from assay.models.steps import DECIDED_STEPS, Step, step_title
from assay.models.thresholds import NO_REVIEWER, ThresholdBook

Model = TypeVar("Model", bound=BaseModel)
NOT_RUN = "step not run / no output"
_PARAMETER_SKIP = {"hosts"}


def load(run: RunDocuments, name: str, model: type[Model]) -> tuple[Model | None, str]:
    """The document parsed as ``model``, or None with why (absent, or the first validation error). Keys the
    export adds beside the model's own (the workflow summary's ``timing``) are not the model's to check."""
    document = run.get(name)
    if document is None:
        return None, f"{name}: {NOT_RUN}"
    if isinstance(document, dict):
        document = {key: value for key, value in document.items() if key in model.model_fields}
    try:
        return model.model_validate(document), ""
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "document"
        return None, f"{name}: unreadable ({where}: {first['msg']})"


def missing(message: str) -> dict[str, Any]:
    return {"available": False, "message": message}


def decisions(run: RunDocuments) -> dict[str, Decision]:
    """step -> the decision recorded for it, from the workflow summary (else the report's step sections)."""
    summary, _ = load(run, "workflow_summary.json", WorkflowSummary)
    if summary is not None:
        return {decision.step: decision for decision in summary.decisions}
    found: dict[str, Decision] = {}
    for step in (run.get("report.json") or {}).get("steps", []):
        for recorded in step.get("decisions", []):
            try:
                found[step["step"]] = Decision.model_validate({**recorded, "step": step["step"]})
            except (ValidationError, KeyError):
                continue
    return found


def who(decision: Decision | None) -> dict[str, str]:
    """Who decided, as shown: a person's name and source, or the policy (never called a person's)."""
    if decision is None:
        return {
            "decided_by": "no decision recorded",
            "who": "no decision recorded",
            "reviewer": "",
            "source": "",
            "note": "",
            "decided_at": "",
        }
    if decision.decided_by == "policy":
        return {
            "decided_by": "policy",
            "who": "policy (no reviewer)",
            "reviewer": "",
            "source": decision.source,
            "note": decision.note,
            "decided_at": decision.decided_at,
        }
    name = " ".join(decision.reviewer.split()) or "an unnamed reviewer"
    return {
        "decided_by": "person",
        "who": f"{name} via {decision.source}",
        "reviewer": name,
        "source": decision.source,
        "note": decision.note,
        "decided_at": decision.decided_at,
    }


def overview(run: RunDocuments, taken: dict[str, Decision]) -> dict[str, Any]:
    record = run.get("run.json") or {}
    parameters = record.get("parameters") or {}
    summary, problem = load(run, "workflow_summary.json", WorkflowSummary)
    steps = []
    for step in dict.fromkeys([*Step, *(summary.steps if summary else {})]):
        recorded = summary.steps.get(step) if summary else None
        has_output = any(name.startswith(f"{step}/") for name in run.documents)
        status = recorded.get("status", "completed") if recorded else "output present" if has_output else NOT_RUN
        counts = {key: value for key, value in (recorded or {}).items() if key not in ("status", "wall_s", "artifacts")}
        steps.append(
            {
                "step": step,
                "title": step_title(step),
                "status": status,
                "wall_s": (recorded or {}).get("wall_s"),
                "counts": counts,
            }
        )
    hosts = [
        {
            "key": host.get("key", ""),
            "name": host.get("name", ""),
            "type": host.get("type", ""),
            "url": host.get("url", ""),
        }
        for host in parameters.get("hosts") or []
    ]
    return {
        "available": True,
        "run_id": run.run_id,
        "status": record.get("status"),
        "started_at": record.get("started_at"),
        "finished_at": record.get("finished_at"),
        "corpus": parameters.get("corpus") or "the bundled sample corpus (default)",
        "hosts": hosts,
        "parameters": {key: value for key, value in parameters.items() if key not in _PARAMETER_SKIP},
        "steps": steps,
        "summary_message": problem if summary is None else "",
        "timing": (run.get("workflow_summary.json") or {}).get("timing") or {},
        "decisions": [
            {
                "step": step,
                "title": step_title(step),
                **who(taken.get(step)),
                "decision": _decision_counts(taken.get(step)),
                "in_words": taken[step].in_words if step in taken else [],
                "record": _artifact_of(record, step),
            }
            for step in DECIDED_STEPS
        ],
    }


def _artifact_of(record: dict[str, Any], step: str) -> str:
    """The decision's artifact version as run.json lists it ('<name> v<n>, sha256 <first 12>'), so a reader
    can fetch and verify it (``assay artifacts get|verify``); empty when the run lists none."""
    for entry in record.get("decisions") or []:
        if isinstance(entry, dict) and entry.get("step") == step and entry.get("artifact"):
            return f"{entry['artifact']} v{entry.get('version')}, sha256 {str(entry.get('sha256', ''))[:12]}"
    return ""


def _decision_counts(decision: Decision | None) -> dict[str, int]:
    if decision is None:
        return {}
    return {key: len(value) if isinstance(value, list | dict) else value for key, value in decision.decision.items()}


def topics(run: RunDocuments, taken: dict[str, Decision]) -> dict[str, Any]:
    model, problem = load(run, "topic-modeling/topics.json", TopicModel)
    if model is None:
        return missing(problem)
    decision = taken.get(Step.TOPIC_MODELING)
    excluded = set(decision.decision.get("excluded_topic_ids", [])) if decision else set()
    by = who(decision)["who"]
    return {
        "available": True,
        "silhouette": model.silhouette,
        "config": model.config,
        "configurations_tried": len(model.grid),
        "outlier_chunks": len(model.outlier_chunk_refs),
        "decided_by": by,
        "topics": [
            {
                "id": topic.id,
                "label": topic.label,
                "size": len(topic.chunk_refs),
                "keywords": topic.keywords,
                "status": "excluded" if topic.id in excluded else "kept",
                "by": by,
            }
            for topic in model.topics
        ],
    }


def generated_cases(run: RunDocuments, taken: dict[str, Decision]) -> dict[str, Any]:
    """The generated suite with each case's validation scores and, for the excluded ones, why and by whom."""
    suite, problem = load(run, "test-generation/suite.json", TestSuite)
    if suite is None:
        return missing(problem)
    validation, validation_problem = load(run, "test-validation/validation.json", SuiteValidation)
    checks = {case.test_case_key: case for case in validation.cases} if validation else {}
    decision = taken.get(Step.TEST_VALIDATION)
    excluded = set(decision.decision.get("excluded_case_keys", [])) if decision else set()
    by = who(decision)["who"]
    cases = []
    for _, case in suite.cases():
        check = checks.get(case.key)
        writer = next((c.split(":", 1)[1] for c in case.categories if c.startswith("written_by:")), "unknown")
        reasons = list(check.reasons) if check else []
        cases.append(
            {
                "key": case.key,
                "question": case.prompt,
                "expected_answer": case.expected_output,
                "topic": case.topic or "unknown",
                "question_type": case.generator or "unknown",
                "written_by": writer,
                "cosine": check.cosine if check else None,
                "bertscore_f1": check.bertscore_f1 if check else None,
                "nli_entailment": check.nli_entailment if check else None,
                "outlier": bool(check and check.outlier),
                "reasons": reasons,
                "excluded": case.key in excluded,
            }
        )
    excluded_rows = [
        {
            "key": case["key"],
            "question": case["question"],
            "by": by,
            "reason": "; ".join(case["reasons"]) or "excluded by the reviewer (not flagged as an outlier)",
        }
        for case in cases
        if case["excluded"]
    ]
    return {
        "available": True,
        "cases": cases,
        "count": len(cases),
        "by_question_type": dict(sorted(Counter(case["question_type"] for case in cases).items())),
        "by_written_by": dict(sorted(Counter(case["written_by"] for case in cases).items())),
        "by_topic": dict(sorted(Counter(case["topic"] for case in cases).items())),
        "validation": {
            "available": validation is not None,
            "message": validation_problem,
            "nli_status": validation.nli_status if validation else None,
            "bertscore_status": validation.bertscore_status if validation else None,
            "thresholds": validation.thresholds if validation else {},
        },
        "outliers": sum(case["outlier"] for case in cases),
        "excluded": excluded_rows,
        "decided_by": by,
    }


def _outcome_words(fit: MetricCalibration | None) -> str:
    """'calibrated', 'confirmed', 'unsupported', 'not meaningful', or 'undecided' for a labelled metric; ''
    for a metric nobody labelled."""
    if fit is None or (not fit.labels and fit.outcome == "undecided"):
        return ""
    return fit.outcome.replace("_", " ")


def calibration(run: RunDocuments, taken: dict[str, Decision]) -> dict[str, Any]:
    """Thresholds before (default, then a user's value) and after calibration, with who set each one."""
    book, book_problem = load(run, "calibration/thresholds.json", ThresholdBook)
    fitted, fitted_problem = load(run, "calibration/calibration.json", Calibration)
    if book is None and fitted is None:
        return missing(book_problem)
    entries = {(entry.evaluator_id, entry.metric): entry for entry in book.entries} if book else {}
    fits = {(item.evaluator_id, item.metric): item for item in fitted.metrics} if fitted else {}
    metrics = []
    for key in dict.fromkeys([*fits, *entries]):
        entry, fit = entries.get(key), fits.get(key)
        default = entry.default_threshold if entry else fit.default_threshold if fit else None
        user = entry.threshold if entry and entry.source == "user" else None
        calibrated = (
            fit.calibrated_threshold if fit else entry.threshold if entry and entry.source == "calibrated" else None
        )
        metrics.append(
            {
                "evaluator_id": key[0],
                "metric": key[1],
                "higher_is_better": entry.higher_is_better if entry else fit.higher_is_better if fit else True,
                "default": default,
                "user": user,
                "calibrated": calibrated,
                "before": user if user is not None else default,
                "in_force": entry.threshold if entry else calibrated if calibrated is not None else default,
                "source": entry.source if entry else "calibrated" if calibrated is not None else "default",
                "set_by": entry.set_by if entry else "",
                "labels": fit.labels if fit else None,
                "agreement_before": fit.agreement_before if fit else None,
                "agreement_after": fit.agreement_after if fit else None,
                "interval": list(fit.interval) if fit and fit.interval else None,
                "stable": fit.stable if fit else None,
                "method": fit.method if fit else entry.calibration if entry else "",
                "outcome": _outcome_words(fit),
                "calibrated_metric": fit is not None,
            }
        )
    reviewer = book.reviewer if book else NO_REVIEWER
    decided_by = fitted.decided_by if fitted else ("no reviewer" if reviewer == NO_REVIEWER else "person")
    person = decided_by == "person"
    statement = (
        f"Thresholds were refitted on labels given by {reviewer}: {book.labelled}."
        if person and book is not None and book.labels
        else f"Thresholds were refitted on labels given by {reviewer}."
        if person
        else "No reviewer labelled answers: no threshold was calibrated by a person; every threshold is the "
        "evaluator's default or a value set in the run's parameters."
    )
    return {
        "available": True,
        "message": fitted_problem or book_problem,
        "decided_by": decided_by,
        "reviewer": reviewer,
        "reviewers": list(fitted.reviewers) if fitted else [],
        "decision": who(taken.get(Step.CALIBRATION)),
        "statement": statement,
        "rounds": fitted.rounds if fitted else None,
        "labels": sum(item.labels for item in fitted.metrics) if fitted else 0,
        "human_passed_failures": len(fitted.human_passed_failures) if fitted else 0,
        "metrics": metrics,
    }
