"""Figures and names as real answers write them: one normaliser, checked on the notations seen in real RAG
answers and records (24-hour and 12-hour times, ranges, degrees, spelled numbers, currency, percent, dates),
and names spelled two ways (state codes, months, weekdays) or capitalised only because a clause starts."""

import pytest
from assay.evaluators._grounding import Evidence, figures, names


@pytest.mark.parametrize(
    ("context", "answer"),
    [
        ('"Monday": "16:0-21:0"', "open from 4 PM to 9 PM"),
        ('"Monday": "16:0-21:0"', "open 4 to 9 pm"),
        ("Open 8:00-17:30 on weekdays.", "open 8 a.m. to 5:30 p.m."),
        ("Lunch is served at 12:00.", "Lunch is at noon."),
        ("Preheat the oven to 350°F.", "Preheat to 350 degrees F."),
        ("The fee is £5,000.", "The fee is 5000 pounds."),
        ("It costs $1,500,000.", "It costs $1.5 million."),
        ("Rates rose 25 percent.", "Rates rose 25%."),
        ("Rates rose 25%.", "Rates rose twenty-five percent."),
        ("The trip takes fourteen days.", "The trip takes 14 days."),
        ("Founded 2024-03-05.", "Founded on March 5, 2024."),
    ],
)
def test_the_same_figure_in_another_notation_is_stated(context: str, answer: str) -> None:
    check = Evidence([context]).check(answer)
    assert check.unsupported_figures == (), [figure.key for figure in figures(answer)]


@pytest.mark.parametrize(
    ("context", "answer", "missing"),
    [
        ('"Monday": "16:0-21:0"', "open from 5 PM to 9 PM", ("5 PM",)),
        ("The fee is £5,000.", "The fee is £6,000.", ("£6,000",)),
        ("Rates rose 25%.", "Rates rose 35 percent.", ("35 percent",)),
    ],
)
def test_a_different_figure_is_still_unsupported(context: str, answer: str, missing: tuple[str, ...]) -> None:
    assert Evidence([context]).check(answer).unsupported_figures == missing


@pytest.mark.parametrize("vague", ["several thousand customers", "a few hundred branches", "thousands of users"])
def test_an_order_of_magnitude_is_not_a_figure(vague: str) -> None:
    assert figures(vague) == []


@pytest.mark.parametrize(
    ("context", "answer"),
    [
        ('{"city": "Santa Barbara", "state": "CA"}', "It is in Santa Barbara, California."),
        ("Based in Santa Barbara, California.", "It is in Santa Barbara, CA."),
        ("Hours: Mon 9-5, Tue 9-5.", "It opens on Monday and Tuesday."),
        ("Opened 2024-03-05.", "It opened in March."),
        ("The fee is 5 USD.", "Overall, the fee is small. Meanwhile, the rate is 4 PM-fixed."),
    ],
)
def test_names_spelled_another_way_or_starting_a_clause_are_known(context: str, answer: str) -> None:
    assert Evidence([context]).check(answer).unsupported_names == ()


def test_clause_initial_capitals_are_not_names_but_real_names_are() -> None:
    assert names("Overall, the fee is low: Meanwhile it rose. AM or PM?") == []
    assert names("The fee was set by Meridian Bank in Ohio.") == ["Meridian", "Bank", "Ohio"]
    assert Evidence(["The state code is IN."]).check("It is in Indiana.").unsupported_names == ()
    assert Evidence(["Sales rose in the west."]).check("It is in Indiana.").unsupported_names == ("Indiana",)
