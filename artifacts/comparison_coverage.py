"""What a comparison compared: the (model, evaluator, metric) triples and test cases both runs scored, and
everything left out with its reason, so that "0 worse" can never stand for "nothing was looked at".

A triple counts as compared when at least one test case key was scored in both runs; a triple whose runs
share no case, or whose shared cases are unscored in one run, is left out of the case-by-case comparison
(its delta, if any, is an unpaired one between different cases). Two production samples (labs imported from
traces: this week's requests against last week's) share no case by design: their triples count as compared,
as independent samples, when each run scored at least two cases. Pure bookkeeping, filled by
``compare_runs``."""

from dataclasses import dataclass, field

from assay.models.comparison import Coverage, LeftOut, Unmatched

Scores = dict[str, float | None]
"""test case key -> value (None: unscored) for one model, evaluator and metric."""
MIN_SAMPLE = 2
"""Scored cases each production sample needs for an unpaired interval."""


def _scored(scores: Scores) -> int:
    return sum(1 for value in scores.values() if value is not None)


@dataclass
class CoverageTally:
    models_in_both: int
    evaluators_in_both: int
    left_out: list[LeftOut] = field(default_factory=list)
    metrics_in_both: int = 0
    metrics_compared: int = 0
    matched: set[str] = field(default_factory=set)
    compared: set[str] = field(default_factory=set)
    samples_compared: int = 0

    @classmethod
    def starting_from(cls, unmatched: Unmatched, *, models_in_both: int, evaluators_in_both: int) -> "CoverageTally":
        """Models and evaluators only one run has are the first things left out."""
        tally = cls(models_in_both=models_in_both, evaluators_in_both=evaluators_in_both)
        for kind, reason, only_in_baseline, only_in_current in (
            ("model", "model only in one run", unmatched.models_only_in_baseline, unmatched.models_only_in_current),
            ("evaluator", "evaluator only in one run", unmatched.evaluators_only_in_baseline,
             unmatched.evaluators_only_in_current),
        ):  # fmt: skip
            for items, run in ((only_in_baseline, "baseline"), (only_in_current, "current run")):
                tally.left_out += [LeftOut(item=f"{kind} {item}", reason=reason, detail=f"only in the {run}")
                                   for item in items]  # fmt: skip
        return tally

    def metric_in_one_run(self, evaluator_id: str, metric_key: str, run: str) -> None:
        self.left_out.append(
            LeftOut(item=f"{evaluator_id}.{metric_key}", reason="metric only in one run", detail=f"only in the {run}")
        )

    def no_results(self, model_key: str, evaluator_id: str, metric_key: str) -> None:
        self.metrics_in_both += 1
        self.left_out.append(
            LeftOut(
                item=f"{model_key} / {evaluator_id}.{metric_key}",
                reason="no per-case results",
                detail="a run has no per-case results for this evaluator",
            )
        )

    def triple(
        self, model_key: str, evaluator_id: str, metric_key: str, before: Scores, after: Scores, *, samples: bool
    ) -> dict[str, int]:
        """Count one triple's matched and compared cases; leave it out when no case was scored in both runs.

        ``samples``: the runs are two production samples (different requests by design), compared as
        independent samples when each scored at least 2 cases."""
        self.metrics_in_both += 1
        matched = set(before) & set(after)
        compared = {key for key in matched if before[key] is not None and after[key] is not None}
        self.matched |= matched
        self.compared |= compared
        if compared:
            self.metrics_compared += 1
        elif samples and _scored(before) >= MIN_SAMPLE and _scored(after) >= MIN_SAMPLE:
            self.metrics_compared += 1
            self.samples_compared += 1
        else:
            item = f"{model_key} / {evaluator_id}.{metric_key}"
            if matched:
                unscored_before = sum(1 for key in matched if before[key] is None)
                unscored_after = sum(1 for key in matched if after[key] is None)
                detail = (f"{len(matched)} case(s) in both runs, none scored in both: {unscored_before} unscored in "
                          f"the baseline, {unscored_after} in the current run")  # fmt: skip
                self.left_out.append(LeftOut(item=item, reason="all unscored", detail=detail))
            else:
                detail = f"baseline has {len(before)} case(s), current run {len(after)}, no test case key in both"
                self.left_out.append(LeftOut(item=item, reason="no case in common", detail=detail))
        return {"matched_cases": len(matched), "compared_cases": len(compared)}

    def coverage(self) -> Coverage:
        return Coverage(
            metrics_compared=self.metrics_compared,
            metrics_in_both=self.metrics_in_both,
            cases_matched=len(self.matched),
            cases_compared=len(self.compared),
            samples_compared=self.samples_compared,
            left_out=self.left_out,
            nothing_comparable_reason=self._nothing_comparable_reason(),
        )

    def _nothing_comparable_reason(self) -> str:
        if self.metrics_compared:
            return ""
        if not self.models_in_both:
            return "no model key is in both runs (models are matched by key)"
        if not self.evaluators_in_both:
            return "no evaluator is in both runs"
        if not self.metrics_in_both:
            return "the evaluators both runs have share no metric"
        reasons = {item.reason for item in self.left_out}
        if "no case in common" in reasons and "all unscored" not in reasons:
            return "no test case key is in both runs (cases are matched by key)"
        if "all unscored" in reasons and "no case in common" not in reasons:
            return f"every case both runs have ({len(self.matched)}) is unscored in at least one of them"
        if reasons & {"no case in common", "all unscored"}:
            return "no test case was scored in both runs: the runs share no case, or it is unscored in one of them"
        return "a run has no per-case results for the metrics both runs have"
