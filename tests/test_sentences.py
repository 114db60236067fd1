from assay.embeddings import split_sentences


def test_abbreviations_and_numbers_do_not_split() -> None:
    text = (
        "Dr. Smith opened the account on Mon. at 9 a.m. and the rate is 3.25% AER, i.e. £5,000.50 p.a. more."
    )
    assert split_sentences(text) == [text]


def test_missing_space_after_full_stop_is_a_boundary() -> None:
    assert split_sentences("The rate is 3.25% AER.It rises after 12 months.") == [
        "The rate is 3.25% AER.",
        "It rises after 12 months.",
    ]


def test_domains_and_numbered_steps() -> None:
    assert split_sentences("Visit www.Example.com now. Steps:\n1. Log in.\n2. Open Cards.") == [
        "Visit www.Example.com now.",
        "Steps:",
        "1. Log in.",
        "2. Open Cards.",
    ]


def test_blank_text_has_no_sentences() -> None:
    assert split_sentences("  \n ") == []
