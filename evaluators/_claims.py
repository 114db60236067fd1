"""An answer as the claims it makes: what groundedness checks, and what it leaves out and why.

Real LLM answers wrap their claims in framing ("Based on the provided passages, here is my answer:"),
courtesy ("I hope this helps!"), questions back to the user, statements about what the context lacks ("The
passages do not mention a fee") and citation markers ("[2]", "(Passage 1, step 8)"). None of that is a fact
the context could state, yet read as sentences it set the score of the whole answer: a framing sentence
shares no words with any passage, and a citation's numbers read as figures the context does not state.

``split_claims`` cuts the answer into sentences, each Markdown line and each ``;``-separated part standing
alone, strips citation markers and framing prefixes ("According to the documents, ..."), and leaves out whole
sentences that assert nothing about the world. Every piece it removes is listed with its reason, so a report
shows what was not checked; an answer that is nothing but framing has no claim, and the evaluator says so
instead of scoring it.
"""

from dataclasses import dataclass
from functools import lru_cache

import regex
from assay.evaluators._grounding import clean

from assay.embeddings import split_sentences

_SOURCE = (
    r"(?:passages?|documents?|docs?|context|contexts|information|sources?|texts?|search results?|results?"
    r"|data|records?|excerpts?|articles?|materials?|references?|snippets?|knowledge base|tool outputs?)"
)
_GIVEN = (
    r"(?:(?:the|these|this|those|your|my)\s+)?"
    r"(?:(?:provided|given|above|available|retrieved|following|supplied|attached|relevant|cited)\s+)*"
)

CITATION = regex.compile(
    r"\s*(?:\[(?:\s*(?:\d+|[A-Za-z]{1,12}\s*#?\s*\d+)\s*(?:[,;–-]\s*)?)+\]|【[^】]{0,40}】|\^\d+"
    rf"|\((?:(?:see|cf\.?|from|source:?)\s+)?{_GIVEN}(?:{_SOURCE}|step|chunk|paragraph|section|page|p\.)"
    r"\s*#?\s*\d+[^()]{0,40}\))",
    regex.I,
)
"""Citation markers: [1], [2, 3], [doc1], 【3†source】, ^4, (Passage 1, step 8), (see document 2)."""

_FRAMING_PREFIX = regex.compile(
    rf"^(?:(?:(?:based|drawing)\s+(?:solely\s+|only\s+|entirely\s+)?(?:on|upon)\s+{_GIVEN}{_SOURCE}"
    rf"|(?:according\s+to|as\s+(?:stated|mentioned|described|noted|shown)\s+in|from|in|per)\s+{_GIVEN}{_SOURCE}"
    r"|in\s+summary|in\s+conclusion|to\s+summari[sz]e|to\s+sum\s+up|in\s+short|overall|in\s+general|generally"
    r"|additionally|also|moreover|furthermore|however|meanwhile|therefore|thus|so|finally|firstly|secondly|lastly"
    r"|in\s+addition|importantly|notably|specifically|for\s+example|for\s+instance|that\s+said|yes|no|sure"
    r"|certainly|of\s+course|absolutely|great\s+question)(?:\s+(?:provided|given|above))?\s*[,:]\s*"
    r"|(?:here\s+(?:is|are)\s+[^:.!?]{0,60}|(?:the\s+)?(?:short\s+|final\s+)?answer(?:\s+is)?|summary)\s*:\s*"
    r"|(?:(?:please\s+)?note\s+that|it\s+is\s+(?:worth\s+noting|important\s+to\s+note)\s+that"
    r"|i\s+(?:think|believe)(?:\s+that)?|it\s+(?:seems|appears)\s+that)\s+)",
    regex.I,
)
"""Words before the claim that say where it comes from or how it connects, not what is true."""

_LEAD_IN = regex.compile(r":\s*$")
_COURTESY = regex.compile(
    r"^(?:i\s+hope\s+(?:this|that|it)\b|hope\s+(?:this|that)\s+helps|let\s+me\s+know\b|feel\s+free\b"
    r"|(?:please\s+)?(?:do\s+not|don't)\s+hesitate\b|if\s+you\s+have\s+(?:any\s+)?(?:other|more|further|additional)?"
    r"\s*questions|(?:i\s+am|i'm)\s+(?:happy|glad)\s+to\s+help|happy\s+to\s+help|thank\s+you\b|thanks\b"
    r"|you're\s+welcome|good\s+luck|enjoy\b|have\s+a\s+(?:great|good|nice)\b|(?:hi|hello|hey|dear)\b"
    r"|(?:sure|certainly|absolutely|of\s+course|great\s+question|good\s+question)[!.,]*$"
    r"|here\s+(?:is|are)\s+(?:a|an|the|my|some)\b[^.]*?(?:answer|summary|overview|information|details|response)"
    r"[^.]*$)",
    regex.I,
)
_FEELING = regex.compile(
    r"^(?:i\s+(?:really\s+|also\s+|just\s+)?(?:love|like|enjoy|hate|prefer|wish|agree|disagree|hope|feel|miss|want)"
    r"|i(?:'m|\s+am)\s+(?:a\s+(?:big\s+)?fan|not\s+sure|glad|happy|sorry|excited|curious)"
    r"|me\s+too|(?:that|it)(?:'s|\s+is|\s+was|\s+sounds|\s+seems)\s+(?:so\s+|very\s+|really\s+|pretty\s+)?"
    r"(?:great|cool|awesome|interesting|amazing|fun|funny|sad|crazy|nice|good|neat|wild|true)\b[^,;]{0,12}$"
    r"|(?:wow|cool|nice|awesome|great|interesting|haha|lol|oh|ok|okay|yeah)\b[\s!.]*$)",
    regex.I,
)
"""The assistant's own feelings and reactions ("I love that film!", "That's interesting."): not facts about the
world a context could state. Only short ones: "I like the film because Tom Hanks plays in it" carries a claim."""
FEELING_WORDS = 8
_LACKS = regex.compile(
    rf"(?:{_GIVEN}{_SOURCE}\s+(?:does|do|did)\s*(?:not|n't)\s+"
    r"(?:mention|contain|provide|specify|state|include|say|give|offer|discuss|address|cover|indicate|list)"
    r"|\bthere\s+is\s+no\s+(?:information|mention|data|detail|indication)\b"
    r"|\bi\s+(?:could\s+not|couldn't|cannot|can't|was\s+unable\s+to)\s+find\b"
    r"|\bi\s+(?:do\s+not|don't)\s+have\s+(?:enough\s+|any\s+)?(?:information|details|data)\b"
    r"|\b(?:is|are)\s+not\s+(?:mentioned|specified|stated|provided|given|included|listed)\s+in\s+"
    rf"{_GIVEN}{_SOURCE}"
    r"|\bnot\s+enough\s+information\b)",
    regex.I,
)
_ASKS_ABOUT_A_CLAIM = regex.compile(
    r"^(?:(?:did|do)\s+you\s+know(?:\s+that)?|(?:have|had)\s+you\s+(?:heard|read|seen)\s+(?:that|of)"
    r"|are\s+you\s+aware\s+(?:that|of))\s+(?!(?:what|who|whom|whose|where|when|why|how|which|if|whether)\b)"
    r"(.+?)\s*\?$",
    regex.I,
)
"""A question that states a claim ("Did you know that X?"): X is checked."""
_TAG_QUESTION = regex.compile(
    r"^(.+?\w.*?)\s*[,;-]\s*(?:do|did|have|are|is|would|could|can|don't|isn't|aren't|right|or)\b[^,]*\?$", regex.I
)
"""A claim with a question tagged on ("Goldendoodles are designer dogs, do you like them?"): the claim is checked."""
_LINES = regex.compile(r"\n+|\s;\s|;\s+|(?<=\s[.!?])\s+(?=\w)|(?<=[!?])\s+(?=\p{Ll})")
"""Where a claim ends whatever the sentence splitter says: line breaks, semicolons, a tokenised full stop (" . ")
and a lower-case start after "!" or "?", which the splitter does not read as boundaries."""


@dataclass(frozen=True)
class LeftOut:
    """A piece of the answer that is not a claim about the world, and why."""

    text: str
    reason: str


@dataclass(frozen=True)
class ClaimSplit:
    claims: tuple[str, ...]
    left_out: tuple[LeftOut, ...]


def _is_text(piece: str) -> bool:
    return any(character.isalnum() for character in piece)


@lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences without Markdown layout or bare punctuation, each line and ``;`` part apart: a list item or
    a table row is a claim of its own."""
    found = []
    for line in _LINES.split(text):
        found += [clean(part).strip() for part in split_sentences(line)]
    return tuple(sentence for sentence in found if _is_text(sentence))


def _without_prefixes(sentence: str, left_out: list[LeftOut]) -> str:
    while (match := _FRAMING_PREFIX.match(sentence)) and match.end() < len(sentence):
        left_out.append(LeftOut(match.group().strip(" ,:"), "framing"))
        rest = sentence[match.end() :].lstrip(" ,:")
        sentence = rest[:1].upper() + rest[1:]
    return sentence


def _claim_in_question(sentence: str, left_out: list[LeftOut]) -> str:
    """The claim a question states or carries before its question tag; the question itself is left out."""
    for pattern in (_ASKS_ABOUT_A_CLAIM, _TAG_QUESTION):
        if (match := pattern.match(sentence)) and any(character.isalnum() for character in match.group(1)):
            asked = sentence[: match.start(1)] + sentence[match.end(1) :]
            left_out.append(LeftOut(asked.strip(" ,;-"), "a question to the user"))
            claim = match.group(1).rstrip(" ,;-")
            return claim[:1].upper() + claim[1:] + "."
    return sentence


def _reason_to_leave_out(sentence: str) -> str | None:
    stripped = sentence.strip(" *_\"'“”")
    if stripped.endswith("?"):
        return "a question to the user"
    if _LEAD_IN.search(stripped):
        return "a lead-in to what follows"
    if _COURTESY.match(stripped):
        return "courtesy"
    if _FEELING.match(stripped) and len(stripped.split()) <= FEELING_WORDS:
        return "a feeling or reaction, not a fact"
    if _LACKS.search(stripped):
        return "says what the context lacks"
    return None


@lru_cache(maxsize=8192)
def split_claims(answer: str) -> ClaimSplit:
    """The answer's checkable claims in answer order, and every piece left out with its reason."""
    claims: list[str] = []
    left_out: list[LeftOut] = []
    for sentence in sentences(answer):
        markers = [match.group().strip() for match in CITATION.finditer(sentence)]
        left_out += [LeftOut(marker, "citation marker") for marker in markers]
        sentence = _claim_in_question(CITATION.sub("", sentence).strip(), left_out)
        reason = _reason_to_leave_out(sentence)
        if reason is None:
            sentence = _without_prefixes(sentence, left_out)
            reason = _reason_to_leave_out(sentence)
        if reason is not None:
            left_out.append(LeftOut(sentence, reason))
        elif _is_text(sentence):
            claims.append(sentence)
    return ClaimSplit(tuple(claims), tuple(left_out))
