"""The nine steps of the MRM workflow (seed 002): the one list of their ids, order and titles.

``Step`` is a ``StrEnum``: a member equals its id (``Step.CALIBRATION == "calibration"``), so ids read from a
stored run, a Prefect parameter or an approvals file compare with it directly."""

from enum import StrEnum


class Step(StrEnum):
    TOPIC_MODELING = "topic-modeling"
    TEST_GENERATION = "test-generation"
    TEST_VALIDATION = "test-validation"
    AUTOMATED_EVALUATION = "automated-evaluation"
    CALIBRATION = "calibration"
    FAILURE_CLUSTERING = "failure-clustering"
    WEAKNESS_DETECTION = "weakness-detection"
    ROBUSTNESS_INPUT_VARIATIONS = "robustness-input-variations"
    ROBUSTNESS_ADVERSARIAL = "robustness-adversarial"

    @property
    def number(self) -> int:
        """The step's place in the workflow, from 1."""
        return list(Step).index(self) + 1

    @property
    def title(self) -> str:
        return _TITLES[self]

    @property
    def decided(self) -> bool:
        """Whether the step ends in a decision (a reviewer's, a policy's or an approvals file's)."""
        return self in DECIDED_STEPS


_TITLES = {
    Step.TOPIC_MODELING: "Topic modeling",
    Step.TEST_GENERATION: "Test generation",
    Step.TEST_VALIDATION: "Test validation",
    Step.AUTOMATED_EVALUATION: "Automated evaluation",
    Step.CALIBRATION: "Human evaluation calibration",
    Step.FAILURE_CLUSTERING: "Failure clustering",
    Step.WEAKNESS_DETECTION: "Weakness detection",
    Step.ROBUSTNESS_INPUT_VARIATIONS: "Robustness testing: input variations",
    Step.ROBUSTNESS_ADVERSARIAL: "Robustness testing: adversarial inputs",
}

DECIDED_STEPS = (Step.TOPIC_MODELING, Step.TEST_VALIDATION, Step.CALIBRATION, Step.FAILURE_CLUSTERING)
"""The steps whose outcome is a decision, in workflow order."""


def step_title(step: str) -> str:
    """The title of a step id; an id that is no step (a stored run of another version) is shown as is."""
    return Step(step).title if step in _TITLES else step
