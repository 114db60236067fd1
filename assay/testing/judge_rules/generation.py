"""Rules for the generation judges of part B: a user's own prompt (``byop``) and the summary check.

``byop`` cannot read arbitrary instructions, so it follows what the prompt's tags offer: with an
``<expected_answer>`` it passes answers that cover most of it; with a ``<retrieved_context>`` answers most of
whose content words the context states; otherwise answers that share two content words with the question.
"""

import re

from assay.testing.judge_rules import Verdict, content_words, coverage, rule

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?%?")


@rule("byop")
def byop(inputs: dict[str, str]) -> Verdict:
    answer = inputs.get("actual_answer", "")
    if inputs.get("expected_answer"):
        share = coverage(inputs["expected_answer"], answer)
        return {"rationale": f"Covers {share:.0%} of the expected answer.", "passed": share >= 0.5}
    if inputs.get("retrieved_context"):
        share = coverage(answer, inputs["retrieved_context"])
        return {"rationale": f"The context states {share:.0%} of the answer.", "passed": share >= 0.5}
    shared = content_words(inputs.get("question", "")) & content_words(answer)
    return {"rationale": f"Shares {sorted(shared)} with the question.", "passed": len(shared) >= 2}


@rule("summarization_judge")
def summarization_judge(inputs: dict[str, str]) -> Verdict:
    reference, summary = inputs.get("reference", ""), inputs.get("summary", "")
    missing = sorted(content_words(reference) - content_words(summary))
    invented = sorted(set(_NUMBER.findall(summary)) - set(_NUMBER.findall(reference)))
    share = coverage(reference, summary)
    bad = share < 0.6 or bool(invented)
    return {
        "rationale": f"Covers {share:.0%} of the reference's content words; figures not in it: {invented}.",
        "missing_points": missing,
        "unsupported_statements": invented,
        "bad_summary": bad,
    }
