"""Claim-level evidence for the groundedness evaluator: figures, names and content words.

Why not embeddings alone: a sentence embedding barely moves when one figure changes ("3.25%" -> "3.50%"),
so a fluent paraphrase with a wrong number scores as well as a correct one, while a terse correct answer
("3.25% AER.") scores poorly because it shares little wording with any context sentence. The checks here
are exact where embeddings are blind: every figure (amount, percentage, time, phone number, count) and
every name an answer sentence states must be stated by the evidence, after normalisation ("£5,000" ==
"5000", "3.25 %" == "3.25%", "9am" == "9:00am", "five hundred" == "500", "+44 20 7946 0142" ==
"020 7946 0142"), in a unit that does not disagree ("£350" does not support "350 days"), and its content
words must be found there (fuzzy, so inflections match). A figure that is only the sum or difference of two
stated figures ("4.09% less 0.30 points" -> "3.79%") is derived: not missing, but weaker evidence.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

import regex
from assay.evaluators._aliases import NOT_NAMES, alias_words

_STOPWORD_TEXT = """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each either else even ever few for from further get gets got had hadn't has hasn't have haven't
    having he her here hers herself him himself his how however i if in into is isn't it it's its itself just
    let's may me might more most must mustn't my myself need needs no nor not of off often on once only or
    other ought our ours ourselves out over own per same shall she should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've this
    those through thus to too under until up upon us usually very via was wasn't we we'd we'll we're we've
    were weren't what what's when where which while who whom whose why will with within without won't would
    wouldn't yes you you'd you'll you're you've your yours yourself yourselves
    approx approximately around roughly generally basically simply certainly indeed sure okay ok well say etc"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_MULTIPLIERS = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "million": 1_000_000, "bn": 1_000_000_000,
                "billion": 1_000_000_000}  # fmt: skip

_LIST_MARKER = regex.compile(r"(?m)^\s*(?:#+|[-*+•]|\d{1,2}[.)])\s+")
_PHONE = regex.compile(r"(?<![\w.,£$€])\+?\d{2,5}(?:[ -]\d{2,4}){2,3}(?![\w%])")
_TIME = regex.compile(
    r"(?<![\w.,])(\d{1,2})(?::([0-5]\d))?\s?([ap])\.?\s?m\b\.?|(?<![\w.,:])([01]?\d|2[0-4]):([0-5]?\d)(?![\d:])"
    r"|\b(noon|midday|midnight)\b",
    regex.I,
)
_TIME_RANGE = regex.compile(
    r"(?<![\w.,])(\d{1,2})(?::([0-5]\d))?\s*(?:-|–|to|until|till|through)\s*(?=\d{1,2}(?::[0-5]\d)?\s?([ap])\.?\s?m\b)",
    regex.I,
)
"""The first time of a range that states its am/pm once ("4 to 9 PM", "4-9pm"): it shares the second's."""
_FIGURE = regex.compile(
    r"(?<![\p{L}\d.,])[£$€]?\s?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
    r"(?:(?P<pence>p)(?![.\p{L}])|\s?(?P<unit>%|per\s?cent|percent|million|billion|thousand|bn|m|k)(?!\p{L})"
    r"|(?:st|nd|rd|th)(?!\p{L}))?(?![\p{L}\d])",
    regex.I,
)
_NUMBER_WORD_ALTERNATIVES = "|".join(sorted([*_UNITS, *_SCALES], key=len, reverse=True))
_NUMBER_WORD = regex.compile(
    rf"\b(?:(?:a|an)\s+)?(?:{_NUMBER_WORD_ALTERNATIVES})\b(?:[\s-]+(?:and\s+)?(?:{_NUMBER_WORD_ALTERNATIVES})\b)*",
    regex.I,
)
_DURATION_AFTER = regex.compile(
    r"\s?(?:(?:-|–|to|and|or)\s?[£$€]?\d[\d,.]*\s?)?(?:[-\s](?:working|business|calendar|clear|full|further|"
    r"consecutive|banking|whole))?[-\s](?P<unit>day|week|month|year|hour|minute)s?\b",
    regex.I,
)
_WORD = regex.compile(r"\p{L}[\p{L}'’]*\p{L}|\p{L}")
_NAME = regex.compile(r"\b(?:\p{Lu}[\p{L}’']*\p{L}|\p{Lu}{2,})\b")
_CLAUSE_OPENERS = ".!?:;([{\"'“‘-–—•"


@dataclass(frozen=True)
class Figure:
    """A figure as stated (``text``), its comparable form (``key``) and what it counts (``unit``: "money",
    "percent", "time", "tel", a duration such as "day" or "month", or "" when the text does not say)."""

    text: str
    key: str
    unit: str = ""

    def matches(self, other: "Figure") -> bool:
        """Same value, and units that do not disagree: "£350" is not "350 days", but "350" may be either."""
        return self.key == other.key and (self.unit == other.unit or not self.unit or not other.unit)


def clean(text: str) -> str:
    """Drop Markdown list markers, heading hashes and table pipes: layout, not claims (a "3." step number
    is not a figure the context states)."""
    return _LIST_MARKER.sub("", text).replace("|", " ; ")


def _decimal_key(integer: str, fraction: str | None, scale: Decimal) -> str:
    value = Decimal(integer.replace(",", "") + (f".{fraction}" if fraction else "")) * scale
    return format(value.normalize(), "f")


def _number_word_value(phrase: str) -> int | None:
    """Value of an English number phrase ("fifteen hundred", "a thousand", "twenty-five"); None if none."""
    words = [word for word in regex.split(r"[\s-]+", phrase.lower()) if word and word != "and"]
    total, current, seen = 0, 0, False
    for word in words:
        if word in ("a", "an"):
            current = max(current, 1)
        elif word in _UNITS:
            current += _UNITS[word]
            seen = True
        elif word in _SCALES:
            scale = _SCALES[word]
            if scale == 100:
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * scale
                current = 0
            seen = True
    return total + current if seen else None


def _unit_after(text: str, end: int, stated: str, unit: str) -> str:
    """What a number counts: money and percentages by their sign, durations by the word after them ("14 days",
    "3-5 working days", "a 14-day period"); "" when nothing says."""
    if stated[:1] in "£$€" or unit == "p" or text[end : end + 7].lower().startswith((" pounds", " pence")):
        return "money"
    if unit == "%" or unit.startswith("per"):
        return "percent"
    following = _DURATION_AFTER.match(text, end)
    return following.group("unit").lower() if following else ""


def figures(text: str, *, bare_one: bool = True) -> list[Figure]:
    """Every figure in ``text``, normalised: phones by their last 9 digits, times as 24-hour HH:MM, other
    numbers as plain decimals (currency and % dropped, thousands separators and k/m/million expanded,
    pence converted to pounds). ``bare_one=False`` ignores a lone "one", which is mostly a pronoun
    ("no one", "one of our advisers") in an answer, while "one month" in a context still counts."""
    return list(_figures(text, bare_one))


@lru_cache(maxsize=65536)
def _figures(text: str, bare_one: bool) -> tuple[Figure, ...]:
    """``figures``, once per distinct text: a retrieved chunk is read again for every case it comes back in
    (at 1,000 cases the same chunks were parsed ~45 times each)."""
    text = clean(text)
    found: list[Figure] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= start or span[0] >= end for start, end in taken)

    for match in _PHONE.finditer(text):
        digits = regex.sub(r"\D", "", match.group())
        if len(digits) >= 9:
            found.append(Figure(match.group(), f"tel:{digits[-9:]}", "tel"))
            taken.append(match.span())
    for match in _TIME_RANGE.finditer(text):
        later = _TIME.match(text, match.end())
        if later is None or not later.group(1):
            continue
        hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
        if int(match.group(1)) % 12 > int(later.group(1)) % 12:  # "11 to 2 pm": the first is before noon
            hour -= 12 if hour >= 12 else 0
        found.append(Figure(match.group(1), f"time:{hour:02d}:{int(match.group(2) or 0):02d}", "time"))
        taken.append((match.start(1), match.end(2) if match.group(2) else match.end(1)))
    for match in _TIME.finditer(text):
        if not free(match.span()):
            continue
        if match.group(6):
            hour, minute = (0 if match.group(6).lower() == "midnight" else 12), 0
        elif match.group(1):
            hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
            minute = int(match.group(2) or 0)
        else:
            hour, minute = int(match.group(4)), int(match.group(5))
        found.append(Figure(match.group().strip(), f"time:{hour:02d}:{minute:02d}", "time"))
        taken.append(match.span())
    for match in _FIGURE.finditer(text):
        if not free(match.span()):
            continue
        unit = (match.group("unit") or "").lower()
        scale = Decimal("0.01") if match.group("pence") else Decimal(_MULTIPLIERS.get(unit, 1))
        stated = match.group().strip()
        kind = _unit_after(text, match.end(), stated, "p" if match.group("pence") else unit)
        found.append(Figure(stated, _decimal_key(match.group("int"), match.group("frac"), scale), kind))
        taken.append(match.span())
    for match in _NUMBER_WORD.finditer(text):
        phrase = match.group().strip(" -")
        value = _number_word_value(phrase)
        if value is None or not free(match.span()):
            continue
        if not bare_one and phrase.lower() in ("one", "a", "an"):
            continue
        if phrase.lower() in _SCALES:
            continue  # "several thousand", "a few hundred": an order of magnitude, not a figure to check
        found.append(Figure(phrase, str(value), _unit_after(text, match.end(), phrase, "")))
    return tuple(found)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light English stem so "transfers"/"transferred"/"transfer" and "slice"/"slicing" meet; names keep their
    case-folded form."""
    word = word.lower().replace("’", "'").removesuffix("'s")
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


def words(text: str) -> list[str]:
    return list(_words(text))


@lru_cache(maxsize=16384)  # word tuples of long chunks: bounded lower than the figures
def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(clean(text)))


def content_words(text: str) -> list[str]:
    """Words that carry a claim: not stop words, not number words (figures are checked on their own)."""
    return list(_content_words(text))


@lru_cache(maxsize=16384)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(
        word.lower()
        for word in _words(text)
        if len(word) > 1
        and word.lower() not in STOPWORDS
        and word.lower() not in _UNITS
        and word.lower() not in _SCALES
    )


def names(sentence: str) -> list[str]:
    """Capitalised words and acronyms that name something (product, place, organisation, month, day).

    The first word of a sentence or clause (after a colon, semicolon, bracket, quote or dash) is capitalised
    anyway, so it counts only as an acronym or as the start of a multi-word name ("Meridian Shield ..."); "I"
    and the sentence adverbs and time markers of ``NOT_NAMES`` ("Overall", "Meanwhile", "PM") are never names."""
    sentence = clean(sentence)
    found = []
    for match in _NAME.finditer(sentence):
        word = match.group()
        if word.lower() in NOT_NAMES:
            continue
        before = sentence[: match.start()].rstrip(" *_")
        if (not before or before[-1] in _CLAUSE_OPENERS) and not word.isupper():
            following = _WORD.search(sentence, match.end())
            if following is None or not following.group()[0].isupper():
                continue
        if word.lower() in STOPWORDS and not word.isupper():
            continue
        found.append(word)
    return found


@dataclass(frozen=True)
class ClaimCheck:
    """How much of one answer sentence the evidence states.

    ``lexical`` is the share of its claim units (content words and figures) found in the context, None when
    the sentence has none ("Yes.", "Not all of them."): such a sentence asserts nothing checkable."""

    lexical: float | None
    unsupported_figures: tuple[str, ...]
    unsupported_names: tuple[str, ...]
    missing_words: tuple[str, ...] = ()
    units: int = 0


_PLAIN_NUMBER = regex.compile(r"\d+(?:\.\d+)?")
"""A figure key that is a plain number (not a time, a date or a range)."""


class Evidence:
    """What a case's retrieved context states, ready for lookups.

    Figures and names the question itself states count as supported: they are the user's framing ("on
    £20,000 ..."), not something the model made up. Content words must come from the context alone."""

    def __init__(self, context_texts: Iterable[str], question: str = "", *, fuzzy_cutoff: float = 88.0) -> None:
        context_texts = list(context_texts)
        self.figures = [figure for text in [*context_texts, question] for figure in figures(text)]
        self._values_by_unit: dict[str, frozenset[Decimal]] = {}
        vocabulary = {word.lower() for text in context_texts for word in words(text)}
        self.vocabulary = sorted(vocabulary)
        self.stems = {_stem(word) for word in vocabulary} | {
            _stem(word) for text in context_texts for word in alias_words(text)
        }
        self.content_vocabulary = sorted({word for text in context_texts for word in content_words(text)})
        self.framing_stems = {_stem(word) for word in words(question)}
        self.fuzzy_cutoff = fuzzy_cutoff

    def has_word(self, word: str) -> bool:
        """Exact stem match, else a close spelling (rapidfuzz ratio) for inflections the stemmer misses."""
        if _stem(word) in self.stems:
            return True
        if len(word) < 5 or not self.vocabulary:
            return False
        from rapidfuzz import fuzz, process

        match = process.extractOne(word.lower(), self.vocabulary, scorer=fuzz.ratio, score_cutoff=self.fuzzy_cutoff)
        return match is not None

    def states(self, figure: Figure) -> bool:
        """The context or question states this value in a unit that does not disagree."""
        return any(figure.matches(known) for known in self.figures)

    def derives(self, figure: Figure) -> bool:
        """Not stated, but the sum or difference of two different stated figures of its unit (a rate less a
        discount, a year plus a period): a worked answer's result, weaker evidence than a figure stated outright.
        Looked up against each stated value (linear in the context's figures: all the pairs of a long context's
        figures run to millions)."""
        if self.states(figure) or not _PLAIN_NUMBER.fullmatch(figure.key):
            return False
        target, known = Decimal(figure.key), self._values(figure.unit)
        return any(
            (target - value in known and target - value != value) or (target and value + target in known)
            for value in known
        )

    def _values(self, unit: str) -> frozenset[Decimal]:
        """The distinct plain numbers stated in ``unit`` or with no unit."""
        if unit not in self._values_by_unit:
            self._values_by_unit[unit] = frozenset(
                Decimal(known.key)
                for known in self.figures
                if _PLAIN_NUMBER.fullmatch(known.key) and (not unit or not known.unit or known.unit == unit)
            )
        return self._values_by_unit[unit]

    def check(self, sentence: str) -> ClaimCheck:
        stated = figures(sentence, bare_one=False)
        missing_figures = tuple(
            figure.text for figure in stated if not self.states(figure) and not self.derives(figure)
        )
        missing_names = tuple(
            name for name in names(sentence) if _stem(name) not in self.framing_stems and not self.has_word(name)
        )
        tokens = content_words(sentence)
        units = len(tokens) + len(stated)
        if not units:
            return ClaimCheck(None, missing_figures, missing_names)
        missing_words = tuple(token for token in tokens if not self.has_word(token))
        found = len(tokens) - len(missing_words) + len(stated) - len(missing_figures)
        return ClaimCheck(found / units, missing_figures, missing_names, missing_words, units)
