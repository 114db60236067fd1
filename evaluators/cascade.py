"""Cheap first: route each case to the LLM judge only when an offline evaluator cannot call it.

The judged evaluator names an offline proxy (``cascade_proxy``) whose primary metric tracks its own. The proxy
scores every case; a case whose proxy score lies within ``band`` of the proxy's threshold is uncertain and
goes to the judge; the others keep the proxy's verdict, recorded as such (who decided, with which score and
band), and are unscored by the judge: a verdict is not a judge's score. With ``budget``, at most that many
cases go to the judge, the most uncertain first; without ``cascade`` the budget alone ranks every case by
uncertainty. A case the proxy cannot score always goes to the judge while the budget lasts.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.evaluators.base import CaseContext, Unscored
from assay.evaluators.registry import build_evaluator
from assay.evaluators.runner import score_case, skip_reason

from assay.models.judges import JudgeRunOptions

if TYPE_CHECKING:
    from assay.evaluators._judged import JudgedEvaluator


def route_cases(
    evaluator: "JudgedEvaluator", cases: Sequence[CaseContext], options: JudgeRunOptions
) -> tuple[list[CaseContext], dict[tuple[str, str], Unscored], dict[str, Any]]:
    """(cases for the judge, outcomes decided without it, counts for the run's judge summary)."""
    proxy_id = evaluator.cascade_proxy
    proxy_scores = _proxy_scores(proxy_id, evaluator, cases) if proxy_id else [None] * len(cases)
    ranked: list[tuple[float, int]] = []  # (distance to the proxy's threshold, case index); None distance first
    decided: dict[tuple[str, str], Unscored] = {}
    offline_pass = offline_fail = 0
    for index, (case, proxy) in enumerate(zip(cases, proxy_scores, strict=True)):
        if proxy is None:
            ranked.append((-1.0, index))
            continue
        value, threshold, passes = proxy
        distance = abs(value - threshold)
        if not options.cascade or distance <= options.band:
            ranked.append((distance, index))
            continue
        verdict = "pass" if passes else "fail"
        offline_pass, offline_fail = offline_pass + passes, offline_fail + (not passes)
        decided[case.test_case_key, case.model_key] = Unscored(
            f"cascade: decided offline by {proxy_id} ({value:.3f}, outside the uncertain band "
            f"{threshold - options.band:.3f}..{threshold + options.band:.3f}): {verdict}; not sent to the judge",
            details={"cascade": {"decided_by": proxy_id, "proxy_score": value, "proxy_threshold": threshold,
                                 "band": options.band, "verdict": verdict}},
        )  # fmt: skip
    ranked.sort()
    limit = len(ranked) if options.budget is None else options.budget
    over_budget = ranked[limit:]
    for _distance, index in over_budget:
        case = cases[index]
        proxy = proxy_scores[index]
        details: dict[str, Any] = {"cascade": {"budget": options.budget}}
        if proxy is not None:
            details["cascade"] |= {"decided_by": proxy_id, "proxy_score": proxy[0], "proxy_threshold": proxy[1],
                                   "verdict": "pass" if proxy[2] else "fail"}  # fmt: skip
        decided[case.test_case_key, case.model_key] = Unscored(
            f"judge budget exhausted ({options.budget} cases judged, the most uncertain first); not sent to the judge",
            details=details,
        )
    to_judge = [cases[index] for _, index in sorted(ranked[:limit], key=lambda item: item[1])]
    counts = {
        "proxy": proxy_id,
        "band": options.band if options.cascade else None,
        "budget": options.budget,
        "cases": len(cases),
        "sent_to_judge": len(to_judge),
        "decided_offline": offline_pass + offline_fail,
        "offline_pass": offline_pass,
        "offline_fail": offline_fail,
        "over_budget": len(over_budget),
    }
    return to_judge, decided, counts


def _proxy_scores(
    proxy_id: str, evaluator: "JudgedEvaluator", cases: Sequence[CaseContext]
) -> list[tuple[float, float, bool] | None]:
    """(proxy primary value, its threshold, passes) per case, or None where the proxy could not score."""
    proxy = build_evaluator(proxy_id, evaluator.services)
    metric = proxy.spec.primary_metric
    threshold = proxy.threshold(metric.key)
    if proxy.unavailable_reason() is not None or threshold is None:
        return [None] * len(cases)
    try:
        proxy.prepare([case for case in cases if skip_reason(proxy, case) is None])
    except Exception:  # an offline proxy that cannot run only means every case goes to the judge
        return [None] * len(cases)
    scores: list[tuple[float, float, bool] | None] = []
    for case in cases:
        value = score_case(proxy, case).scores.get(metric.key)
        scores.append(None if value is None else (float(value), float(threshold), metric.passes(value, threshold)))
    return scores
