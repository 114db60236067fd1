"""Toxicity's metadata; its scoring is tested with a tiny local model in test_model_classifiers.py."""

from assay.artifacts.findings.common import AVID_CODES, avid_code, problem_type
from assay.evaluators import evaluator_class


def test_problems_are_reported_as_toxicity_not_under_the_fairness_domain() -> None:
    spec = evaluator_class("toxicity").spec
    assert spec.domain == "fairness" and problem_type(spec) == "toxicity"
    assert avid_code(problem_type(spec)) == AVID_CODES["toxicity"] == "AVID / E0300 / Toxicity"
