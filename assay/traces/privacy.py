"""Masking what production traces must not carry into a lab: the process's registered secrets (the same
redaction as logs and results, `assay.redaction`), credentials of any service found by
``sensitive_data_leakage``'s detectors (provider API keys, bearer and basic auth headers, JWTs, private key
blocks, passwords and connection strings), each replaced by ``[SECRET:<kind>]`` whatever ``--keep-pii`` says,
and personal data found by ``pii_leakage``'s detectors (payment cards, social security numbers, emails, phone
numbers, IBANs), each replaced by ``[PII:<kind>]``.

Masking runs on every text the import keeps: question, answer, conversation turns, retrieved passages and
their ids, tool names, arguments (keys and values), outputs and errors, trace ids, routes, services and model
names, and the import report (the terminal output is printed from it). Names and addresses are not detected
(no regex finds them reliably); the import report says how many values of each kind were masked. The leakage
evaluators read a placeholder as the leak it replaced, so their verdict is the same on a masked lab.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from assay.evaluators._detectors import PII_LABEL, SECRET_LABEL, Detector, DetectorTimeout, placeholder, scan
from assay.evaluators._pii_patterns import PII_DETECTORS
from assay.evaluators._secret_patterns import SENSITIVE_DETECTORS
from assay.redaction import redact

CREDENTIAL_DETECTORS = tuple(detector for detector in SENSITIVE_DETECTORS if detector.kind != "certificate")
"""Every sensitive-data detector but certificates, which are public by design."""
WITHHELD = "[SECRET:withheld, the detectors timed out on this text]"


class Masker:
    """Masks texts and counts what it masked, by kind (``secret`` for a registered secret, ``credential:<kind>``
    for a credential found by its shape, the PII kind for personal data)."""

    def __init__(self, pii: bool) -> None:
        self.pii = pii
        self.counts: Counter[str] = Counter()
        self._done: dict[str, tuple[str, Counter[str]]] = {}
        """Each distinct text scanned once: a session's earlier turns recur in every later request's case."""

    def text(self, value: str | None, count: bool = True, into: Counter[str] | None = None) -> str | None:
        """``value`` masked; ``count=False`` for a copy of a text already counted (the report's examples);
        ``into`` also counts what was masked in it there (one field of one case)."""
        if not value:
            return value
        if value not in self._done:
            self._done[value] = self._mask(value)
        cleaned, found = self._done[value]
        if count:
            self.counts.update(found)
            if into is not None:
                into.update(found)
        return cleaned

    def _mask(self, value: str) -> tuple[str, Counter[str]]:
        found: Counter[str] = Counter()
        cleaned = redact(value)
        if cleaned != value:
            found["secret"] += cleaned.count("[REDACTED:")
        suites = [(CREDENTIAL_DETECTORS, SECRET_LABEL, "credential:")] + ([(PII_DETECTORS, PII_LABEL, "")] * self.pii)
        for detectors, label, prefix in suites:
            try:
                cleaned = _replaced(cleaned, detectors, label, prefix, found)
            except DetectorTimeout:
                found["unscanned (detector timed out): whole text withheld"] += 1
                return WITHHELD, found
        return cleaned, found

    def data(self, value: Any, count: bool = True, into: Counter[str] | None = None) -> Any:
        """Every string inside a JSON-like value (tool arguments), keys included."""
        if isinstance(value, str):
            return self.text(value, count, into)
        if isinstance(value, dict):
            return {self.text(str(key), count, into): self.data(item, count, into) for key, item in value.items()}
        if isinstance(value, list):
            return [self.data(item, count, into) for item in value]
        return value


def _replaced(text: str, detectors: Sequence[Detector], label: str, prefix: str, found: Counter[str]) -> str:
    """``text`` with each finding replaced by its placeholder; of overlapping findings (a JWT that is also a
    bearer token) the first and longest is replaced."""
    kept: list[tuple[int, int, str]] = []
    for finding in sorted(scan(text, detectors), key=lambda item: (item.start, -item.end)):
        if kept and finding.start < kept[-1][1]:
            continue
        kept.append((finding.start, finding.end, finding.kind))
    for start, end, kind in reversed(kept):
        text = text[:start] + placeholder(label, kind) + text[end:]
        found[prefix + kind] += 1
    return text
