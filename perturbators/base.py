"""The perturbator contract.

A perturbator declares its metadata once, as class data, and turns a prompt into a variant with
``perturb(text, intensity=..., rng=...)``. It is pure: every random choice comes from the ``rng`` it is
given, so the suite helper can derive one generator per case and a run repeats exactly. Intensity names map
to one documented amount per perturbator (``amounts``, counted as ``amount_unit`` says), so "medium" means
the same thing in a report as in the code.
"""

import itertools
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, get_args

Intensity = Literal["low", "medium", "high"]
INTENSITIES: tuple[Intensity, ...] = get_args(Intensity)

Kind = Literal["input_variation", "adversarial"]
KINDS: tuple[Kind, ...] = get_args(Kind)


def check_intensity(intensity: str) -> Intensity:
    """The intensity itself when it is known; a ValueError naming the accepted values otherwise."""
    if intensity not in INTENSITIES:
        raise ValueError(f"unknown intensity {intensity!r}; expected one of {', '.join(INTENSITIES)}")
    return intensity  # type: ignore[return-value]


class Perturbator(ABC):
    """Subclasses declare the metadata below and implement ``apply``; ``perturb`` is the entry point.

    ``kind`` places the perturbator in the MRM workflow: "input_variation" for the mistakes and rewordings
    a real user makes (step 8), "adversarial" for inputs built to mislead or slip past guardrails (step 9).
    """

    id: ClassVar[str]
    display_name: ClassVar[str]
    description: ClassVar[str]
    kind: ClassVar[Kind]
    amounts: ClassVar[Mapping[Intensity, float]]
    amount_unit: ClassVar[str]

    def perturb(self, text: str, *, intensity: Intensity, rng: random.Random) -> str:
        """A variant of ``text`` at ``intensity``; blank text has nothing to perturb and comes back as is."""
        amount = self.amounts[check_intensity(intensity)]
        if not text.strip():
            return text
        return self.apply(text, amount, rng)

    @abstractmethod
    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        """Perturb non-blank ``text`` by ``amount`` (this class's ``amount_unit``), drawing only from ``rng``."""

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The metadata as plain data, for catalogues and reports."""
        return {
            "id": cls.id,
            "display_name": cls.display_name,
            "description": cls.description,
            "kind": cls.kind,
            "amounts": {intensity: cls.amounts[intensity] for intensity in INTENSITIES},
            "amount_unit": cls.amount_unit,
        }


def metadata_problems(cls: type[Perturbator]) -> list[str]:
    """What is missing or malformed in a perturbator's metadata; empty when it is complete."""
    problems = [
        f"{name} is missing or empty"
        for name in ("id", "display_name", "description", "amount_unit")
        if not isinstance(getattr(cls, name, None), str) or not getattr(cls, name)
    ]
    perturbator_id = getattr(cls, "id", "")
    if isinstance(perturbator_id, str) and perturbator_id and perturbator_id != perturbator_id.lower():
        problems.append(f"id {perturbator_id!r} must be lower case")
    if getattr(cls, "kind", None) not in KINDS:
        problems.append(f"kind must be one of {', '.join(KINDS)}")
    amounts = getattr(cls, "amounts", {})
    if set(amounts) != set(INTENSITIES):
        problems.append(f"amounts must give exactly {', '.join(INTENSITIES)}")
    elif not all(0 < amounts[a] <= amounts[b] for a, b in itertools.pairwise(INTENSITIES)):
        problems.append("amounts must be positive and must not shrink from low to high")
    return problems
