from pathlib import Path

import pytest
from assay.evaluators import build_evaluator, run_evaluator

from assay.embeddings import sentences, split_sentences
from assay.embeddings.sentences import MAX_SPLIT_CHARS
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow


def test_abbreviations_and_numbers_do_not_split() -> None:
    text = "Dr. Smith opened the account on Mon. at 9 a.m. and the rate is 3.25% AER, i.e. £5,000.50 p.a. more."
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


LONG_LINE = " ".join(
    f"Dr. Smith moved the rate to 3.{index % 90 + 10}% AER on Mon. at 9 a.m. and wrote to customer {index}. "
    "The letter, i.e. form B.2, followed."
    for index in range(150)
)


def test_a_long_line_is_segmented_in_bounded_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """pysbd is quadratic in line length: no call may see more than a block (the old code passed 1.1 MB)."""
    segmenter = sentences._segmenter()
    segment = segmenter.segment
    lengths: list[int] = []

    def recording(text: str) -> list[str]:
        lengths.append(len(text))
        return segment(text)

    monkeypatch.setattr(segmenter, "segment", recording)
    sentences._split_cached.cache_clear()
    text = LONG_LINE * 4
    assert len(text) > 4 * sentences.BLOCK_CHARS
    assert len(split_sentences(text)) == 4 * 300
    assert max(lengths) <= sentences.BLOCK_CHARS


def test_a_long_line_splits_as_pysbd_splits_it_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(LONG_LINE) > 3 * sentences.BLOCK_CHARS
    sentences._split_cached.cache_clear()
    in_blocks = split_sentences(LONG_LINE)
    monkeypatch.setattr(sentences, "BLOCK_CHARS", len(LONG_LINE))
    sentences._split_cached.cache_clear()
    assert in_blocks == split_sentences(LONG_LINE)


def test_lowercase_continuations_join_their_sentence() -> None:
    assert split_sentences("The branch opens Mon. at 9 and Tue. at 10. Call us.") == [
        "The branch opens Mon. at 9 and Tue. at 10.",
        "Call us.",
    ]


@pytest.mark.timeout(20)
def test_a_megabyte_answer_is_unscored_by_sentence_evaluators_not_stalled() -> None:
    """A 1.1 MB answer stalled sentence-based evaluators for over 600 s; now it is unscored with the reason and
    the other cases of the run are scored."""
    huge = "The rate is 3.25% AER and interest is paid monthly. " * 21_000
    assert len(huge) > 1_000_000
    context = [RetrievedChunk(text="The Easy Access Saver pays 3.25% AER. Interest is paid monthly.")]
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt="What rate?"), model_key="m", actual_output=answer, context=context
        )
        for key, answer in (("huge", huge), ("normal", "It pays 3.25% AER."))
    ]
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="testlab")], rows=rows)
    for evaluator in (build_evaluator("groundedness", method="lexical"), build_evaluator("looping_detection")):
        huge_row, normal_row = run_evaluator(evaluator, lab).rows
        assert huge_row.unscored_reason == (
            f"test case huge: answer longer than {MAX_SPLIT_CHARS:,} characters ({len(huge):,}), "
            "too long to split into sentences"
        )
        assert normal_row.unscored_reason is None and normal_row.scores


def test_splits_kept_in_the_store_are_read_back_without_splitting_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun reads each text's split from the store next to the embedding cache (issue 12: splitting was
    most of a warm 10,000-case run)."""
    text = "The Easy Saver pays 3.25% AER. Interest is paid monthly, e.g. on the 1st."
    try:
        sentences.use_sentence_store(tmp_path)
        sentences._split_cached.cache_clear()
        first = sentences.split_sentences(text)
        assert sentences._store is not None
        sentences._store.flush()
        sentences._split_cached.cache_clear()
        sentences.use_sentence_store(None)
        sentences.use_sentence_store(tmp_path / "other")  # a new store object on a fresh file ...
        sentences.use_sentence_store(tmp_path)  # ... and back: read from disk, not from memory
        monkeypatch.setattr(sentences, "_split", lambda _: pytest.fail("split again instead of read back"))
        assert (
            sentences.split_sentences(text)
            == first
            == ["The Easy Saver pays 3.25% AER.", "Interest is paid monthly, e.g. on the 1st."]
        )
        monkeypatch.setattr(sentences, "SPLITTER_VERSION", "changed-rules")
        sentences._split_cached.cache_clear()
        monkeypatch.setattr(sentences, "_split", lambda _: ("split",))
        assert sentences.split_sentences(text) == ["split"]  # other rules: not read from the old key
    finally:
        sentences.use_sentence_store(None)
        sentences._split_cached.cache_clear()


# Lines the plain-prose fast path must either cut exactly as pysbd does or hand to pysbd.
TRICKY_LINES = [
    "Options are i. one ii. two iii. three.", "Choose iv. Then go.", "In 2024. Then we left.", "ALL CAPS. NEXT ONE.",
    "It is done. a lowercase start.", "The fee is 25p. Then more.", "Pay £1,000. Then £2,000.", "Up 5%. Down 3%.",
    "He said No. Then yes.", "See section A. It applies.", "Visit us in Jan. Then Feb.", "We're open. You're in.",
    "The customers' money. It is safe.", "It's (see note 3) fine. Yes.", "Step one (a) apply. Step two.",
    "Rates (fixed until 2027) apply. Fees too.", "Call 0800 123 456. Lines open.", "Ask for approx. 5.",
    "Total 100. Total 200.", "Total 12. Total 13.", "He scored 9.5. Then left.", "A. B.", "Etc. Then more.",
    "Done!  Two spaces.", "One.Two.", "Price: £5 (incl. VAT). Next.", "Is it? Yes it is! Great.",
    "Café crème. Très bien.", "The ISA pays 4% AER. It's tax-free.", "It is No. 1. Next.", "Call ext. 55. Then.",
    "Ends with Inc. The next.", "Version 2.0. Released.", "He is ill. So am I.", "x = 5. y = 6.", "See a. See b.",
    "(Optional) extras. Then more.", "He said 'stop. now' and left.", "Wow!! Great.", "Rates (see below.) Next.",
]  # fmt: skip


def _corpus_texts() -> list[str]:
    import json

    from assay.corpora import sample_data_path

    texts = [path.read_text(encoding="utf-8") for path in sorted((sample_data_path() / "corpus").glob("*.md"))]
    for path in sorted((Path(__file__).parents[1] / "bench" / "data").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if "answer" not in item:  # not a labelled set (the refit's recorded signals)
                continue
            context = item["context"]
            texts += [item["answer"], item["question"], *(context if isinstance(context, list) else [context])]
    return [*texts, *TRICKY_LINES]


def test_the_plain_prose_fast_path_splits_as_pysbd_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every text of the sample corpus, both labelled sets and the tricky lines: the same sentences with the
    fast path as with pysbd alone, and the fast path takes a real share of the lines (else it saves nothing)."""
    texts = _corpus_texts()
    lines = [line for text in texts for line in text.splitlines() if line.strip()]
    plain = sum(sentences._plain_segments(line) is not None for line in lines)
    assert plain > 0.5 * len(lines), f"only {plain} of {len(lines)} lines take the fast path"
    with_fast_path = [sentences._split(text) for text in texts]
    monkeypatch.setattr(sentences, "_plain_segments", lambda line: None)
    assert [sentences._split(text) for text in texts] == with_fast_path


@pytest.mark.parametrize(
    "line",
    ["Dr. Smith left.", "It is No. 1. Next.", "Step (a) applies. Then.", "Rates (see below.) Next.",
     "He said 'stop. now' and left.", "Total 12. Total 13.", "Visit www.example.com today.", "Wow!! Great."],
)  # fmt: skip
def test_lines_with_abbreviations_list_numbers_quotes_or_inner_stops_go_to_pysbd(line: str) -> None:
    assert sentences._plain_segments(line) is None
