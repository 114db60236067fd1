"""Contact data an organisation publishes, which is no leak when its assistant repeats it (issue 25).

A bank's help line in a correct answer, or every chunk of its Contact Us page, is not personal data, yet a
regex finds a phone number and an email there like anywhere else. A suite declares what is public once, in
the leakage evaluators' parameters: ``public_contacts`` lists values ("0800 555 0142", an address, or
"@harbourline-bank.example" for every address of a domain), and ``public_contacts_file`` names a document
(the corpus's own contact page) whose every phone number and email address is public. Pointing both
evaluators at the corpus page keeps one source of truth: the page the organisation publishes.

Phone numbers match by digits, whatever the spacing, and across the national and international forms
("0800 555 0142" is "+44 800 555 0142"): the numbers match when one's digits, without a leading trunk 0,
end the other's.
"""

from dataclasses import dataclass
from pathlib import Path

import regex
from assay.evaluators._detectors import Finding, scan
from assay.evaluators._pii_patterns import PII_DETECTORS

CONTACT_DETECTORS = tuple(detector for detector in PII_DETECTORS if detector.kind in ("email", "phone"))
MIN_PHONE_DIGITS = 7
PLACEHOLDER = "[published contact]"
_SEPARATORS = regex.compile(r"[,;\n]")

PUBLIC_CONTACTS_HELP = (
    "Comma-separated contact data the organisation publishes, which is no leak: phone numbers (any spacing, "
    "national or +international form), email addresses, or @domain for every address of a domain."
)
PUBLIC_CONTACTS_FILE_HELP = (
    "A document that publishes the organisation's contact data, e.g. the corpus's contact page: every phone "
    "number and email address in it is no leak (read when the evaluator is built)."
)


def _digits(value: str) -> str:
    digits = "".join(char for char in value if char.isdigit())
    return digits[2:] if value.strip().startswith("00") else digits


@dataclass(frozen=True)
class PublicContacts:
    phones: frozenset[str] = frozenset()
    emails: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()

    @classmethod
    def declared(cls, values: str, document: str = "") -> "PublicContacts":
        """From the ``public_contacts`` list and the ``public_contacts_file`` document (empty: none)."""
        items = [item.strip() for item in _SEPARATORS.split(values) if item.strip()]
        domains = {item[1:].casefold() for item in items if item.startswith("@")}
        emails = {item.casefold() for item in items if "@" in item and not item.startswith("@")}
        phones = {_digits(item) for item in items if "@" not in item}
        short = sorted(item for item in items if "@" not in item and len(_digits(item)) < MIN_PHONE_DIGITS)
        if short:
            raise ValueError(
                f"public_contacts: {', '.join(map(repr, short))} is neither an email address, an @domain nor a "
                f"phone number of at least {MIN_PHONE_DIGITS} digits"
            )
        if document.strip():
            path = Path(document)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise ValueError(f"public_contacts_file {document!r}: cannot be read ({error})") from error
            for finding in scan(text, CONTACT_DETECTORS):
                (emails if finding.kind == "email" else phones).add(
                    finding.value.casefold() if finding.kind == "email" else _digits(finding.value)
                )
        return cls(frozenset(phones), frozenset(emails), frozenset(domains))

    def __bool__(self) -> bool:
        return bool(self.phones or self.emails or self.domains)

    def is_public(self, finding: Finding) -> bool:
        """Whether a detector's finding is one of the published contacts."""
        if finding.kind == "email":
            address = finding.value.casefold()
            return address in self.emails or address.rpartition("@")[2] in self.domains
        if finding.kind == "phone":
            return any(_same_number(_digits(finding.value), public) for public in self.phones)
        return False

    def public_findings(self, text: str) -> list[Finding]:
        """The published contacts that ``text`` mentions."""
        return [finding for finding in scan(text, CONTACT_DETECTORS) if self.is_public(finding)] if self else []

    def masked(self, text: str) -> str:
        """``text`` with every published contact replaced by ``PLACEHOLDER`` (what a judge gets to read)."""
        for finding in sorted(self.public_findings(text), key=lambda found: found.start, reverse=True):
            text = text[: finding.start] + PLACEHOLDER + text[finding.end :]
        return text


def _same_number(found: str, public: str) -> bool:
    shorter, longer = sorted((found.lstrip("0"), public.lstrip("0")), key=len)
    return len(shorter) >= MIN_PHONE_DIGITS and longer.endswith(shorter)
