"""Facts: corpus sentences that a template can turn into a natural question with a checkable answer.

Each shape recognises one common form of policy/product text ("Monthly fee: £0.", "The minimum deposit
is £1,000.", "We'll acknowledge your dispute within 2 working days.") and writes the question a customer
would ask, plus, where a figure is involved, a yes/no form and a false-premise form of it. A sentence no
shape fits yields no fact: fewer questions rather than broken ones. This module holds the fact model,
shared phrasing helpers and the list/sheet shapes; ``statements`` has the sentence shapes and
``extraction`` runs them all.
"""

from dataclasses import dataclass

import regex

from assay.generation.figures import Figure, first_figure
from assay.generation.phrasing import is_or_are, lower_first, strip_end, upper_first, user_voice
from assay.generation.text import Line, ParsedChunk

_QUALIFIER = r"(?:(?:up to|at least|approx\.|only|currently|just|normally|usually|a maximum of|a minimum of)\s)?"
ANAPHORA = regex.compile(r"\b(?:it|this|that|these|those|them|they|its|such)\b", regex.IGNORECASE)
MEASURE_HEADS = {
    "fee", "fees", "rate", "rates", "interest", "limit", "limits", "age", "deposit", "balance", "term", "charge",
    "charges", "cost", "period", "amount", "minimum", "maximum", "allowance", "loan", "excess", "income", "apr",
    "aer", "ltv", "buffer", "price",
}  # fmt: skip
_VERBS = {"report", "make", "ask", "request", "send", "contact", "get", "apply", "open", "close", "complain"}
_NOT_A_LABEL = regex.compile(r"^(?:In|By|On|At|For|From|To|If|When|See|Email|Call|Write|Note|Example)\b")
_MASS_NOUNS = {"cash", "money", "interest", "credit", "paying", "insurance", "cover"}
_PARTICIPLE = r"(?:\w+ed|paid|sent|held|made|given|taken|kept|set|shown|done|charged)"
DURATION = r"(?:\d+(?:-\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve)(?: working| calendar)? " + (
    r"(?:days?|weeks?|months?|years?|hours?)"
)


@dataclass(frozen=True)
class Fact:
    """A question a sentence answers. ``claim``/``premise`` hold ``{value}`` where a (possibly altered)
    value goes: "Is the monthly fee {value}?" / "Why is the monthly fee {value}?"."""

    source: ParsedChunk
    sentence: str
    question: str
    answer: str
    kind: str
    figure: Figure | None = None
    value: str = ""
    claim: str = ""
    premise: str = ""
    label: str = ""
    subject: str = ""

    @property
    def ref(self) -> str:
        return self.source.chunk.ref

    def with_value(self, template: str, value: str) -> str:
        return template.replace("{value}", value)


def product_context(source: ParsedChunk, phrase: str) -> str:
    """' for the Everyday Current Account' when the question would not say which product it is about."""
    if not source.subject or source.subject.lower() in phrase.lower() or phrase.lower().startswith(("my ", "your ")):
        return ""
    return f" for the {source.subject}"


def framed(source: ParsedChunk, body: str, phrase: str) -> str:
    """'For the Travel Insurance, how long ...?' / 'When I apply for a mortgage, how long ...?': the product
    or task named up front, unless the question already names the product."""
    if source.subject and source.subject.lower() not in phrase.lower():
        return f"For the {source.subject}, {lower_first(body)}"
    if not source.subject and source.task:
        return f"When I {source.task}, {lower_first(body)}"
    return upper_first(body)


def clause_end(text: str) -> str:
    """The value phrase: up to the end of its clause ('£1,000 and the maximum is ...' -> '£1,000')."""
    return strip_end(regex.split(r", |; | and | but | \(| which | so | depending ", text, maxsplit=1)[0])


def head(noun_phrase: str) -> str:
    head = regex.split(r" (?:on|of|for|in|to|at|by|with|from)\b", noun_phrase, maxsplit=1)[0]
    return head.split()[-1].lower().strip(",.") if head.split() else ""


def key_value(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    match = regex.match(r"^(?P<label>[A-Z][^:]{2,60}?):\s+(?P<value>.+)$", line.text)
    if not match or line.kind == "step":
        return None
    label = regex.sub(r"\s*\([^)]*\)", "", match.group("label")).strip()
    value = strip_end(match.group("value"))
    if (
        len(label.split()) > 7
        or _NOT_A_LABEL.match(label)
        or len(value.split()) > 20
        or regex.match(r"^[£$€\d]", label)
    ):
        return None
    if "@" in value and " " not in value:
        topic = lower_first(label)
        purpose = f"to {topic}" if topic.split()[0] in _VERBS else f"for {topic}"
        question = f"What email address should I use {purpose}?"
        return Fact(source, line.text, question, f"{upper_first(topic)}: {value}.", "contact")
    figure = first_figure(value)
    words = label.split()
    gerund = words[0].lower().strip(",").endswith("ing")
    if figure is None:
        measure = lower_first(label)
        if gerund or head(measure) not in MEASURE_HEADS:
            return None
        context = product_context(source, measure)
        answer = f"{upper_first(measure)}{context}: {value}."
        return Fact(source, line.text, f"What {is_or_are(measure)} the {measure}{context}?", answer, "text")
    if not regex.match(r"^(?:from |an extra |a |an )?" + _QUALIFIER + regex.escape(figure.text), value):
        return None
    subject = source.subject
    heading = _singular(line.heading.lower())
    if len(words) > 1 and all(word[:1].isupper() for word in words) and head(heading) in MEASURE_HEADS:
        subject, measure = label, heading  # "- Plus Current Account: £12 per month." under "## Account fees"
        context = f" for the {label}"
    else:
        measure = lower_first(label)
        context = product_context(source, measure)
    frame = (lambda body: framed(source, body, measure + context)) if not context else upper_first
    core = value[len("up to ") :] if value.lower().startswith("up to ") else value
    if core is not value:
        measure = f"limit on {measure}"
    claim_value = clause_end(core)
    if not gerund and head(measure) in MEASURE_HEADS:
        verb = is_or_are(measure)
        stem = f"the {measure}{context}"
        return Fact(
            source, line.text, frame(f"what {verb} {stem}?"), f"The {measure}{context} {verb} {value}.", figure.kind,
            figure, claim_value, frame(f"{verb} {stem} {{value}}?"), frame(f"why {verb} {stem} {{value}}?"), measure,
            subject,
        )  # fmt: skip
    if figure.kind != "money" or ("," in label and not gerund):
        return None
    thing = user_voice(lower_first(label), organisation)
    thing = thing if gerund else _with_article(thing)
    does = "do" if is_or_are(thing) == "are" and not gerund else "does"
    costs = "cost" if does == "do" else "costs"
    return Fact(
        source, line.text, frame(f"how much {does} {thing}{context} cost?"),
        f"{upper_first(thing)}{context} {costs} {value}.", figure.kind, figure, claim_value,
        frame(f"{does} {thing}{context} cost {{value}}?"), frame(f"why {does} {thing}{context} cost {{value}}?"),
        lower_first(label), subject,
    )  # fmt: skip


def copula(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    match = regex.match(
        r"^(?P<subj>(?:The|Your|An?|Each|Every|Our)\s[^,;:()]{2,60}?)\s(?P<verb>is|are)\s(?P<pred>.+)$", line.text
    )
    if not match or ANAPHORA.search(match.group("subj")):
        return None
    subject_phrase = user_voice(lower_first(match.group("subj")), organisation)
    verb, pred = match.group("verb"), strip_end(match.group("pred"))
    figure = first_figure(pred)
    if figure is None:
        return None
    label = regex.sub(r"^(?:the|my|an?|each|every)\s", "", subject_phrase)
    context = product_context(source, subject_phrase)
    stem = f"{subject_phrase}{context}"

    def frame(body: str) -> str:
        return upper_first(body) if context or source.subject else framed(source, body, stem)

    if regex.match(_QUALIFIER + regex.escape(figure.text), pred):
        return Fact(
            source, line.text, frame(f"what {verb} {stem}?"), line.text, figure.kind, figure, clause_end(pred),
            frame(f"{verb} {stem} {{value}}?"), frame(f"why {verb} {stem} {{value}}?"), label, source.subject,
        )  # fmt: skip
    if adjective := regex.match(rf"^(?P<adj>\w+) for (?P<value>{DURATION})$", pred):
        adj, value = adjective.group("adj"), adjective.group("value")
        return Fact(
            source, line.text, frame(f"how long {verb} {stem} {adj}?"), line.text, "duration", figure, value,
            frame(f"{verb} {stem} {adj} for {{value}}?"), frame(f"why {verb} {stem} only {adj} for {{value}}?"),
        )  # fmt: skip
    passive = regex.match(
        rf"^(?P<vp>(?:\w+ly )?{_PARTICIPLE}(?: [\w-]+){{0,4}}?) (?P<prep>within|in|every) (?P<value>{DURATION})$", pred
    )
    if passive is None:
        return None
    vp, prep, value = passive.group("vp"), passive.group("prep"), passive.group("value")
    participle = regex.sub(r"^\w+ly ", "", vp)
    if prep == "every":
        question, premise = f"how often {verb} {stem} {vp}?", f"why {verb} {stem} only {vp} every {{value}}?"
    else:
        question, premise = (
            f"how soon {verb} {stem} {vp}?",
            f"why does it take {{value}} for {stem} to be {participle}?",
        )
    return Fact(
        source, line.text, frame(question), line.text, "duration", figure, value,
        frame(f"{verb} {stem} {vp} {prep} {{value}}?"), frame(premise),
    )  # fmt: skip


def _singular(phrase: str) -> str:
    return regex.sub(r"(fee|charge|limit|rate)s\b", r"\1", phrase)


def _with_article(noun_phrase: str) -> str:
    first = noun_phrase.split()[0].lower().strip(",")
    plural = is_or_are(noun_phrase) == "are"
    if plural or first in _MASS_NOUNS or (noun_phrase[:1].isupper() and noun_phrase[1:2].isupper()):
        return noun_phrase
    vowel = first[0] in "aeiou" and not first.startswith(("eu", "uni", "use", "one"))
    return ("an " if vowel else "a ") + noun_phrase


def altered(fact: Fact, template: str, new_figure: str) -> str:
    """The claim or premise with the fact's figure replaced by ``new_figure``."""
    assert fact.figure is not None
    return fact.with_value(template, fact.value.replace(fact.figure.text, new_figure, 1))
