"""Training pairs for Assay's entailment model: SNLI dev, the WiCE training claims, and pairs made here.

SNLI alone teaches crowd-worker cues (a "not" in the hypothesis means contradiction) and never shows the
failures Assay must catch in RAG answers: a swapped role, a changed figure, a dropped negation, a claim that
adds a detail. So the generator below rewrites premises (SNLI premises, WiCE claims and evidence sentences)
into non-entailed hypotheses by one small perturbation, and into entailed ones by faithful rewrites (a number
in words, a unit spelled out, a clause moved, a simple passive). Every choice draws from one seeded
``random.Random``, so the same seed gives the same pairs.

WiCE rows are split by claim: ``is_heldout_claim`` (a seeded hash) keeps about 20% of claims out of training,
with all their rows, for reporting.
"""

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from assay.evaluators._claim_entailment import premise_for

LABELS = ("entailment", "neutral", "contradiction")
SPLIT_SALT = "assay-entailment-v1"
HELDOUT_PERCENT = 20

_PEOPLE = (
    "man", "woman", "boy", "girl", "child", "dog", "cat", "person", "men", "women", "boys", "girls", "player",
    "worker", "lady", "guy", "kid", "baby", "horse", "crowd", "team", "police", "officer", "teacher", "student",
)  # fmt: skip
_ANTONYMS = {
    "young": "old", "old": "young", "large": "small", "small": "large", "big": "little", "little": "big",
    "inside": "outside", "outside": "inside", "sitting": "standing", "standing": "sitting", "day": "night",
    "night": "day", "up": "down", "down": "up", "wet": "dry", "dry": "wet", "empty": "full", "full": "empty",
    "black": "white", "white": "black", "before": "after", "after": "before", "won": "lost", "lost": "won",
    "increased": "decreased", "decreased": "increased", "first": "last", "last": "first", "open": "closed",
    "early": "late", "late": "early", "north": "south", "south": "north", "east": "west", "west": "east",
    "male": "female", "female": "male", "higher": "lower", "lower": "higher", "more": "fewer", "fewer": "more",
}  # fmt: skip
_ADDED_DETAILS = (
    "for the first time", "because of a dispute", "after a long delay", "with his brother", "in France",
    "to win a prize", "on a rainy day", "for charity", "in 2015", "despite strong criticism",
)  # fmt: skip
_ADDED_ADJECTIVES = ("tall", "famous", "angry", "wealthy", "Italian", "tired", "elderly", "professional")
_DROPPABLE_ADJECTIVES = (
    "blue", "red", "green", "black", "white", "yellow", "young", "old", "small", "large", "big", "little",
    "tall", "brown", "orange", "pink", "purple", "gray", "grey", "older", "several",
)  # fmt: skip
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)  # fmt: skip
_UNITS = {
    "°F": " degrees Fahrenheit", "°C": " degrees Celsius", "%": " percent", "km": " kilometres", "kg": " kilograms",
    "mi": " miles", "m": " metres", "cm": " centimetres", "lb": " pounds", "ft": " feet",
}  # fmt: skip
_PARTICIPLES = {
    "holding": "held", "riding": "ridden", "playing": "played", "throwing": "thrown", "eating": "eaten",
    "watching": "watched", "pushing": "pushed", "pulling": "pulled", "carrying": "carried", "kicking": "kicked",
    "catching": "caught", "wearing": "worn", "reading": "read", "drinking": "drunk", "climbing": "climbed",
    "cutting": "cut", "painting": "painted", "driving": "driven", "using": "used", "hugging": "hugged",
    "chasing": "chased", "feeding": "fed", "cleaning": "cleaned", "selling": "sold", "building": "built",
}  # fmt: skip
_AUXILIARY = re.compile(r"\b(is|are|was|were|has|have|had|can|will|would|could|should)\b(?! not)")
_NEGATED = re.compile(r"\b(is|are|was|were|has|have|had|can|will|would|could|should|does|did|do) not\b|n't\b")
_NUMBER = re.compile(r"(?<![\w.,$£€-])(\d{1,4})(?![\w.,-]\d)")
_UNIT = re.compile(r"(\d)\s?(°F|°C|%|km|kg|mi|m|cm|lb|ft)\b|(\d)(°F|°C|%)")
_NAME = re.compile(r"(?<!^)(?<![.!?] )\b([A-Z][a-z]+(?: [A-Z][a-z]+)*)")
_FRONTED = re.compile(r"^(In|On|At|During|After|Before|By|Since) ([^,]{3,40}), (.+?)([.!?]?)$")
_ACTIVE = re.compile(r"^(An?|The|Two|Three|Some) (\w+) (is|are) (\w+ing) (an?|the|two|three|some) (\w+)(.*)$")


@dataclass(frozen=True)
class Pair:
    """One training or evaluation pair; ``source`` says where it came from (for counts in the data card)."""

    premise: str
    hypothesis: str
    label: str
    source: str


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def snli_pairs(path: Path) -> list[Pair]:
    return [Pair(row["premise"], row["hypothesis"], row["label"], "snli") for row in read_jsonl(path)]


def is_heldout_claim(claim_id: str) -> bool:
    """About 20% of WiCE claims, chosen by a salted hash so the split never depends on file order."""
    digest = hashlib.sha256(f"{SPLIT_SALT}:{claim_id}".encode()).hexdigest()
    return int(digest[:8], 16) % 100 < HELDOUT_PERCENT


def wice_pairs(rows: list[dict], split: Callable[[str], list[str]]) -> list[Pair]:
    """WiCE training rows as pairs: supported claims entail their evidence; partly or not supported ones are
    neutral (the evidence does not settle them)."""
    return [
        Pair(
            premise_for(row["answer"], split(row["context"])),
            row["answer"],
            "entailment" if row["label"] == 1 else "neutral",
            "wice",
        )
        for row in rows
    ]


def _negate(text: str, rng: random.Random) -> str | None:
    """Insert a negation after the first auxiliary, or remove one that is there."""
    if _NEGATED.search(text):
        return _NEGATED.sub(lambda match: match.group(1) or "", text, count=1).replace("  ", " ")
    match = _AUXILIARY.search(text)
    if match is None:
        return None
    return f"{text[: match.end()]} not{text[match.end() :]}"


def _swap_roles(text: str, rng: random.Random) -> str | None:
    """Swap two people (or two names) so that "A beat B" becomes "B beat A"."""
    people = [m for m in re.finditer(r"\b(\w+)\b", text) if m.group(1).lower() in _PEOPLE]
    candidates = people if len({m.group(1).lower() for m in people}) > 1 else list(_NAME.finditer(text))
    distinct = {m.group(1): m for m in candidates}
    if len(distinct) < 2:
        return None
    first, second = sorted(rng.sample(list(distinct.values()), 2), key=lambda m: m.start())
    return (
        text[: first.start()] + second.group(1) + text[first.end() : second.start()] + first.group(1)
        + text[second.end() :]
    )  # fmt: skip


def _change_figure(text: str, rng: random.Random) -> str | None:
    """Change one number (digits or a number word) to another."""
    digits = list(_NUMBER.finditer(text))
    words = [m for m in re.finditer(r"\b(\w+)\b", text) if m.group(1).lower() in _NUMBER_WORDS[2:13]]
    if digits and (not words or rng.random() < 0.7):
        match = rng.choice(digits)
        value = int(match.group(1))
        changed = value + rng.choice([-3, -2, -1, 1, 2, 5, 10]) if value > 1900 else value * rng.choice([2, 3]) + 1
        return f"{text[: match.start()]}{changed}{text[match.end() :]}"
    if not words:
        return None
    match = rng.choice(words)
    value = _NUMBER_WORDS.index(match.group(1).lower())
    other = rng.choice([word for word in _NUMBER_WORDS[2:13] if word != _NUMBER_WORDS[value]])
    if match.group(1)[0].isupper():
        other = other.capitalize()
    return f"{text[: match.start()]}{other}{text[match.end() :]}"


def _antonym(text: str, rng: random.Random) -> str | None:
    found = [m for m in re.finditer(r"\b(\w+)\b", text) if m.group(1) in _ANTONYMS]
    if not found:
        return None
    match = rng.choice(found)
    return f"{text[: match.start()]}{_ANTONYMS[match.group(1)]}{text[match.end() :]}"


def _add_detail(text: str, rng: random.Random) -> str | None:
    """A claim that says more than the premise: a detail appended or an adjective on a person (neutral)."""
    people = [m for m in re.finditer(r"\b(a|an|the) (\w+)\b", text) if m.group(2).lower() in _PEOPLE]
    if people and rng.random() < 0.5:
        match = rng.choice(people)
        adjective = rng.choice(_ADDED_ADJECTIVES)
        article = "an" if adjective[0] in "aeiouAEIOU" and match.group(1) != "the" else match.group(1)
        return f"{text[: match.start()]}{article} {adjective} {match.group(2)}{text[match.end() :]}"
    stem = text.rstrip(" .!?")
    return f"{stem} {rng.choice(_ADDED_DETAILS)}{text[len(stem) :] or '.'}"


def _strengthen(text: str, rng: random.Random) -> str | None:
    """Drop a hedge so the claim says more than the premise (neutral): "some" to "all", "may" to "will"."""
    for hedge, strong in (("some", "all"), ("may", "will"), ("might", "will"), ("about", "exactly")):
        pattern = re.compile(rf"\b{hedge}\b", re.IGNORECASE)
        if pattern.search(text):
            return pattern.sub(strong, text, count=1)
    return None


def _spell_number(text: str, rng: random.Random) -> str | None:
    """A small number in words, or a unit spelled out ("350°F" -> "350 degrees Fahrenheit")."""
    unit = _UNIT.search(text)
    if unit is not None:
        digit = unit.group(1) or unit.group(3)
        symbol = unit.group(2) or unit.group(4)
        return f"{text[: unit.start()]}{digit}{_UNITS[symbol]}{text[unit.end() :]}"
    small = [m for m in _NUMBER.finditer(text) if int(m.group(1)) <= 20]
    if not small:
        return None
    match = rng.choice(small)
    return f"{text[: match.start()]}{_NUMBER_WORDS[int(match.group(1))]}{text[match.end() :]}"


def _move_clause(text: str, rng: random.Random) -> str | None:
    """Move a fronted phrase to the end ("In 1991, he joined X." -> "He joined X in 1991.") or swap the two
    sides of "while"."""
    fronted = _FRONTED.match(text.strip())
    if fronted:
        preposition, phrase, rest, stop = fronted.groups()
        return f"{rest[0].upper()}{rest[1:]} {preposition.lower()} {phrase}{stop or '.'}"
    if " while " in text:
        head, tail = text.rstrip(" .").split(" while ", 1)
        return f"While {tail}, {head[0].lower()}{head[1:]}."
    return None


def _generalise(text: str, rng: random.Random) -> str | None:
    """Drop one colour/size adjective, or keep only the first clause before a comma: both still follow."""
    found = [m for m in re.finditer(r"\b(\w+) (?=\w)", text) if m.group(1).lower() in _DROPPABLE_ADJECTIVES]
    if found:
        match = rng.choice(found)
        return text[: match.start()] + text[match.end() :]
    head = text.split(", ")[0]
    if head != text and len(head.split()) >= 5:
        return head.rstrip(" .") + "."
    return None


def _passive(text: str, rng: random.Random) -> str | None:
    """ "A man is riding a bike ..." -> "A bike is being ridden by a man ..." for verbs with a known participle."""
    match = _ACTIVE.match(text.strip())
    if match is None or match.group(4) not in _PARTICIPLES:
        return None
    det1, noun1, _, verb, det2, noun2, rest = match.groups()
    plural = det2.lower() in ("two", "three", "some")
    return (
        f"{det2[0].upper()}{det2[1:]} {noun2} {'are' if plural else 'is'} being {_PARTICIPLES[verb]} by "
        f"{det1.lower()} {noun1}{rest}"
    )


NOT_ENTAILED: dict[str, tuple[str, Callable[[str, random.Random], str | None]]] = {
    "negation": ("contradiction", _negate),
    "role_swap": ("contradiction", _swap_roles),
    "figure": ("contradiction", _change_figure),
    "antonym": ("contradiction", _antonym),
    "added_detail": ("neutral", _add_detail),
    "strengthened": ("neutral", _strengthen),
}
ENTAILED: dict[str, Callable[[str, random.Random], str | None]] = {
    "spelled_number": _spell_number,
    "moved_clause": _move_clause,
    "generalised": _generalise,
    "passive": _passive,
}


def perturbed(premise: str, rng: random.Random, entailed: bool) -> tuple[str, str, str] | None:
    """(hypothesis, label, rule) for one applicable rule picked at random, or None when no rule applies."""
    rules = list(ENTAILED) if entailed else list(NOT_ENTAILED)
    rng.shuffle(rules)
    for rule in rules:
        label, change = ("entailment", ENTAILED[rule]) if entailed else NOT_ENTAILED[rule]
        hypothesis = change(premise, rng)
        if hypothesis and hypothesis.strip() != premise.strip():
            return hypothesis, label, rule
    return None


def generated_pairs(
    sentences: list[str], rng: random.Random, source: str, contexts: list[str] | None = None
) -> Iterator[Pair]:
    """One made pair per sentence, entailed 45% of the time; the premise is the sentence, or its context passage
    (so the model also learns to find the evidence inside a longer premise)."""
    for index, sentence in enumerate(sentences):
        made = perturbed(sentence, rng, entailed=rng.random() < 0.45)
        if made is None:
            continue
        hypothesis, label, rule = made
        premise = contexts[index] if contexts else sentence
        yield Pair(premise, hypothesis, label, f"{source}:{rule}")
