"""Sentence shapes of policy and guide text: deadlines ("We'll acknowledge ... within 2 working days",
"You have 14 days to ..."), eligibility ages, phone numbers, definitions, and the plain statement any
subject can be asked about."""

import regex

from assay.generation.facts import ANAPHORA, DURATION, Fact, framed
from assay.generation.figures import Figure, first_figure
from assay.generation.phrasing import lower_first, user_voice
from assay.generation.text import Line, ParsedChunk, name_words

_VAGUE_HEADS = {"details", "information", "steps", "options", "things", "line", "default", "rest", "others"}
_SUBORDINATORS = {
    "if",
    "when",
    "because",
    "once",
    "while",
    "although",
    "unless",
    "before",
    "after",
    "as",
    "since",
    "no",
}
_DETERMINERS = {"the", "a", "an", "my", "your", "our", "some", "most", "all", "each", "every", "any", "its"}
_PRONOUNS = {"we", "you", "i", "it", "they", "this", "that", "there", "these", "those", "he", "she", "here"}


def within(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    """'We'll acknowledge your dispute within 2 working days' and 'You can withdraw ... within 14 days'."""
    text = regex.sub(r"^We'll\b", "We will", line.text.replace("’", "'"))
    match = regex.match(
        rf"^(?P<subj>We|You|Your [\w -]{{2,30}}?) (?P<modal>will|can|may|must|should|aim to|need to) "
        rf"(?:(?:normally|usually|also) )?(?P<vp>[^,;:]+?) (?:within|in) (?P<value>{DURATION})\b(?P<rest>.*)$",
        text,
    )
    if not match or ANAPHORA.search(match.group("vp")) or len(match.group("vp").split()) > 12:
        return None
    figure, value = first_figure(match.group("value")), match.group("value")
    vp = user_voice(match.group("vp"), organisation)
    subj, modal = match.group("subj"), match.group("modal")
    if subj == "You":
        if modal == "will":
            return None
        return Fact(
            source, line.text, framed(source, f"how long do I have to {vp}?", vp), line.text, "duration", figure,
            value, framed(source, f"do I have {{value}} to {vp}?", vp),
            framed(source, f"why do I only have {{value}} to {vp}?", vp),
        )  # fmt: skip
    if modal not in {"will", "aim to"}:
        return None
    actor = organisation if subj == "We" else user_voice(lower_first(subj), organisation)
    vp = vp.replace(f"{organisation}'s", "its") if actor == organisation else vp
    question = f"how soon will {actor} {vp}?" if modal == "will" else f"how soon does {actor} aim to {vp}?"
    return Fact(
        source, line.text, framed(source, question, vp), line.text, "duration", figure, value,
        framed(source, f"will {actor} {vp} within {{value}}?", vp),
        framed(source, f"why does it take {{value}} for {actor} to {vp}?", vp),
    )  # fmt: skip


def you_have(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    match = regex.match(
        rf"^You have (?P<value>{DURATION})(?: \([^)]*\)| from [^,]+?| after [^,]+?)? to (?P<vp>[^,;]+?)\.?$", line.text
    )
    if not match or ANAPHORA.search(match.group("vp")):
        return None
    vp = user_voice(match.group("vp"), organisation)
    return Fact(
        source, line.text, framed(source, f"how long do I have to {vp}?", vp), line.text, "duration",
        first_figure(match.group("value")), match.group("value"), framed(source, f"do I have {{value}} to {vp}?", vp),
        framed(source, f"why do I only have {{value}} to {vp}?", vp),
    )  # fmt: skip


def minimum_age(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    match = regex.search(r"\b(?:must|need to) be (?:aged )?(?P<value>\d{2}) or over\b", line.text)
    if not match or not source.subject:
        return None
    stem = f"the minimum age for the {source.subject}"
    return Fact(
        source, line.text, f"What is {stem}?", line.text, "count", first_figure(match.group("value")),
        match.group("value"), f"Is {stem} {{value}}?", f"Why is {stem} {{value}}?", "minimum age", source.subject,
    )  # fmt: skip


def phone(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    match = regex.search(
        r"\bcall (?:us|our (?P<who>[\w -]{3,50}?)) on (?P<phone>\+?\d[\d ]{7,}\d)", line.text, regex.IGNORECASE
    )
    if not match:
        return None
    condition = regex.match(r"^If (?P<cond>[^,]+), call\b", line.text)
    if match.group("who"):
        question = f"What number should I call to reach the {match.group('who')}?"
    elif condition and not ANAPHORA.search(condition.group("cond")):
        question = f"What number should I call if {user_voice(condition.group('cond'), organisation)}?"
    else:
        return None
    figure = Figure("phone", match.group("phone"), match.start("phone"), match.end("phone"))
    return Fact(source, line.text, question, line.text, "phone", figure, match.group("phone"))


def definition(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    if match := regex.match(r"^(?P<term>[A-Z][\w.]{1,12}) stands for (?P<what>.+)$", line.text):
        return Fact(source, line.text, f"What does {match.group('term')} stand for?", line.text, "text")
    if match := regex.match(r"^(?P<subj>The [^,]{3,60}?) is designed for (?P<who>.+)$", line.text):
        return Fact(source, line.text, f"Who is {lower_first(match.group('subj'))} designed for?", line.text, "text")
    return None


def about(source: ParsedChunk, line: Line, organisation: str) -> Fact | None:
    """The fallback of any plain statement: 'Mobile phone bills are not accepted.' -> 'What does Acme say
    about mobile phone bills?', answered by the sentence itself. Vague subjects ('the line') are skipped."""
    match = regex.match(
        r"^(?P<subj>[A-Z][\w'-]*(?: [\w'-]+){0,4}?) (?:is|are|can|could|will|would|should|might|must|may|has|have|"
        r"does|do|cannot|can't|won't|isn't|aren't|don't|doesn't|never)\b",
        line.text,
    )
    if not match or line.kind == "step" or len(line.text.split()) < 5 or not line.text.endswith("."):
        return None
    if regex.search(r"\b(?:this|that|these|those|such)\b", line.text, regex.IGNORECASE):
        return None  # 'Many problems can be fixed quickly this way.' needs the sentence before it
    subject = match.group("subj")
    words = subject.lower().split()
    vague = words[0] in _PRONOUNS | _SUBORDINATORS or words[-1] in _VAGUE_HEADS or subject in organisation
    if vague or any(word.endswith("ly") or word in {"also", "plc"} for word in words) or ANAPHORA.search(subject):
        return None
    if regex.search(r"\b(?:you|we|us)\b", subject, regex.IGNORECASE):
        return None
    names = name_words(organisation)
    phrase = lower_first(subject, names)
    if len(subject.split()) > 1 and subject.split()[1] in names:  # 'Existing Harbourline customers'
        phrase = phrase[:1].lower() + phrase[1:]
    phrase = user_voice(phrase, organisation)
    content = [word for word in phrase.replace(f"{organisation}'s", "").split() if word.lower() not in _DETERMINERS]
    if len(content) < 2:
        return None
    return Fact(source, line.text, f"What does {organisation} say about {phrase}?", line.text, "about")
