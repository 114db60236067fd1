"""Rules for the templates the judge framework's own tests use (``tests/judges``): a graded overlap judge,
and one whose verdict flips between repeats for a case marked ``[flaky]``."""

from assay.testing.judge_rules import Verdict, coverage, rule


@rule("test_overlap")
def overlap(inputs: dict[str, str]) -> Verdict:
    score = round(coverage(inputs.get("expected", ""), inputs.get("answer", "")), 4)
    if "[flaky]" in inputs.get("answer", ""):
        score = 1.0 if int(inputs.get("__seed__") or 0) % 2 == 0 else 0.0
    return {"rationale": f"{score:.0%} of the expected answer's words are in the answer.", "score": score}
