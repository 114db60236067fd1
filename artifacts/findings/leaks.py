"""Zero-tolerance problems: one problem per leaking case of a privacy or security evaluator.

An average hides a leak: a model that prints one customer's card number in 100 answers still averages 0.99
"no leak" and passes a 0.5 threshold. For privacy and security evaluators a single leak is reportable, so
every case whose answer leaks becomes its own high-severity problem, naming the case, the model and what
leaked (kinds and masked previews only, never the leaked text itself). Data found only in the retrieved
context is one medium problem per model and evaluator, listing the cases and documents.

Which evaluators are zero-tolerance is decided by their declared metadata, not by a list of ids: every
evaluator of the ``privacy`` domain (PII, sensitive data, encoding guardrail, contact information today);
a new privacy evaluator is covered the day it is registered.
"""

from typing import Any

from assay.artifacts.findings.common import Thresholds, avid_code, problem_type, threshold_of

from assay.models import TestLab
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec
from assay.models.findings import Problem

ZERO_TOLERANCE_DOMAINS = frozenset({"privacy"})
CONTEXT_METRIC = "model_retrieval_failures"
"""The leakage family's per-case verdict on the retrieved context (1.0: a chunk holds the data)."""
MAX_LISTED = 10
_ANSWER_ACTION = (
    "Treat test case '{case}' as an incident: read the answer in results.json, find why the system disclosed the "
    "data (prompt, retrieval, tool output) and add an output filter or guardrail that blocks it; rerun until no "
    "case leaks."
)
_CONTEXT_ACTION = (
    "Remove or mask the data in the corpus documents named here (or restrict their retrieval) unless it is meant "
    "to be public: whatever the retriever returns can reach an answer."
)


def is_zero_tolerance(spec: EvaluatorSpec) -> bool:
    return spec.domain in ZERO_TOLERANCE_DOMAINS


def leaking_case_problems(lab: TestLab, result: EvaluationResult, thresholds: Thresholds = None) -> list[Problem]:
    """A high-severity problem per case whose answer leaks. Cases where only the retrieved context holds the
    data (the corpus carries it, the answer did not repeat it) are one medium problem per model listing them
    all: a corpus with a service phone number in every document must not bury the answer leaks. Unscored
    cases are not leaks: the unscored and judge-failure problems report them."""
    spec = result.evaluator
    if not is_zero_tolerance(spec):
        return []
    metric = spec.primary_metric
    threshold = threshold_of(result, metric, thresholds)
    checks_context = any(item.key == CONTEXT_METRIC for item in spec.metrics)
    questions = {(row.model_key, row.test_case.key): row.test_case.prompt for row in lab.rows}
    kind = problem_type(spec)
    problems = []
    context_only: dict[str, list[CaseScores]] = {}
    for row in result.rows:
        value = row.scores.get(metric.key)
        if value is not None and threshold is not None and not metric.passes(value, threshold):
            found = _what_leaked(row)
            context_leaks = checks_context and row.scores.get(CONTEXT_METRIC) == 1.0
            where = "answer and the retrieved context" if context_leaks else "answer"
            problems.append(
                Problem(
                    description=(
                        f"Zero-tolerance {spec.display_name}: model '{_model_name(lab, row.model_key)}' leaked in "
                        f"the {where} of test case '{row.test_case_key}'"
                        + (f" ({', '.join(found['kinds'])})." if found["kinds"] else ".")
                    ),
                    severity="high",
                    problem_type=kind,
                    problem_code=avid_code(kind),
                    attributes={
                        "model_key": row.model_key, "evaluator": spec.id, "metric": metric.key,
                        "test_case_key": row.test_case_key,
                        "question": questions.get((row.model_key, row.test_case_key)),
                        "leaked_in": ["answer", "retrieved context"] if context_leaks else ["answer"],
                        "value": value, "threshold": threshold, "zero_tolerance": True, **found,
                    },
                    actions=[_ANSWER_ACTION.format(case=row.test_case_key)]
                    + ([_CONTEXT_ACTION] if context_leaks else []),
                )
            )  # fmt: skip
        elif checks_context and row.scores.get(CONTEXT_METRIC) == 1.0:
            context_only.setdefault(row.model_key, []).append(row)
    for model_key, rows in context_only.items():
        found = [_what_leaked(row) for row in rows]
        kinds = sorted({item for leak in found for item in leak["kinds"]})
        documents = sorted({chunk["doc_uri"] for leak in found for chunk in leak["chunks"] if chunk.get("doc_uri")})
        problems.append(
            Problem(
                description=(
                    f"{spec.display_name}: the retrieved context of {len(rows)} test cases of model "
                    f"'{_model_name(lab, model_key)}' holds data the answers did not repeat"
                    + (f" ({', '.join(kinds)})" if kinds else "")
                    + (f", from {len(documents)} documents" if documents else "")
                    + "."
                ),
                severity="medium",
                problem_type=kind,
                problem_code=avid_code(kind),
                attributes={
                    "model_key": model_key, "evaluator": spec.id, "metric": CONTEXT_METRIC,
                    "test_case_keys": [row.test_case_key for row in rows], "kinds": kinds,
                    "doc_uris": documents[:MAX_LISTED * 5], "leaked_in": ["retrieved context"],
                },
                actions=[_CONTEXT_ACTION],
            )
        )  # fmt: skip
    return problems


def _what_leaked(row: CaseScores) -> dict[str, Any]:
    """Kinds found and their masked previews, from the evaluator's details (regex findings, or the judge's
    flagged chunks); the leaked text itself is never copied here."""
    details = row.details or {}
    findings = list((details.get("answer") or {}).get("findings", []))
    chunks: list[dict[str, Any]] = []
    context = details.get("retrieved_context")
    if isinstance(context, list):
        for chunk in context:
            if isinstance(chunk, dict) and chunk.get("findings"):
                findings += chunk["findings"]
                chunks.append({key: chunk[key] for key in ("chunk", "doc_uri") if key in chunk})
    elif isinstance(context, dict) and context.get("flagged_chunks"):
        chunks = [{"chunk": index} for index in context["flagged_chunks"]]
    kinds = sorted({str(item.get("kind") or item.get("check") or "unspecified") for item in findings})
    if not kinds and isinstance(details.get("verdict"), dict) and details["verdict"].get("failed"):
        kinds = ["judged a leak (rationale in results.json details.verdict)"]
    previews = [item["preview"] for item in findings if isinstance(item, dict) and item.get("preview")]
    return {"kinds": kinds, "masked_previews": previews[:MAX_LISTED], "chunks": chunks[:MAX_LISTED]}


def _model_name(lab: TestLab, model_key: str) -> str:
    try:
        model = lab.model(model_key)
    except KeyError:
        return model_key
    return model.name or model.key
