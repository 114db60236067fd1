"""Small grammar helpers that turn corpus sentences (written by the organisation to its customers: "we",
"you") into questions a customer would ask ("I", "my", the organisation by name), and back into answers.

Rule-based on purpose: generators stay offline and deterministic. Each helper handles the common shapes
and the generators skip sentences that do not fit, rather than emit a broken question.
"""

import regex

MODALS = {"will", "can", "may", "might", "must", "should", "could", "would", "shall"}
NEGATED_MODALS = {"won't": "will", "can't": "can", "cannot": "can", "wouldn't": "would", "shouldn't": "should"}
AGREEMENT = {
    "are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't", "aren't": "isn't",
    "haven't": "hasn't", "weren't": "wasn't",
}  # fmt: skip
ADVERBS = {"also", "never", "usually", "normally", "only", "always", "often", "then", "still", "generally"}
SUBJECT_BEFORE = {
    "", "if", "when", "and", "or", "so", "that", "because", "unless", "before", "after", "until", "as", "once",
    "while", "where", "but", "whether", "which", "than", "what", "how", "why", "who", ",", ";", ":", "(",
}  # fmt: skip
# Words that follow an object "you" ("tell you whether", "refund you the fee"); another word after "you"
# is taken as its verb ("the details you give").
OBJECT_FOLLOWERS = {
    "", "to", "the", "a", "an", "about", "for", "with", "in", "on", "at", "from", "of", "by", "as", "and", "or",
    "that", "whether", "how", "what", "why", "if", "when", "know", "back", "up", "first", "again", "straight",
    "approx", "any", "your", "our", "this", "these", "it", "more", "through", "into", "before", "after", "until",
    "within", "immediately", "directly", "free", "so", "but", "than", "too", "also", "once", "where", "which",
    "better", "best", "well", "electronically", "automatically", "promptly", "now", "later", "soon",
}  # fmt: skip
AUXILIARIES = MODALS | set(NEGATED_MODALS) | {"are", "have", "do", "don't", "did", "were", "aren't", "haven't"}
_YOU_FORMS = {
    "you're": "I'm", "you've": "I've", "you'll": "I'll", "you'd": "I'd", "your": "my", "yours": "mine",
    "yourself": "myself", "yourselves": "ourselves",
}  # fmt: skip
_EDGE = regex.compile(r"^([^\p{L}\p{N}£$€]*)(.*?)([^\p{L}\p{N}%]*)$")


def _split(word: str) -> tuple[str, str, str]:
    """('(', 'you', ',') for '(you,': punctuation stays where it was, only the core word is rewritten."""
    match = _EDGE.match(word)
    return (match.group(1), match.group(2), match.group(3)) if match else ("", word, "")


def third_person(verb: str) -> str:
    """'charge' -> 'charges', 'apply' -> 'applies': agreement after the organisation replaces 'we'."""
    if verb in AGREEMENT:
        return AGREEMENT[verb]
    if verb in MODALS or verb in NEGATED_MODALS or not verb.isalpha():
        return verb
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def user_voice(text: str, organisation: str) -> str:
    """Rewrite the organisation's voice as a customer's: 'we'll refund you' -> 'Acme will refund me'."""
    words = text.replace("’", "'").split()
    out: list[str] = []
    agree_next = False
    for index, word in enumerate(words):
        before, core, after = _split(word)
        lower = core.lower()
        previous = _previous(words, index, before)
        following = _split(words[index + 1])[1].lower() if index + 1 < len(words) and not after else ""
        if agree_next:
            agree_next = lower in ADVERBS
            out.append(word if agree_next else before + third_person(lower) + after)
            continue
        if lower == "we":
            core, agree_next = organisation, not after
        elif lower in {"we'll", "we're", "we've", "we'd"}:
            core = f"{organisation} {dict(ll='will', re='is', ve='has', d='would')[lower[3:]]}"
        elif lower == "us":
            core = organisation
        elif lower in {"our", "ours"}:
            core = "its" if any(organisation in word for word in out) else f"{organisation}'s"
        elif lower == "you":
            verb_next = following not in OBJECT_FOLLOWERS and not following.endswith("ly")
            subject = previous in SUBJECT_BEFORE or following in AUXILIARIES or verb_next
            core = "I" if subject else "me"
            if subject and following in {"are", "were"} and index + 1 < len(words):
                words[index + 1] = words[index + 1].replace(following, "am" if following == "are" else "was", 1)
        elif lower in _YOU_FORMS:
            core = _YOU_FORMS[lower]
        out.append(before + core + after)
    return " ".join(out)


def _previous(words: list[str], index: int, before: str) -> str:
    """What precedes word ``index``: '' at the start, a punctuation mark, or the previous word."""
    if index == 0:
        return ""
    if before:
        return before[-1]
    _, core, after = _split(words[index - 1])
    return after[-1] if after else core.lower()


def lower_first(text: str, keep: set[str] | frozenset[str] = frozenset()) -> str:
    """Lowercase the first word after a lead-in ('Yes, the fee ...') unless it is a name: an acronym,
    a word of a Title Case run ('Plus Current Account'), or a word in ``keep`` (the organisation)."""
    words = text.split(" ", 2)
    first = words[0]
    if first in _DETERMINERS:
        return first.lower() + text[len(first) :]
    if not first or first.rstrip(",.;:'s") in keep or sum(char.isupper() for char in first) > 1 or first == "I":
        return text
    if first.startswith("I'"):
        return text
    if len(words) > 1 and words[1][:1].isupper() and words[1] != "I" and not words[1].startswith("I'"):
        return text
    return first[0].lower() + text[len(first[0]) :]


_DETERMINERS = {"The", "A", "An", "Your", "Our", "Each", "Every", "This", "These", "Any", "All", "Some", "No"}


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def strip_end(text: str) -> str:
    return text.strip().rstrip(".;:,!? ").strip()


def as_question(text: str) -> str:
    """One clean question: a capital first letter, single spaces, one question mark."""
    return upper_first(regex.sub(r"\s+", " ", strip_end(text))) + "?"


def as_sentence(text: str) -> str:
    text = regex.sub(r"\s+", " ", text.strip()).rstrip(":;,").rstrip()
    return upper_first(text if text.endswith((".", "!", "?")) else text + ".")


def lead_in(lead: str, sentence: str, keep: set[str] | frozenset[str] = frozenset()) -> str:
    """'Yes' + 'The fee is £0.' -> 'Yes, the fee is £0.'"""
    return f"{lead}, {lower_first(as_sentence(sentence), keep)}"


def is_or_are(noun_phrase: str) -> str:
    """Plural by the head noun: 'payments' -> 'are', 'limit on payments' -> 'is'; 'address' stays singular."""
    head = regex.split(r" (?:on|of|for|in|to|at|by|with|from)\b", noun_phrase, maxsplit=1)[0]
    words = [word.lower().strip(",.") for word in head.split()]
    if not words:
        return "is"
    participle = any(word.endswith("ed") or word == "paid" for word in words[1:])
    plural = _plural(words[-1]) or (_plural(words[0]) and participle)
    return "are" if plural else "is"


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))
