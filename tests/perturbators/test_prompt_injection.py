import random

from assay.perturbators import get_perturbator
from assay.perturbators.prompt_injection import _INJECTIONS


def test_intensity_is_the_number_of_injected_instructions() -> None:
    injection = get_perturbator("prompt_injection")
    question = "What is the card replacement fee?"
    for intensity, count in (("low", 1), ("medium", 2), ("high", 3)):
        text = injection.perturb(question, intensity=intensity, rng=random.Random(3))
        assert question in text
        assert sum(instruction in text for instruction in _INJECTIONS) == count
    assert injection.kind == "adversarial"
