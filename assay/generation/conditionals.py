"""Conditional rules in the corpus ("If you cancel within 14 days, we will refund ...") turned into the
question a customer in that situation asks ("If I cancel within 14 days, will Acme refund ...?"): the
answer needs the rule applied to the case, which is what an inference question tests."""

from dataclasses import dataclass

import regex

from assay.generation.phrasing import as_question, lead_in, strip_end, user_voice
from assay.generation.text import ParsedChunk

_MODAL_QUESTION = {"will": "will", "can": "can", "may": "could", "might": "could", "could": "could", "should": "should"}
_NEGATED = {"won't": "will", "can't": "can", "cannot": "can", "shouldn't": "should", "wouldn't": "would"}
_ANAPHORIC_START = regex.compile(r"^(?:it|this|that|so|they|these|not|there)\b", regex.IGNORECASE)
_NOT_IMPERATIVE = {
    "the", "a", "an", "any", "no", "your", "my", "our", "it", "this", "that", "there", "these", "those", "i", "we",
    "you", "they", "interest", "all", "some", "each", "every", "in", "on", "at", "for", "of", "to", "and", "or",
}  # fmt: skip


@dataclass(frozen=True)
class Conditional:
    source: ParsedChunk
    sentence: str
    question: str
    answer: str

    @property
    def ref(self) -> str:
        return self.source.chunk.ref


def conditionals_of(source: ParsedChunk, organisation: str, names: frozenset[str]) -> list[Conditional]:
    found = []
    for line in source.sentences:
        parsed = _split(line.text)
        if parsed is None:
            continue
        conjunction, condition, main = parsed
        asked = _ask(main, organisation)
        if asked is None or _ANAPHORIC_START.match(condition) or ":" in condition or "e.g." in condition:
            continue
        if regex.search(r"\b(?:this|that|these|those)\b", condition, regex.IGNORECASE):
            continue
        clause, negative = asked
        question = as_question(f"{conjunction} {user_voice(condition, organisation)}, {clause}")
        if len(question.split()) > 45:
            continue
        answer = lead_in("No" if negative else "Yes", line.text, names)
        found.append(Conditional(source, line.text, question, answer))
    return found


def _split(sentence: str) -> tuple[str, str, str] | None:
    """(conjunction, condition, main clause) of 'If/When X, Y', 'Y if/when you X' or 'Unless you X, Y'."""
    text = strip_end(sentence.replace("’", "'"))
    if match := regex.match(r"^(?P<conj>If|When) (?P<cond>[^,;]{5,120}), (?P<main>[^;]+)$", text):
        listed = regex.search(
            r", (?:I|you|we)\b", match.group("main")
        )  # 'If you're deaf, hard of hearing ..., you can'
        if regex.search(r"\byou|\byour", match.group("cond")) and not listed:
            return match.group("conj"), match.group("cond"), match.group("main")
    if match := regex.match(r"^(?P<main>[A-Z][^,;]{5,150}?),? (?P<conj>if|when) (?P<cond>you[^,;]{3,120})$", text):
        return match.group("conj").title(), match.group("cond"), match.group("main")
    match = regex.match(r"^Unless you (?P<verb>[a-z]+) (?P<rest>[^,;]{3,100}), (?P<main>[^;]+)$", text)
    if match and match.group("verb") not in {"are", "have", "can", "will", "must", "do", "did", "were"}:
        return "If", f"you don't {match.group('verb')} {match.group('rest')}", match.group("main")
    return None


def _ask(main: str, organisation: str) -> tuple[str, bool] | None:
    """The main clause as a yes/no question clause, and whether the rule's answer is 'no'. Only its
    first clause is asked about ('..., but we'll tell you why' is left to the answer)."""
    main = regex.split(r", (?:but|though|although|so|unless|and then|or) ", main, maxsplit=1)[0]
    words = main.split()
    if not words or _ANAPHORIC_START.match(main) or main.lower().startswith(("though", "then", "but")):
        return None
    if regex.search(r"\b(?:this|that|these|those)\b", main, regex.IGNORECASE):
        return None
    spoken = user_voice(main, organisation)
    subject_pattern = rf"(?P<subj>{regex.escape(organisation)}|I|(?:the|my|any) [\w' -]{{2,40}}?)"
    if match := regex.match(rf"^{subject_pattern} (?P<aux>will|can|may|might|could|should|must|won't|can't|cannot) "
                            r"(?P<not>not )?(?P<rest>.+)$", spoken):  # fmt: skip
        aux, rest, subject = match.group("aux"), match.group("rest"), match.group("subj")
        negative = aux in _NEGATED or bool(match.group("not"))
        aux = _NEGATED.get(aux, aux)
        if aux == "must":
            return (f"do I have to {rest}", negative) if subject == "I" else (f"must {subject} {rest}", negative)
        return f"{_MODAL_QUESTION.get(aux, aux)} {subject} {rest}", negative
    if match := regex.match(rf"^{subject_pattern} (?P<verb>is|are|am) (?P<not>not )?(?P<rest>.+)$", spoken):
        return f"{match.group('verb')} {match.group('subj')} {match.group('rest')}", bool(match.group("not"))
    if match := regex.match(
        rf"^{regex.escape(organisation)} (?P<neg>doesn't |does not )?(?P<verb>[a-z]+) (?P<rest>.+)$", spoken
    ):
        base = match.group("verb") if match.group("neg") else _base(match.group("verb"))
        return f"does {organisation} {base} {match.group('rest')}", bool(match.group("neg"))
    if match := regex.match(r"^I (?P<neg>don't |do not )?(?P<verb>[a-z]+) (?P<rest>.+)$", spoken):
        if match.group("verb") in {"am", "was", "have", "had", "do"}:
            return None
        return f"do I {match.group('verb')} {match.group('rest')}", bool(match.group("neg"))
    first = words[0].lower()
    if first not in _NOT_IMPERATIVE and first.isalpha() and not first.endswith(("s", "ly", "ed")):
        instruction = regex.sub(r"^please ", "", spoken[:1].lower() + spoken[1:])
        return f"should I {instruction}", False
    return None


def _base(verb: str) -> str:
    """'charges' -> 'charge', 'applies' -> 'apply', 'refunds' -> 'refund'."""
    if verb == "has":
        return "have"
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb
