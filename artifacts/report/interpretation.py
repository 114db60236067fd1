"""``interpretation.json``: the machine-readable twin of the HTML report (seed 002). The HTML is rendered from
this document only, so what a person reads and what a pipeline parses can never disagree.

Built from a run's published documents (``RunDocuments``), pure and without I/O. Scores stay as published:
an unscored case is ``None`` with its reason, never 0; every threshold says where it came from."""

import json
from typing import Any

from assay.artifacts.evaluation_results import LAB_FILE, row_context
from assay.artifacts.report.evaluator_validity import PublishedLookup, evaluation_validity
from assay.artifacts.report.headline import primary_metric_headline
from assay.artifacts.report.run_documents import RunDocuments

from assay.models.evaluation import on_good_side
from assay.models.plugins import ASSAY_PACKAGE, PluginOrigin
from assay.models.thresholds import recorded_override
from assay.storage.runs import RUN_FILE
from assay.validity.published import published_metrics

SCHEMA_VERSION = 1
SEVERITIES = ("high", "medium", "low")
_EXPLANATION_TEXT_LIMIT = 2000
"""Characters kept of one explanation item: details can quote whole answers; the full record stays in the
evaluator's results.json."""


def verdict(score: float | None, threshold: float | None, higher_is_better: bool) -> str:
    """pass / fail against the threshold in force; ``unscored`` without a score, ``no threshold`` without one."""
    if score is None:
        return "unscored"
    if threshold is None:
        return "no threshold"
    return "pass" if on_good_side(score, threshold, higher_is_better) else "fail"


def _threshold_source(
    evaluator: dict[str, Any], metric: dict[str, Any], calibrated: dict[tuple[str, str], dict[str, Any]]
) -> str | None:
    """Where a metric's threshold came from: calibration (MRM runs), the run's override, or the default."""
    if metric.get("threshold") is None:
        return None
    entry = calibrated.get((evaluator["id"], metric["key"]))
    if entry is not None and entry.get("threshold") == metric["threshold"] and entry.get("source") != "default":
        return f"{entry.get('source')}: {entry.get('set_by') or 'calibration'}"
    origin = recorded_override(evaluator, metric["key"], bool(metric.get("is_primary")), named=True)
    return origin or f"{evaluator['id']} default"


def _calibrated(run: RunDocuments) -> dict[tuple[str, str], dict[str, Any]]:
    document = run.get("calibration/thresholds.json") or {}
    return {(entry["evaluator_id"], entry["metric"]): entry for entry in document.get("entries", [])}


def _metrics(evaluator: dict[str, Any], calibrated: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "key": meta["key"],
            "display_name": meta.get("display_name") or meta["key"],
            "description": meta.get("description", ""),
            "range": meta.get("range"),
            "threshold": meta.get("threshold"),
            "threshold_source": _threshold_source(evaluator, meta, calibrated),
            "higher_is_better": meta.get("higher_is_better", True),
            "primary": bool(meta.get("is_primary")),
            "in_verdict": (calibrated.get((evaluator.get("id", ""), meta["key"])) or {}).get("in_verdict", True),
        }
        for meta in evaluator.get("metrics_meta", [])
    ]


def _leaderboard(results: dict[str, Any], metrics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model: each metric's mean, scored, unscored and passed counts, ranked by the primary metric."""
    data = next((e["data"] for e in results["evaluator"].get("explanations", []) if e["type"] == "leaderboard"), {})
    names = {model["key"]: model.get("name") or model["key"] for model in results.get("models", [])}
    primary = next((metric for metric in metrics if metric["primary"]), metrics[0] if metrics else None)
    rows = [
        {"model_key": key, "model_name": names.get(key, key), "metrics": aggregates} for key, aggregates in data.items()
    ]

    def order(row: dict[str, Any]) -> tuple[bool, float]:
        mean = (row["metrics"].get(primary["key"]) or {}).get("mean") if primary else None
        if mean is None:
            return (True, 0.0)
        return (False, -mean if primary["higher_is_better"] else mean)

    rows.sort(key=order)
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def _shorten(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _EXPLANATION_TEXT_LIMIT else text[:_EXPLANATION_TEXT_LIMIT] + "…"


def _findings(where: str, findings: list[dict[str, Any]]) -> str:
    return f"{where}: " + ", ".join(f"{item.get('kind', '?')} {item.get('preview', '')}".strip() for item in findings)


def _claim_items(claims: list[dict[str, Any]], threshold: float) -> list[dict[str, str]]:
    """Each checked claim with its support and the evidence it was matched to; the unsupported ones first, so a
    reviewer reads what failed before what passed. A claim with no evidence to show is listed only if weak."""
    items = []
    for claim in sorted(claims, key=lambda item: on_good_side(item.get("support") or 0.0, threshold, True)):
        weak = not on_good_side(claim.get("support") or 0.0, threshold, True)
        evidence = claim.get("closest_context")
        if not weak and not evidence:
            continue
        text = claim.get("sentence", "") + (f" ← evidence: {evidence}" if evidence else "")
        label = f"{'unsupported' if weak else 'supported'} claim (support {claim.get('support')})"
        items.append({"label": label, "text": _shorten(text)})
    return items


def explanation(details: dict[str, Any] | None, threshold: float | None) -> list[dict[str, str]]:
    """What the evaluator recorded about one case, as labelled lines a reviewer reads: groundedness'
    unsupported sentences and figures, failed conditions and assertions, PII or secrets found (masked), judge
    rationales; anything else is listed as compact JSON so nothing an evaluator recorded is hidden."""
    if not details:
        return []
    items: list[dict[str, str]] = []
    rest = dict(details)
    sentences = rest.pop("sentences", None)
    if isinstance(sentences, list) and threshold is not None:
        items += _claim_items([s for s in sentences if isinstance(s, dict)], threshold)
    for left in rest.pop("left_out", None) or []:
        if isinstance(left, dict):
            items.append({"label": f"not checked: {left.get('reason', '?')}", "text": _shorten(left.get("text", ""))})
    for key in ("unsupported_figures", "unsupported_names", "contradicted_by_record"):
        if rest.get(key):
            items.append({"label": key.replace("_", " "), "text": _shorten(", ".join(map(str, rest[key])))})
        rest.pop(key, None)
    answer = rest.pop("answer", None)
    if isinstance(answer, dict) and answer.get("findings"):
        items.append({"label": "found in the answer", "text": _shorten(_findings("answer", answer["findings"]))})
    chunks = rest.pop("retrieved_context", None)
    if isinstance(chunks, list):
        for chunk in chunks:
            if isinstance(chunk, dict) and chunk.get("findings"):
                where = f"chunk {chunk.get('chunk')} ({chunk.get('doc_uri') or 'no document'})"
                text = _shorten(_findings(where, chunk["findings"]))
                items.append({"label": "found in the retrieved context", "text": text})
    verdict_detail = rest.pop("verdict", None)
    if isinstance(verdict_detail, dict) and verdict_detail.get("rationale"):
        items.append({"label": "judge rationale", "text": _shorten(verdict_detail["rationale"])})
    for key in ("rationale", "claims_rationale"):
        if rest.get(key):
            items.append({"label": "judge rationale", "text": _shorten(rest[key])})
        rest.pop(key, None)
    columns = rest.pop("columns", None)
    if isinstance(columns, dict):
        for name, value in columns.items():
            if value and name.rsplit("/", 1)[-1] in ("rationale", "rationales", "error_message", "error_messages"):
                items.append({"label": name, "text": _shorten(value)})
    for key in ("failed_conditions", "assertions", "conditions"):
        if rest.get(key):
            items.append({"label": key.replace("_", " "), "text": _shorten(rest[key])})
        rest.pop(key, None)
    if any(item["label"].startswith("unsupported") for item in items):
        rest.pop("least_grounded_sentence", None)
    items.extend({"label": key.replace("_", " "), "text": _shorten(value)} for key, value in rest.items() if value)
    return items


def _case_rows(run: RunDocuments, evaluators: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per test case x model for the eval eye: the inputs and answer once, then every evaluator's
    metrics (score, threshold, verdict) and explanation."""
    by_evaluator = {evaluator["id"]: evaluator for evaluator in evaluators}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    names: dict[str, str] = {}
    for evaluator_id, results in run.results():
        names |= {model["key"]: model.get("name") or model["key"] for model in results.get("models", [])}
        evaluator = by_evaluator[evaluator_id]
        for entry in results.get("results", []):
            key = (entry.get("test_case_key") or entry.get("key") or "", entry.get("model_key") or "")
            row = rows.get(key)
            if row is None:
                row = rows[key] = {
                    "test_case_key": key[0],
                    "model_key": key[1],
                    "model_name": names.get(key[1], key[1]),
                    "question": entry.get("input"),
                    "expected": entry.get("expected_output"),
                    "condition": entry.get("output_condition"),
                    "context": row_context(entry, run.documents.get(LAB_FILE)),
                    "context_documents": [meta.get("doc_uri") for meta in entry.get("context_meta") or []],
                    "answer": entry.get("actual_output"),
                    "error": entry.get("error"),
                    "duration_s": entry.get("actual_duration"),
                    "evaluations": [],
                }
            metrics = [
                {
                    "key": metric["key"],
                    "display_name": metric["display_name"],
                    "score": entry.get(metric["key"]),
                    "threshold": metric["threshold"],
                    "threshold_source": metric["threshold_source"],
                    "higher_is_better": metric["higher_is_better"],
                    "verdict": verdict(entry.get(metric["key"]), metric["threshold"], metric["higher_is_better"]),
                }
                for metric in evaluator["metrics"]
            ]
            primary = next((m for m in evaluator["metrics"] if m["primary"]), None)
            row["evaluations"].append(
                {
                    "evaluator": evaluator_id,
                    "display_name": evaluator["display_name"],
                    "unscored_reason": entry.get("unscored_reason"),
                    "metrics": metrics,
                    "explanation": explanation(entry.get("details"), primary["threshold"] if primary else None),
                }
            )
    for row in rows.values():
        verdicts = [metric["verdict"] for evaluation in row["evaluations"] for metric in evaluation["metrics"]]
        row["failed_metrics"] = [
            f"{evaluation['evaluator']}/{metric['key']}"
            for evaluation in row["evaluations"]
            for metric in evaluation["metrics"]
            if metric["verdict"] == "fail"
        ]
        row["verdict"] = "fail" if row["failed_metrics"] else "pass" if "pass" in verdicts else "unscored"
    return list(rows.values())


def _overview(run: RunDocuments, evaluation: RunDocuments) -> dict[str, Any]:
    summary = evaluation.get("summary.json") or {}
    record = run.get(RUN_FILE) or {}
    return {
        "name": summary.get("test_lab") or (evaluation.get("test_lab.json") or {}).get("name") or run.source,
        "run_id": run.run_id,
        "kind": run.kind,
        "workflow": record.get("workflow"),
        "status": record.get("status"),
        "created": record.get("started_at"),
        "finished": record.get("finished_at"),
        "source": run.source,
        "test_cases": summary.get("test_cases"),
        "models": [model["key"] for model in summary.get("models", [])],
        "evaluators": evaluation.evaluator_ids(),
        "parameters": record.get("parameters") or {},
        "skipped_evaluators": summary.get("skipped_evaluators") or {},
        "judge": summary.get("judge"),
    }


def _models(evaluation: RunDocuments) -> list[dict[str, Any]]:
    """Models and hosts as the results describe them; settings were redacted when they were published."""
    outcomes = {model["key"]: model for model in (evaluation.get("summary.json") or {}).get("models", [])}
    described = next((results.get("models", []) for _, results in evaluation.results()), [])
    models = []
    for model in described:
        outcome = outcomes.get(model["key"], {})
        models.append(
            {
                "key": model["key"],
                "name": model.get("name") or model["key"],
                "type": model.get("model_type"),
                "connection": model.get("connection") or "",
                "llm_model_name": model.get("llm_model_name") or "",
                "settings": model.get("model_cfg") or {},
                "answered": outcome.get("answered"),
                "host_failures": outcome.get("host_failures"),
                "usage": model.get("llm_model_meta") or {},
            }
        )
    return models


def _severity_rank(problem: dict[str, Any]) -> int:
    severity = problem.get("severity")
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def _package(origin: dict[str, Any] | None) -> dict[str, Any] | None:
    """The package an evaluator's code came from, as results.json recorded it ('assay-example-plugin 0.1.0' and
    whether it is a plugin of another package); None for results written before origins were recorded."""
    if not origin:
        return None
    recorded = PluginOrigin.model_validate(origin)
    return {"label": recorded.label, "plugin": recorded.package != ASSAY_PACKAGE, "entry_point": recorded.entry_point}


def build_interpretation(run: RunDocuments, published: PublishedLookup = published_metrics) -> dict[str, Any]:
    """The whole report as data: overview, models, evaluators (metrics, leaderboard, their problems and
    insights), all problems and insights, the eval eye's case rows, published validity, the MRM part."""
    evaluation = run.evaluation()
    calibrated = _calibrated(run)
    problems = (evaluation.get("problems/problems_and_actions.json") or {}).get("problems", [])
    # A metric the reviewer marked not meaningful for this system (MRM step 5) leaves the verdict.
    left_out = {evaluator for (evaluator, _), entry in calibrated.items() if entry.get("in_verdict") is False}
    problems = [problem for problem in problems if (problem.get("attributes") or {}).get("evaluator") not in left_out]
    insights = (evaluation.get("insights/insights_and_actions.json") or {}).get("insights", [])
    evaluators = []
    for evaluator_id, results in evaluation.results():
        spec = results["evaluator"]
        metrics = _metrics(spec, calibrated)
        evaluators.append(
            {
                "id": evaluator_id,
                "display_name": spec.get("display_name") or evaluator_id,
                "description": spec.get("description", ""),
                "domain": spec.get("domain"),
                "compliance": spec.get("compliance", []),
                "package": _package(spec.get("origin")),
                "parameters": {p["name"]: p.get("value") for p in spec.get("parameters", [])},
                "primary_metric": next((m["key"] for m in metrics if m["primary"]), None),
                "metrics": metrics,
                "leaderboard": _leaderboard(results, metrics),
                "problems": [p for p in problems if (p.get("attributes") or {}).get("evaluator") == evaluator_id],
                "insights": [i for i in insights if (i.get("attributes") or {}).get("evaluator") == evaluator_id],
            }
        )
    interpretation: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "overview": _overview(run, evaluation),
        "models": _models(evaluation),
        "problem_counts": {severity: sum(p.get("severity") == severity for p in problems) for severity in SEVERITIES},
        "evaluators": evaluators,
        "problems": sorted(problems, key=_severity_rank),
        "insights": insights,
        "cases": _case_rows(evaluation, evaluators),
        "validity": evaluation_validity(evaluators, published),
    }
    interpretation["headline"] = primary_metric_headline(evaluators, interpretation["cases"])
    if run.kind == "mrm":
        from assay.artifacts.report.mrm_sections import mrm_interpretation

        interpretation["mrm"] = mrm_interpretation(run, published)
    return interpretation
