"""Names that are spelled two ways: abbreviations and their expansions, and words that look like names.

A record says "CA", the answer says "California"; the context says "Mon", the answer "Monday"; a date is
"2024-03-05" in the data and "March 5, 2024" in the answer. Each is the same name, so the unknown-name check
must read them as one. The lists are maintained here, in one place: US states and DC (USPS codes), months
and weekdays (three- and four-letter abbreviations), and the currency codes of the currencies whose signs
figures carry. Abbreviations that are also ordinary words ("IN", "OR", "ME", "Mar", "May", "Sun") count only
in the case they are written in: a two-letter state code only in capitals, a month or weekday abbreviation
only capitalised.

``NOT_NAMES`` are capitalised words that start a clause or mark a time ("Overall", "Meanwhile", "AM"): never
names, wherever they stand.
"""

from functools import lru_cache

import regex

US_STATES = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California", "CO": "Colorado",
    "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia", "FL": "Florida", "GA": "Georgia",
    "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa", "KS": "Kansas",
    "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland", "MA": "Massachusetts", "MI": "Michigan",
    "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada",
    "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York", "NC": "North Carolina",
    "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas",
    "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington", "WV": "West Virginia",
    "WI": "Wisconsin", "WY": "Wyoming", "PR": "Puerto Rico",
}  # fmt: skip
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
CURRENCIES = {"USD": "dollars", "EUR": "euros", "GBP": "pounds", "CAD": "dollars", "AUD": "dollars"}

NOT_NAMES = frozenset(
    {
        "overall", "meanwhile", "additionally", "furthermore", "moreover", "however", "therefore", "thus", "finally",
        "firstly", "secondly", "thirdly", "lastly", "instead", "similarly", "consequently", "specifically", "notably",
        "importantly", "alternatively", "unfortunately", "fortunately", "generally", "typically", "currently", "today",
        "tomorrow", "yesterday", "also", "still", "otherwise", "hence", "nevertheless", "nonetheless", "besides",
        "likewise", "ultimately", "essentially", "basically", "interestingly", "surprisingly", "clearly", "obviously",
        "apparently", "initially", "previously", "recently", "later", "afterwards", "eventually", "please", "note",
        "answer", "summary", "yes", "no", "am", "pm", "ok", "okay",
    }
)
_ISO_DATE = regex.compile(r"\b\d{4}-(\d{1,2})-\d{1,2}\b|\b(\d{1,2})/\d{1,2}/\d{4}\b")


def _pairs() -> list[tuple[str, str]]:
    """(abbreviation as it must be written, expansion) for every maintained list."""
    pairs = list(US_STATES.items())
    pairs += [(month[:3], month) for month in MONTHS] + [("Sept", "September")]
    pairs += [(day[:3], day) for day in WEEKDAYS] + [("Tues", "Tuesday"), ("Thur", "Thursday"), ("Thurs", "Thursday")]
    return pairs + list(CURRENCIES.items())


_ABBREVIATED = {short: full for short, full in _pairs()}
_EXPANDED: dict[str, list[str]] = {}
for _short, _full in _pairs():
    _EXPANDED.setdefault(_full.lower(), []).append(_short)


@lru_cache(maxsize=4096)
def alias_words(text: str) -> frozenset[str]:
    """Words the text says in another spelling: expansions of its abbreviations (in the case they must be
    written), abbreviations of its expansions, and the month names of its numeric dates, lower-cased."""
    found: set[str] = set()
    for word in regex.findall(r"\p{L}+", text):
        if word in _ABBREVIATED:
            found.update(_ABBREVIATED[word].lower().split())
        found.update(short.lower() for short in _EXPANDED.get(word.lower(), ()))
    for state in (full for full in US_STATES.values() if " " in full and full in text):
        found.update(short.lower() for short in _EXPANDED[state.lower()])
    for match in _ISO_DATE.finditer(text):
        month = int(match.group(1) or match.group(2))
        if 1 <= month <= 12:
            found.update({MONTHS[month - 1].lower(), MONTHS[month - 1][:3].lower()})
    return frozenset(found)
