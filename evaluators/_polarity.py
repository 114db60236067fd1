"""Negation cues: does an answer sentence affirm what its closest context passage denies, or the reverse?

Embeddings and word overlap both miss a flipped polarity: "neutering is covered" shares every content word
with "we do not cover ... neutering". This is a cue, not a parser: a passage is negative when it holds a
negation word, and a list item ("(b) damage caused by pets;") takes the polarity of the lead-in that
introduces its list ("We will not pay for:"). An answer's opening "Yes"/"No" answers the question and is
left out; the rest of the sentence carries the claim.
"""

import regex

_NEGATION = regex.compile(
    r"\b(?:not|no|never|cannot|without|neither|nor|except|unavailable|ineligible|exclud\w*|exclusions?|"
    r"refus\w*|prohibit\w*|declin\w*)\b|\w+n['’]t\b",
    regex.I,
)
_ANSWER_PARTICLE = regex.compile(r"^\s*(?:yes|no|nope|yep)\b[\s,.!:;-]*", regex.I)
_LIST_ITEM = regex.compile(r"^\s*(?:\(\w{1,3}\)|\w{1,3}\)|[-*•])\s")


def negative(text: str) -> bool:
    return _NEGATION.search(text) is not None


def claim_is_negative(sentence: str) -> bool:
    """The polarity of an answer sentence's claim, its leading yes/no left out."""
    return negative(_ANSWER_PARTICLE.sub("", sentence, count=1))


def passage_is_negative(sentence: str, chunk: str) -> bool:
    """The polarity of a context sentence; a list item adds the lead-in of its chunk's list."""
    if _LIST_ITEM.match(sentence):
        first_item = _LIST_ITEM.search(chunk) or regex.search(r"\(\w{1,3}\)\s", chunk)
        lead_in = chunk[: first_item.start()] if first_item else ""
        return negative(sentence) or negative(lead_in.rsplit(".", 1)[-1] if "." in lead_in else lead_in)
    return negative(sentence)


def polarity_flipped(sentence: str, closest: str, chunk: str) -> bool:
    """The answer sentence and its closest context passage disagree on polarity."""
    return claim_is_negative(sentence) != passage_is_negative(closest, chunk)
