"""Masking what production traces must not carry into a lab: the process's registered secrets (the same
redaction as logs and results, `assay.redaction`) and personal data found by ``pii_leakage``'s detectors
(payment cards, social security numbers, emails, phone numbers, IBANs), each replaced by ``[PII:<kind>]``.

Masking runs on every text of a case before the lab is written: question, answer, conversation turns,
retrieved passages, tool arguments, outputs and errors. Names and addresses are not detected (no regex finds
them reliably); the import report says how many values of each kind were masked.
"""

from collections import Counter
from typing import Any

from assay.evaluators._detectors import DetectorTimeout, scan
from assay.evaluators._pii_patterns import PII_DETECTORS
from assay.redaction import redact


class Masker:
    """Masks texts and counts what it masked, by kind (``secret`` for a registered secret)."""

    def __init__(self, pii: bool) -> None:
        self.pii = pii
        self.counts: Counter[str] = Counter()
        self._done: dict[str, tuple[str, Counter[str]]] = {}
        """Each distinct text scanned once: a session's earlier turns recur in every later request's case."""

    def text(self, value: str | None) -> str | None:
        if not value:
            return value
        if value not in self._done:
            self._done[value] = self._mask(value)
        cleaned, found = self._done[value]
        self.counts.update(found)
        return cleaned

    def _mask(self, value: str) -> tuple[str, Counter[str]]:
        found: Counter[str] = Counter()
        cleaned = redact(value)
        if cleaned != value:
            found["secret"] += cleaned.count("[REDACTED:")
        if not self.pii:
            return cleaned, found
        try:
            findings = scan(cleaned, PII_DETECTORS)
        except DetectorTimeout:
            found["unscanned (detector timed out): whole text withheld"] += 1
            return "[PII:withheld, the detectors timed out on this text]", found
        for finding in sorted(findings, key=lambda item: item.start, reverse=True):
            cleaned = cleaned[: finding.start] + f"[PII:{finding.kind}]" + cleaned[finding.end :]
            found[finding.kind] += 1
        return cleaned, found

    def data(self, value: Any) -> Any:
        """Every string inside a JSON-like value (tool arguments)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.data(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.data(item) for item in value]
        return value
