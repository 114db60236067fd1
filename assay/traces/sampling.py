"""Which traces to import: a time window, then a seeded sample stratified by route, model or service.

A stratified sample keeps each stratum's share of the population (largest remainders, so the sizes add up
exactly) and gives every stratum that has traces at least one when the sample is large enough for that, so a
rarely used route is still looked at. The same files, sample and seed always give the same sample: traces are
ordered by id before a stratum's own seeded draw.
"""

import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeVar

StratumKey = Literal["route", "model", "service", "none"]
T = TypeVar("T")


@dataclass(frozen=True)
class SampleSize:
    """A number of traces (``count``) or a share of them (``fraction``, in (0, 1])."""

    count: int | None = None
    fraction: float | None = None

    @classmethod
    def parse(cls, text: str) -> "SampleSize":
        """``"200"`` -> 200 traces; ``"0.1"`` or ``"10%"`` -> a tenth of them."""
        value = text.strip()
        try:
            if value.endswith("%"):
                return cls._share(float(value[:-1]) / 100, text)
            if value.isdigit():
                if int(value) < 1:
                    raise ValueError
                return cls(count=int(value))
            return cls._share(float(value), text)
        except ValueError:
            raise ValueError(f"--sample {text!r}: expected a number of traces (200), a fraction (0.1) or a "
                             "percentage (10%)") from None  # fmt: skip

    @classmethod
    def _share(cls, share: float, text: str) -> "SampleSize":
        if not 0 < share <= 1 or math.isnan(share):
            raise ValueError
        return cls(fraction=share)

    def of(self, population: int) -> int:
        if self.count is not None:
            return min(self.count, population)
        return min(population, max(1, round(population * (self.fraction or 0)))) if population else 0


def in_window(started_at: datetime, since: datetime | None, until: datetime | None) -> bool:
    """``since`` inclusive, ``until`` exclusive."""
    return (since is None or started_at >= since) and (until is None or started_at < until)


def stratified_sample(
    items: Sequence[T], size: SampleSize, seed: int, stratum_of: Callable[[T], str], key_of: Callable[[T], str]
) -> tuple[list[T], dict[str, tuple[int, int]]]:
    """The sampled items in their original order, and per stratum ``(population, sampled)``."""
    strata: dict[str, list[T]] = defaultdict(list)
    for item in items:
        strata[stratum_of(item)].append(item)
    sizes = _allocate({name: len(members) for name, members in strata.items()}, size.of(len(items)))
    chosen: set[int] = set()
    for name, members in strata.items():
        ordered = sorted(members, key=key_of)
        picked = random.Random(f"{seed}:{name}").sample(ordered, sizes[name])
        chosen.update(id(item) for item in picked)
    sample = [item for item in items if id(item) in chosen]
    return sample, {name: (len(strata[name]), sizes[name]) for name in sorted(strata)}


def _allocate(populations: dict[str, int], total: int) -> dict[str, int]:
    """Proportional sizes summing to ``total``; each stratum gets one first when ``total`` allows it."""
    grand = sum(populations.values())
    if total >= grand:
        return dict(populations)
    sizes = dict.fromkeys(populations, 0)
    remaining = total
    if total >= len(populations):
        sizes = dict.fromkeys(populations, 1)
        remaining -= len(populations)
    spare = {name: populations[name] - sizes[name] for name in populations}
    spare_total = sum(spare.values())
    if remaining and spare_total:
        shares = {name: remaining * spare[name] / spare_total for name in populations}
        floors = {name: min(spare[name], math.floor(share)) for name, share in shares.items()}
        left = remaining - sum(floors.values())
        by_remainder = sorted(populations, key=lambda name: (-(shares[name] - floors[name]), name))
        for name in by_remainder:
            if left <= 0:
                break
            if floors[name] < spare[name]:
                floors[name] += 1
                left -= 1
        for name in populations:
            sizes[name] += floors[name]
    return sizes
