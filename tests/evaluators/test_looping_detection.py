"""Looping detection: exact values of the three repetition measures on hand-made texts."""

import random
import zlib

import pytest
from assay.artifacts.findings.common import problem_type
from assay.evaluators import CaseContext, build_evaluator
from assay.evaluators.looping_detection import (
    compression_ratio,
    counted_sentences,
    longest_repeated_substring,
    repeated_substring_share,
    unique_sentence_share,
)
from assay.evaluators.runner import score_case


def brute_force_longest_repeat_length(text: str) -> int:
    """Longest substring occurring twice without overlap, by checking every pair of starts and lengths."""
    best = 0
    for length in range(1, len(text) // 2 + 1):
        seen = {}
        for start in range(len(text) - length + 1):
            piece = text[start : start + length]
            if piece in seen and start - seen[piece] >= length:
                best = length
                break
            seen.setdefault(piece, start)
    return best


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abcabc", "abc"),
        ("aaaa", "aa"),  # "aaa" twice would overlap
        ("aaa", "a"),
        ("abcd", ""),
        ("x", ""),
        ("ha ha ha ha", "ha ha"),
        ("the cat and the dog", "the "),
    ],
)
def test_longest_repeated_substring_does_not_overlap(text: str, expected: str) -> None:
    assert longest_repeated_substring(text) == expected


def test_longest_repeated_substring_matches_brute_force_on_random_texts() -> None:
    rng = random.Random(11)
    for _ in range(300):
        text = "".join(rng.choice("ab ") for _ in range(rng.randint(1, 40)))
        assert len(longest_repeated_substring(text)) == brute_force_longest_repeat_length(text), text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abcabc", 1.0),
        ("abcd", 0.0),
        ("ha ha ha ha", 10 / 11),  # "ha ha" twice
        ("abcXabc", 6 / 7),
        ("the cat and the dog", 8 / 19),  # "the " twice
    ],
)
def test_repeated_substring_share_is_length_times_frequency_over_length(text: str, expected: float) -> None:
    assert repeated_substring_share(text) == pytest.approx(expected)


def test_repeated_substring_share_stays_within_one_on_degenerate_text() -> None:
    for text in ("a" * 101, "ab" * 50 + "a", "I am sorry " * 300):
        assert 0.9 <= repeated_substring_share(text) <= 1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The fee is £25. The fee is £25. Call us today.", 2 / 3),
        ("The fee is £25. The  FEE is £25. Call us today.", 2 / 3),  # whitespace and case folded
        ("The fee is £25. Call us today. Interest is paid monthly.", 1.0),
        ("Yes. No. Yes. No. Yes.", 1.0),  # sentences under 10 characters are omitted
        ("Yes. No. The fee is £25. The fee is £25.", 0.5),
        ("ok", 1.0),
    ],
)
def test_unique_sentence_share(text: str, expected: float) -> None:
    assert unique_sentence_share(text, 10) == pytest.approx(expected)


def test_minimum_sentence_length_is_a_parameter() -> None:
    text = "Yes, sure. Yes, sure. Absolutely not."
    assert unique_sentence_share(text, 10) == pytest.approx(2 / 3)  # "Yes, sure." has exactly 10 characters
    assert unique_sentence_share(text, 11) == 1.0
    assert score(text, min_sentence_chars=11)["unique_sentences"] == 1.0


def test_compression_ratio_is_zlib_level_9_capped_at_one() -> None:
    text = "The Easy Access Saver pays 3.25% AER. " * 20
    assert compression_ratio(text) == pytest.approx(len(zlib.compress(text.encode(), 9)) / len(text.encode()))
    assert compression_ratio(text) < 0.15
    assert compression_ratio("Short answer.") == 1.0  # zlib's overhead makes short texts grow


def score(text: str, **parameters: object) -> dict[str, float | None]:
    outcome = score_case(build_evaluator("looping_detection", **parameters), CaseContext.build(actual_output=text))
    assert outcome.unscored_reason is None, outcome.unscored_reason
    return outcome.scores


def test_a_looping_answer_fails_every_metric() -> None:
    scores = score(" ".join(["Please contact our support team for help."] * 8))
    assert scores["unique_sentences"] == 0.125
    assert scores["longest_repeated_substring"] > 0.99
    assert scores["compression_ratio"] < 0.2


def test_a_short_varied_answer_passes_every_metric() -> None:
    scores = score("Balances from £10,000 earn 3.25% AER. Interest is paid monthly into your account.")
    assert scores["unique_sentences"] == 1.0
    assert scores["longest_repeated_substring"] < 0.2
    assert scores["compression_ratio"] > 0.75


def test_a_loop_without_sentence_breaks_is_caught_by_the_substring_and_compression_metrics() -> None:
    scores = score("and then " * 40)
    assert scores["unique_sentences"] == 1.0
    assert scores["longest_repeated_substring"] == round(358 / 359, 6)  # stripped: "and then " * 39 + "and then"
    assert scores["compression_ratio"] < 0.1


def test_surrounding_whitespace_is_ignored() -> None:
    assert score("  \n abcabc \n") == score("abcabc")


def test_a_long_answer_is_scored_quickly() -> None:
    rng = random.Random(3)
    words = ["rate", "fee", "account", "saver", "monthly", "interest", "branch", "online", "balance", "card"]
    text = " ".join(rng.choice(words) for _ in range(1500))
    scores = score(text, min_sentence_chars=10)
    assert 0.0 <= scores["longest_repeated_substring"] < 0.1


def details(text: str, **parameters: object) -> dict:
    outcome = score_case(build_evaluator("looping_detection", **parameters), CaseContext.build(actual_output=text))
    assert outcome.unscored_reason is None, outcome.unscored_reason
    return outcome.details


def test_details_name_the_most_repeated_sentence_as_first_written() -> None:
    # whitespace collapsed and case folded for counting; the first occurrence (collapsed) is shown
    text = "Interest is paid monthly. The fee is  £25. The FEE is £25. Call us. The fee is £25. Interest is paid."
    assert details(text) == {"most_repeated_sentence": "The fee is £25.", "repeats": 3}


def test_ties_go_to_the_sentence_seen_first_and_no_repeat_means_no_details() -> None:
    assert details("Call us today. Visit a branch. Visit a branch. Call us today.") == {
        "most_repeated_sentence": "Call us today.",
        "repeats": 2,
    }
    assert details("Balances earn 3.25% AER. Interest is paid monthly.") == {}
    assert details("Yes. Yes. Yes. Yes.") == {}  # repeats shorter than min_sentence_chars are omitted
    assert details("Yes. Yes. Yes. Yes.", min_sentence_chars=3) == {"most_repeated_sentence": "Yes.", "repeats": 4}


def test_a_long_repeated_sentence_is_cut_in_the_details() -> None:
    sentence = "This sentence goes on and on " * 10 + "until it stops."
    found = details(f"{sentence} {sentence}")
    assert found["repeats"] == 2 and len(found["most_repeated_sentence"]) == 200
    assert found["most_repeated_sentence"].endswith("...")


def test_sentence_length_is_measured_case_folded() -> None:
    assert counted_sentences("Straße ok. STRASSE OK.", 10) == {"Straße ok.": 2}  # 9 characters, 10 folded


def test_problem_type_is_stability() -> None:
    assert problem_type(build_evaluator("looping_detection").spec) == "stability"
