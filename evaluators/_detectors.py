"""Bounded regex detectors shared by the leakage evaluators (PII, sensitive data, encoded leaks).

A detector pairs a simple pattern that finds candidates with a validator that rejects look-alikes (a Luhn
check for card numbers, mod-97 for IBANs, a JSON header for JWTs): patterns stay short and free of nested
ambiguity, and precision comes from checks a regex cannot express. Every scan runs under a timeout because
the scanned text is whatever the model produced.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import regex

SCAN_TIMEOUT_S = 2.0
MAX_MASK_STARS = 16


class DetectorTimeout(Exception):
    """A detector that did not finish in time; the case is unscored rather than declared clean."""


@dataclass(frozen=True)
class Finding:
    """One detected value: what it is, where it is, and the value as validated (e.g. an IBAN without spaces)."""

    kind: str
    start: int
    end: int
    value: str


@dataclass(frozen=True)
class Detector:
    """``pattern`` proposes candidates; ``validate`` returns the accepted value (possibly trimmed) or None.

    ``group`` names the part of the match that is the value (a password after its ``password:`` label).
    """

    kind: str
    description: str
    pattern: regex.Pattern
    validate: Callable[[str], str | None] | None = None
    group: int | str = 0


def scan(text: str, detectors: Sequence[Detector]) -> list[Finding]:
    """Every validated finding in ``text`` by kind then position; overlapping findings of one kind count once
    (several phone formats may match the same number)."""
    candidates: list[Finding] = []
    for detector in detectors:
        for match in finditer_bounded(detector.pattern, text, detector.kind):
            value = match.group(detector.group)
            accepted = detector.validate(value) if detector.validate else value
            if accepted:
                start, end = match.span(detector.group)
                candidates.append(Finding(detector.kind, start, end, accepted))
    order = {kind: index for index, kind in enumerate(kinds_of(detectors))}
    findings: list[Finding] = []
    for finding in sorted(candidates, key=lambda found: (order[found.kind], found.start, -found.end)):
        previous = findings[-1] if findings else None
        if previous is None or previous.kind != finding.kind or finding.start >= previous.end:
            findings.append(finding)
    return findings


def finditer_bounded(pattern: regex.Pattern, text: str, what: str) -> list[regex.Match]:
    """All matches of ``pattern`` in ``text``, or ``DetectorTimeout`` when the scan runs past the limit."""
    try:
        return list(pattern.finditer(text, timeout=SCAN_TIMEOUT_S))
    except TimeoutError as error:
        raise DetectorTimeout(
            f"the {what} detector took longer than {SCAN_TIMEOUT_S}s on a {len(text)}-character text"
        ) from error


@lru_cache(maxsize=64)
def select_detectors(suite: tuple[Detector, ...], kinds: str) -> tuple[Detector, ...]:
    """The detectors of ``suite`` named in the comma-separated ``kinds``; an unknown name is an error."""
    known = kinds_of(suite)
    wanted = {name.strip() for name in kinds.split(",") if name.strip()}
    unknown = sorted(wanted.difference(known))
    if unknown:
        raise ValueError(f"unknown detector kind(s) {unknown}; known kinds: {', '.join(known)}")
    if not wanted:
        raise ValueError(f"no detector kind selected; known kinds: {', '.join(known)}")
    return tuple(detector for detector in suite if detector.kind in wanted)


PII_LABEL = "PII"
SECRET_LABEL = "SECRET"
"""What a masker writes in place of a value it removed: ``[PII:email]``, ``[SECRET:aws_access_key]``."""


def placeholder(label: str, kind: str) -> str:
    """The text a masker leaves where it removed a value of ``kind`` (trace import, see ``assay.traces``)."""
    return f"[{label}:{kind}]"


@lru_cache(maxsize=64)
def with_placeholders(suite: tuple[Detector, ...], label: str) -> tuple[Detector, ...]:
    """``suite`` plus, per kind, a detector of its masked placeholder: an answer that leaked a phone number
    still leaked it after the trace import replaced it by ``[PII:phone]``, so the verdict does not depend on
    whether the lab was masked."""
    masked = tuple(
        Detector(kind, f"{kind} masked before the lab was written",
                 regex.compile(regex.escape(placeholder(label, kind))))
        for kind in kinds_of(suite)
    )  # fmt: skip
    return suite + masked


def kinds_of(suite: Sequence[Detector]) -> tuple[str, ...]:
    """The distinct kinds of a suite in declaration order (several detectors may share one kind)."""
    return tuple(dict.fromkeys(detector.kind for detector in suite))


def kinds_parameter(suite: Sequence[Detector], kinds: str = "kinds") -> Any:
    """A detecting evaluator's parameter naming the kinds to detect, comma-separated: by default all of the
    suite's, each described from the suite (``describe``); ``kinds`` is what the description calls them."""
    return field(
        default=",".join(kinds_of(suite)),
        metadata={"description": f"Comma-separated {kinds} to detect: {describe(suite)}."},
    )


def mask(value: str) -> str:
    """A preview of a found value that identifies it to a reviewer without repeating it.

    Up to two characters are kept at each end (fewer for short values, so at most a quarter of the value is
    shown, none under 8 characters) and the rest become ``*``, capped at ``MAX_MASK_STARS`` so a private key
    does not become a line of stars: a results file must not be a second copy of the leak.
    """
    keep = min(2, len(value) // 8)
    hidden = len(value) - 2 * keep
    return value[:keep] + "*" * min(hidden, MAX_MASK_STARS) + (value[len(value) - keep :] if keep else "")


def mask_findings(text: str, findings: Sequence[Finding]) -> str:
    """``text`` with the span of every finding masked; overlapping spans (two kinds on one value) merge."""
    spans: list[list[int]] = []
    for finding in sorted(findings, key=lambda found: found.start):
        if spans and finding.start < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], finding.end)
        else:
            spans.append([finding.start, finding.end])
    parts, cursor = [], 0
    for start, end in spans:
        parts.extend([text[cursor:start], mask(text[start:end])])
        cursor = end
    return "".join([*parts, text[cursor:]])


def describe(suite: Sequence[Detector]) -> str:
    """'kind (what it finds); ...' for parameter descriptions, so docs never drift from the suite; the
    first detector of a kind describes it."""
    first = {detector.kind: detector.description for detector in reversed(suite)}
    return "; ".join(f"{kind} ({first[kind]})" for kind in kinds_of(suite))
