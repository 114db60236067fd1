"""The per-evaluator ``results.json`` of seed 002 ("Deep dive into the JSON evaluation results") and the
run's ``summary.json``: pure builders, no I/O.

Seed 002 repeats each row's retrieved context in every evaluator's ``results.json``; at 10,000 cases that is
27-37 MB per evaluator, and the artifact store keeps each copy again. Here the context is written once, in
the run's ``test_lab.json``: a row of ``results.json`` names its lab row (``lab_row``) and keeps only the
context's metadata (document, rank, score); the document's ``test_lab`` entry says which file that is.
``with_context`` puts the texts back for a reader that wants seed 002's full rows."""

import re
from collections.abc import Sequence
from typing import Any

from assay.models import ModelHost, TestLab, TestLabRow
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.judges import JudgeAccount
from assay.redaction import SECRET_NAME

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def redact(settings: dict[str, Any]) -> dict[str, Any]:
    """Advanced settings are passed through as given; anything named like a secret is masked on output."""
    return {
        name: "***"
        if SECRET_NAME.search(name) and isinstance(value, str)
        else redact(value)
        if isinstance(value, dict)
        else value
        for name, value in settings.items()
    }


def model_entry(model: ModelHost, rows: Sequence[TestLabRow]) -> dict[str, Any]:
    durations = [row.actual_duration for row in rows if row.actual_duration is not None]
    answered = [row for row in rows if row.answered]
    return {
        "key": model.key,
        "name": model.name or model.key,
        "model_type": model.type,
        "connection": model.url,
        "llm_model_name": model.llm_model_name,
        "model_cfg": redact(model.settings),
        "llm_model_meta": {
            "success_count": len(answered),
            "failure_count": len(rows) - len(answered),
            "retry_count": sum(max(row.attempts - 1, 0) for row in rows),
            "duration_min": min(durations, default=None),
            "duration_max": max(durations, default=None),
            "duration_avg": round(sum(durations) / len(durations), 6) if durations else None,
            "input_tokens": sum(row.input_tokens or 0 for row in rows),
            "output_tokens": sum(row.output_tokens or 0 for row in rows),
            "cost": round(sum(row.cost or 0.0 for row in rows), 6),
        },
    }


LAB_FILE = "test_lab.json"
"""Where the run's test lab is written, relative to the evaluation folder (``results.json`` is one level down)."""


def _row_entry(row: TestLabRow, index: int) -> dict[str, Any]:
    case = row.test_case
    return {
        "key": case.key,
        "test_key": row.test_key,
        "test_case_key": case.key,
        "model_key": row.model_key,
        "lab_row": index,
        "input": case.prompt,
        "corpus": sorted({chunk.doc_uri for chunk in row.context if chunk.doc_uri}),
        "context_meta": [{"doc_uri": chunk.doc_uri, "rank": chunk.rank, "score": chunk.score} for chunk in row.context],
        "categories": case.categories,
        "relationships": [relationship.model_dump() for relationship in case.relationships],
        "expected_output": case.expected_output,
        "output_condition": case.output_condition,
        "actual_output": row.actual_output,
        "actual_duration": row.actual_duration,
        "cost": row.cost,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "error": row.error,
    }


def aggregate_name(metric: MetricMeta, parameters: dict[str, Any]) -> str | None:
    """The metric's run-level name with ``{parameter}`` placeholders filled in: a custom judge's aggregate is
    named after its ``assessment_name`` (seed 001: ``response/llm_judged/{assessment_name}/rating/percentage``)."""
    if metric.aggregate_name is None:
        return None
    return _PLACEHOLDER.sub(lambda found: str(parameters.get(found[1], found[0])), metric.aggregate_name)


def judged_columns(
    spec: EvaluatorSpec, scores: CaseScores, parameters: dict[str, Any], *, chunks: int
) -> dict[str, Any]:
    """The per-case columns of seeds 001/003 (``response/llm_judged/correctness/rating``...) for this row.

    A judge that rated the case, or failed to, puts them in ``details["columns"]``. A case unscored before any
    judge call (missing input, no judge configured, decided by the cascade, flaky repeats) has none, so they
    are derived here from each LLM-judged metric's aggregate name: the rating (or per-chunk ratings) null and
    the error message the unscored reason, as the seeds report a rating that could not be computed."""
    columns = scores.details.get("columns")
    if isinstance(columns, dict):
        return columns
    if scores.unscored_reason is None:
        return {}
    derived: dict[str, Any] = {}
    for metric in spec.metrics:
        name = aggregate_name(metric, parameters)
        if name is None or "/llm_judged/" not in name:
            continue
        prefix, measure = name.rsplit("/", 2)[:2]
        if measure == "precision":
            derived |= {f"{prefix}/ratings": None, f"{prefix}/rationales": None,
                        f"{prefix}/error_messages": [scores.unscored_reason] * max(chunks, 1),
                        f"{prefix}/precision": None}  # fmt: skip
        else:
            derived |= {f"{prefix}/{measure}": None, f"{prefix}/rationale": None,
                        f"{prefix}/error_message": scores.unscored_reason}  # fmt: skip
    return derived


def results_document(lab: TestLab, result: EvaluationResult) -> dict[str, Any]:
    """``results.json`` for one evaluator; each row references its lab row instead of repeating the context."""
    rows = {(row.model_key, row.test_case.key): (index, row) for index, row in enumerate(lab.rows)}
    spec = result.evaluator
    entries = []
    for scores in result.rows:
        index, row = rows[scores.model_key, scores.test_case_key]
        entry = _row_entry(row, index)
        entry.update({metric.key: scores.scores.get(metric.key) for metric in spec.metrics})
        entry.update(judged_columns(spec, scores, result.parameters, chunks=len(row.context)))
        entry["unscored_reason"] = scores.unscored_reason
        if scores.details:
            entry["details"] = scores.details
        entries.append(entry)
    thresholds = {metric.key: result.threshold(metric.key) for metric in spec.metrics}
    return {
        "results": entries,
        "test_lab": {"file": f"../{LAB_FILE}", "rows": len(lab.rows), "row_field": "lab_row"},
        "models": [model_entry(model, lab.rows_for(model.key)) for model in lab.models],
        "evaluator": {
            "id": spec.id,
            "name": spec.id,
            "display_name": spec.display_name,
            "description": spec.description,
            "domain": spec.domain,
            "compliance": spec.compliance,
            "model_types": spec.model_types,
            "required_inputs": spec.required_inputs,
            "needs": spec.needs,
            "keywords": spec.keywords,
            "parameters": [
                {**meta.model_dump(), "value": result.parameters.get(meta.name)} for meta in spec.parameters
            ],
            "metrics_meta": [
                {
                    "key": metric.key,
                    "display_name": metric.display_name,
                    "description": metric.description,
                    "higher_is_better": metric.higher_is_better,
                    "threshold": thresholds[metric.key],
                    "range": list(metric.range),
                    "is_primary": metric.is_primary,
                    "aggregate_name": aggregate_name(metric, result.parameters),
                }
                for metric in spec.metrics
            ],
            "explanation_scopes": ["global", "local"],
            "explanations": [
                {
                    "type": "leaderboard",
                    "description": "Per model and metric: mean over scored cases, with scored/unscored counts.",
                    "data": {
                        model_key: {key: aggregate.model_dump() for key, aggregate in metrics.items()}
                        for model_key, metrics in result.aggregates.items()
                    },
                },
                *(
                    [
                        {
                            "type": "model_details",
                            "description": "Run-level details per model.",
                            "data": result.model_details,
                        }
                    ]
                    if result.model_details
                    else []
                ),
            ],
            "judge": None if result.judge is None else result.judge.model_dump(mode="json"),
            "origin": None if result.origin is None else result.origin.model_dump(mode="json"),
            "elapsed_s": result.elapsed_s,
            "schema_version": result.schema_version,
        },
    }


def row_context(entry: dict[str, Any], lab: dict[str, Any] | None) -> list[str]:
    """The retrieved context texts of one ``results.json`` row: from the lab row it names, or (results written
    before the lab reference) from the row itself. Empty when neither is available."""
    if "context" in entry:
        return list(entry["context"] or [])
    index = entry.get("lab_row")
    rows = (lab or {}).get("rows") or []
    if not isinstance(index, int) or not 0 <= index < len(rows):
        return []
    return [chunk.get("text", "") for chunk in rows[index].get("context") or []]


def with_context(document: dict[str, Any], lab: dict[str, Any]) -> dict[str, Any]:
    """A ``results.json`` document with each row's context texts put back (seed 002's full rows)."""
    rows = [{**entry, "context": row_context(entry, lab)} for entry in document.get("results", [])]
    return {**document, "results": rows}


def summary_document(lab: TestLab, results: Sequence[EvaluationResult], *, run_id: str) -> dict[str, Any]:
    """Per model, per evaluator, per metric averages: what ``assay evaluate`` prints and the demo shows."""
    metrics: dict[str, dict[str, Any]] = {model.key: {} for model in lab.models}
    for result in results:
        for model_key, aggregates in result.aggregates.items():
            metrics[model_key][result.evaluator.id] = {
                key: {
                    **aggregate.model_dump(),
                    "threshold": result.threshold(key),
                    "higher_is_better": result.evaluator.metric(key).higher_is_better,
                    "is_primary": result.evaluator.metric(key).is_primary,
                    "aggregate_name": aggregate_name(result.evaluator.metric(key), result.parameters),
                }
                for key, aggregate in aggregates.items()
            }
    return {
        "schema_version": 1,
        "run_id": run_id,
        "test_lab": lab.name,
        "test_cases": len({row.test_case.key for row in lab.rows}),
        "models": [
            {
                "key": model.key,
                "name": model.name or model.key,
                "type": model.type,
                **_host_outcome(lab, model.key),
            }
            for model in lab.models
        ],
        "evaluators": [result.evaluator.id for result in results],
        "metrics": metrics,
        "judge": judge_totals(results),
    }


def judge_totals(results: Sequence[EvaluationResult]) -> dict[str, Any] | None:
    """The run's LLM-judge account: per judged evaluator and in total (calls, cache hits, tokens, cost, time)."""
    judged = [result for result in results if result.judge is not None]
    if not judged:
        return None
    total = JudgeAccount()
    for result in judged:
        assert result.judge is not None
        total = total.merged(result.judge.account)
    first = judged[0].judge
    assert first is not None
    return {
        "endpoint": {"base_url": first.endpoint.base_url, "model": first.endpoint.model},
        "options": first.options.model_dump(mode="json"),
        "total": total.model_dump(mode="json"),
        "evaluators": {
            result.evaluator.id: {
                "account": result.judge.account.model_dump(mode="json"),
                "templates": result.judge.templates,
                "cascade": result.judge.cascade,
                "flaky_cases": result.judge.flaky_cases,
            }
            for result in judged
            if result.judge is not None
        },
    }


def _host_outcome(lab: TestLab, model_key: str) -> dict[str, int]:
    rows = lab.rows_for(model_key)
    failed = sum(1 for row in rows if not row.answered)
    return {"answered": len(rows) - failed, "host_failures": failed}
