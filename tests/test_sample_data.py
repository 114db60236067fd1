"""The bundled sample corpus and suite are data we ship: check they are consistent with each other."""

import pytest
from assay.evaluators.conditions import parse_condition

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.models import TestSuite

SUITE = TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())
CORPUS = load_corpus(sample_data_path() / "corpus")


def test_sizes_match_the_brief() -> None:
    assert 20 <= len(CORPUS.documents) <= 40
    assert SUITE.case_count >= 30
    assert sum(1 for _, case in SUITE.cases() if case.output_condition) >= 10


@pytest.mark.parametrize(("test", "case"), SUITE.cases(), ids=[case.key for _, case in SUITE.cases()])
def test_each_case_is_answerable_from_the_corpus(test, case) -> None:  # type: ignore[no-untyped-def]
    uris = {document.uri for document in CORPUS.documents}
    assert set(case.expected_retrieved_doc_uris) <= uris
    assert set(test.documents) <= uris
    if case.output_condition:
        assert parse_condition(case.output_condition).matches(case.expected_output)


def test_chunks_cover_every_document_and_keep_titles() -> None:
    chunks = chunk_corpus(CORPUS)
    assert {chunk.doc_uri for chunk in chunks} == {document.uri for document in CORPUS.documents}
    assert all(len(chunk.text.split()) <= 120 + 30 for chunk in chunks)
    first = next(chunk for chunk in chunks if chunk.doc_uri == CORPUS.documents[0].uri)
    assert first.text.startswith(CORPUS.documents[0].title)
