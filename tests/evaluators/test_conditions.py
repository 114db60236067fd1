import time

import pytest
from assay.evaluators.conditions import ConditionError, parse_condition

TEXT = "Brazil revenue was 15,969 million in 2023."


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ('"15,969"', True),
        ('"15969"', False),
        ('regexp("15,?969")', True),
        ('"15,969" AND regexp("[Mm]illion")', True),
        ('("Brazil" OR "brazil") AND regexp("15,?969 [Mm]illion") AND NOT "Real"', True),
        ('"Brazil" AND NOT "revenue"', False),
        ('NOT NOT "Brazil"', True),
        ('"x" OR "y" AND "Brazil"', False),  # AND binds tighter: "x" OR ("y" AND "Brazil")
        ('("x" OR "y") OR "2023"', True),
        ('regexp("^Brazil revenue was 15,969 million in 2023\\.$")', True),
        ('"say \\"hi\\""', False),
    ],
)
def test_conditions_follow_the_manual(condition: str, expected: bool) -> None:
    assert parse_condition(condition).matches(TEXT) is expected


def test_escaped_quote_is_part_of_the_literal() -> None:
    assert parse_condition('"say \\"hi\\""').matches('They say "hi" twice')


@pytest.mark.parametrize(
    ("condition", "fragment"),
    [
        ("", "empty condition"),
        ('"a" AND', "ends too early"),
        ('"a" XOR "b"', "position 4"),
        ('("a"', "expected ')'"),
        ('"unterminated', "unterminated string"),
        ('regexp("(")', "invalid regexp"),
        ("regexp(x)", 'expected regexp("...")'),
        ('"a" "b"', "unexpected"),
    ],
)
def test_bad_conditions_say_what_and_where(condition: str, fragment: str) -> None:
    with pytest.raises(ConditionError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_condition(condition)


def test_catastrophic_regex_is_bounded_by_a_timeout() -> None:
    condition = parse_condition('regexp("(a|aa)+$")')
    started = time.perf_counter()
    with pytest.raises(ConditionError, match="longer than"):
        condition.matches("a" * 5000 + "!")
    assert time.perf_counter() - started < 5
