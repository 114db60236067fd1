"""Figures in corpus text (amounts, rates, durations, counts): finding them, comparing them, and altering
them into plausible wrong values for "no" answers and false premises."""

import random
from dataclasses import dataclass

import regex

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_UNIT = r"(?:days?|weeks?|months?|years?|hours?|minutes?)"
FIGURE = regex.compile(
    r"(?P<money>[£$€]\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion)\b)?|\b\d+p\b)"
    r"|(?P<percent>(?<![\d.])\d+(?:\.\d+)?%)"
    rf"|(?P<duration>\b(?:\d+(?:-\d+)?|{'|'.join(_NUMBER_WORDS)})(?:\s(?:working|calendar|business))?\s{_UNIT}\b)"
    r"|(?P<count>(?<![\d:.,£$€+])\b\d[\d,]*(?:\.\d+)?\b(?![:%]|\d|am|pm|-\d))",
    regex.IGNORECASE,
)
PHONE = regex.compile(r"\+?\d{2,5}(?:\s\d{2,4}){2,3}\b")
_NUMBER = regex.compile(r"\d[\d,]*(?:\.\d+)?")
_YEAR = regex.compile(r"^(?:19|20)\d\d$")


@dataclass(frozen=True)
class Figure:
    kind: str  # money | percent | duration | count
    text: str
    start: int
    end: int


def figures(text: str) -> list[Figure]:
    """Every figure in reading order; phone numbers, times of day and years are not figures."""
    phones = [match.span() for match in PHONE.finditer(text)]
    found = []
    for match in FIGURE.finditer(text):
        if any(start <= match.start() < end for start, end in phones):
            continue
        kind = match.lastgroup or "count"
        if kind == "count" and _YEAR.match(match.group(0)):
            continue
        found.append(Figure(kind, match.group(0), match.start(), match.end()))
    return found


def first_figure(text: str) -> Figure | None:
    found = figures(text)
    return found[0] if found else None


def amount(figure: str) -> float | None:
    """The single number a figure states ('£2,500' -> 2500.0); None for ranges such as '3-5 days'."""
    words = figure.lower().split()
    if words and words[0] in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[words[0]])
    numbers = _NUMBER.findall(figure)
    if len(numbers) != 1 or regex.search(r"\d-\d", figure):
        return None
    return float(numbers[0].replace(",", ""))


def unit(figure: Figure) -> str:
    """What the number counts, so only like is compared with like: '£', '%', 'days', ''."""
    if figure.kind == "money":
        return "p" if figure.text.endswith("p") else figure.text[0]
    if figure.kind == "percent":
        return "%"
    if figure.kind == "duration":
        last = figure.text.lower().split()[-1]
        return last if last.endswith("s") else last + "s"
    return ""


def alter(figure: str, rng: random.Random) -> str:
    """A plausible but wrong value of the same shape: '£2,500' -> '£5,000', '14 days' -> '21 days'.
    Every number in the figure moves by the same factor, so a range stays a range."""
    factor = rng.choice((2.0, 3.0, 1.5))
    words = figure.split()
    if words and words[0].lower() in _NUMBER_WORDS:
        value = _NUMBER_WORDS[words[0].lower()]
        rest = [*words[1:-1], words[-1] if words[-1].endswith("s") else words[-1] + "s"] if len(words) > 1 else []
        return " ".join([str(int(_changed(value, factor))), *rest])

    def replace(match: regex.Match) -> str:
        raw = match.group(0)
        value = float(raw.replace(",", ""))
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        new = _changed(value, factor)
        if decimals:
            return f"{new:,.{decimals}f}" if "," in raw else f"{new:.{decimals}f}"
        return f"{int(new):,}" if "," in raw or new >= 10_000 else str(int(new))

    return _NUMBER.sub(replace, figure)


def _changed(value: float, factor: float) -> float:
    if value == 0:
        return 5.0
    new = value * factor
    return round(new) if value == int(value) and new >= 1 else round(new, 2)
