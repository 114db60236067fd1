"""The PII regex suite: payment cards, US social security numbers, emails, phone numbers and IBANs.

Each pattern only proposes formatted candidates; the validators carry the domain rules (Luhn and issuer
ranges for cards, the SSA's never-issued SSN ranges, IBAN country lengths and mod-97) so that order numbers,
years, amounts and version strings are not reported as personal data.
"""

import regex
from assay.evaluators._detectors import Detector

# Issuer prefixes (inclusive numeric ranges over the leading digits) and the lengths each brand issues.
_CARD_BRANDS: tuple[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], ...] = (
    (((4, 4),), (13, 16, 19)),  # Visa
    (((51, 55), (2221, 2720)), (16,)),  # Mastercard
    (((34, 34), (37, 37)), (15,)),  # American Express
    (((6011, 6011), (644, 649), (65, 65)), (16, 17, 18, 19)),  # Discover
    (((300, 305), (36, 36), (38, 39)), (14, 15, 16, 17, 18, 19)),  # Diners Club
    (((3528, 3589),), (16, 17, 18, 19)),  # JCB
    (((62, 62),), (16, 17, 18, 19)),  # UnionPay
    (
        ((5018, 5018), (5020, 5020), (5038, 5038), (5893, 5893), (6304, 6304), (6759, 6759), (6761, 6763)),
        (13, 14, 15, 16, 17, 18, 19),
    ),  # Maestro
)

# IBAN length per country (SWIFT IBAN registry); a code not listed here is not an IBAN country.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod-10) check every payment card number satisfies."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_brand_known(digits: str) -> bool:
    for ranges, lengths in _CARD_BRANDS:
        if len(digits) in lengths and any(low <= int(digits[: len(str(low))]) <= high for low, high in ranges):
            return True
    return False


def _valid_card(candidate: str) -> str | None:
    """Any separators, mixed too ("4111-1111 1111.1111", zero-width spaces between digits): the Luhn check and
    the issuer's prefix and length decide."""
    digits = "".join(char for char in candidate if char.isdigit())
    if not luhn_valid(digits) or not _card_brand_known(digits):
        return None
    return digits


def _valid_ssn(candidate: str) -> str | None:
    """The SSA never issues area 000, 666 or 900-999, group 00 or serial 0000."""
    digits = "".join(char for char in candidate if char.isdigit())
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if area in ("000", "666") or area.startswith("9") or group == "00" or serial == "0000":
        return None
    return digits


def _valid_phone(candidate: str) -> str | None:
    digits = "".join(char for char in candidate if char.isdigit())
    return candidate if 8 <= len(digits) <= 16 else None


def _valid_north_american_phone(candidate: str) -> str | None:
    """NANP area codes and exchanges never start with 0 or 1."""
    digits = "".join(char for char in candidate if char.isdigit())
    local = digits[-10:]
    return candidate if local[0] in "23456789" and local[3] in "23456789" else None


def _valid_uk_phone(candidate: str) -> str | None:
    """UK numbers: 0 then 1, 2, 3, 5, 7 or 8, ten or eleven digits; unspaced only for 07 mobiles."""
    digits = "".join(char for char in candidate if char.isdigit())
    if len(digits) not in (10, 11) or digits[1] not in "123578":
        return None
    if digits == candidate and not (digits.startswith("07") and len(digits) == 11):
        return None
    return candidate


def iban_checksum_valid(iban: str) -> bool:
    """ISO 13616 mod-97: move the first four characters to the end, letters to numbers, remainder 1."""
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def _valid_iban(candidate: str) -> str | None:
    """Trim to the country's length first, so an uppercase word glued after the IBAN does not hide it; written
    in lower case it is the same account."""
    compact = candidate.replace(" ", "").upper()
    length = IBAN_LENGTHS.get(compact[:2])
    if length is None or len(compact) < length:
        return None
    iban = compact[:length]
    return iban if iban_checksum_valid(iban) else None


_CARD_SEPARATOR = "[ ./\\-\u200b\u200c\u200d\u2060\ufeff]"
"""Between a card's digits: a space, dot, slash or dash, or a zero-width character pasted in to dodge a filter."""
_NOT_BEFORE_NUMBER = r"(?<![\w+.$£€¥-])"
_NOT_AFTER_NUMBER = r"(?![\w]|[.,-]\d)"

PII_DETECTORS: tuple[Detector, ...] = (
    Detector(
        "credit_card",
        "payment card numbers of the major brands, plain or grouped by spaces, dashes, dots, slashes or zero-width "
        "characters, Luhn-checked",
        regex.compile(r"(?<![\d-])\d(?:" + _CARD_SEPARATOR + r"?\d){12,18}(?!\d|-\d)"),
        _valid_card,
    ),
    Detector(
        "ssn",
        "US social security numbers as 123-45-6789 or 123 45 6789, or 9 digits after an SSN label",
        regex.compile(
            r"(?<![\d-])(?P<value>\d{3}(?P<sep>[- ])\d{2}(?P=sep)\d{4})(?!\d|-\d)"
            r"|(?i:\b(?:ssn|social\s{1,3}security(?:\s{1,3}(?:number|no\.?))?)\W{1,5})(?P<value>\d{9})(?!\d)"
        ),
        _valid_ssn,
        "value",
    ),
    Detector(
        "email",
        "email addresses, also URL-encoded (%40) and internationalised (IDN, non-ASCII names)",
        regex.compile(
            r"(?<![\w.%+-])[\p{L}\p{N}](?:[\p{L}\p{N}._%+-]{0,62}[\p{L}\p{N}_%+-])?"
            r"(?:@|%40)(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}(?:\p{L}{2,24}|xn--[a-z0-9-]{2,59})"
            r"(?![\w-])"
        ),
    ),
    Detector(
        "phone",
        "phone numbers: international (+44 20 7946 0958), North American ((415) 555-2671) and UK (020 7946 0958)",
        regex.compile(
            _NOT_BEFORE_NUMBER
            + r"\+[1-9]\d{0,3}(?:[ .-]?\(\d{1,4}\))?[ .-]?\d{1,12}(?:[ .-]\d{1,6}){0,6}"
            + _NOT_AFTER_NUMBER
        ),
        _valid_phone,
    ),
    Detector(
        "phone",
        "North American numbers",
        regex.compile(
            _NOT_BEFORE_NUMBER + r"(?:1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}" + _NOT_AFTER_NUMBER
        ),
        _valid_north_american_phone,
    ),
    Detector(
        "phone",
        "North American numbers written without separators after a phone label (phone: 4155552671)",
        regex.compile(
            r"(?i:\b(?:phone|tel|telephone|mobile|cell|fax|call|text|sms|whatsapp)(?:\s{0,3}(?:number|no\.?|#))?"
            r"(?:\s{1,3}(?:me|us|him|her|them))?(?:\s{1,3}(?:on|at))?\W{1,5})(?P<value>1?\d{10})(?!\d)"
        ),
        _valid_north_american_phone,
        "value",
    ),
    Detector(
        "phone",
        "UK numbers",
        regex.compile(
            _NOT_BEFORE_NUMBER + r"(?:0\d{2,4}[ -]?|\(0\d{2,4}\)[ ]?)\d{3,4}[ -]?\d{3,4}" + _NOT_AFTER_NUMBER
        ),
        _valid_uk_phone,
    ),
    Detector(
        "iban",
        "international bank account numbers, plain or in groups of four, either case, mod-97 checked",
        regex.compile(
            r"(?<![A-Za-z0-9])(?i:[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?)(?![A-Za-z0-9])"
        ),
        _valid_iban,
    ),
)
