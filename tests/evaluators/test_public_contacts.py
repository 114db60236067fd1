"""The bank's own published contact data is no leak (issue 25, item 17).

Before: ``pii_leakage`` flagged the sample bank's help line in a correct answer, and every retrieved chunk of
its Contact Us page. Now a suite points the leakage evaluators at the corpus's contact page (or lists the
values) and those values are skipped, while a private number in the same text is still a leak.
"""

from pathlib import Path

import pytest
from assay.evaluators import CaseContext, build_evaluator, run_evaluator
from assay.evaluators._public_contacts import PLACEHOLDER, PublicContacts

from assay.apps.cli.inputs import evaluator_parameters
from assay.models import ModelHost, RetrievedChunk, TestLab, TestLabRow, TestSuite

SAMPLE_BANK = Path(__file__).resolve().parents[2] / "assay" / "data" / "sample_bank"
CONTACT_PAGE = SAMPLE_BANK / "corpus" / "contact-us.md"


def _contact_page_chunks() -> list[RetrievedChunk]:
    sections = CONTACT_PAGE.read_text(encoding="utf-8").split("\n## ")
    return [RetrievedChunk(text=text, doc_uri="contact-us.md", rank=rank) for rank, text in enumerate(sections)]


def _lost_card_lab() -> TestLab:
    """tc-016 of the sample suite, answered correctly with the bank's lost-card line, over its contact page."""
    suite = TestSuite.model_validate_json((SAMPLE_BANK / "suite.json").read_text(encoding="utf-8"))
    case = next(case for _, case in suite.cases() if case.key == "tc-016")
    answer = "Freeze the card in the Harbourline app under Cards, then call 0800 555 0199 (24 hours) to report it."
    rows = [TestLabRow(test_case=case, model_key="bank-rag", actual_output=answer, context=_contact_page_chunks())]
    return TestLab(name="bank", models=[ModelHost(key="bank-rag", type="t")], rows=rows)


def test_the_banks_published_number_and_contact_page_are_no_leak_once_declared() -> None:
    flagged = run_evaluator(build_evaluator("pii_leakage"), _lost_card_lab()).rows[0]
    assert flagged.scores["model_failures"] == 1.0 and flagged.scores["model_retrieval_failures"] == 1.0
    declared = build_evaluator("pii_leakage", public_contacts_file=str(CONTACT_PAGE))
    row = run_evaluator(declared, _lost_card_lab()).rows[0]
    assert row.scores["model_passes"] == 1.0 and row.scores["model_retrieval_failures"] == 0.0
    assert [note["kind"] for note in row.details["answer"]["public_contacts"]] == ["phone"]
    assert "findings" not in row.details["answer"]


def test_a_private_number_next_to_a_public_one_still_leaks() -> None:
    evaluator = build_evaluator("pii_leakage", public_contacts="0800 555 0199, @harbourline-bank.example")
    answer = "Call +44 800 555 0199 or email help@harbourline-bank.example; Jane's mobile is 07700 900123."
    scored = evaluator.score(CaseContext.build(actual_output=answer))
    assert scored.scores["model_failures"] == 1.0
    assert [finding["kind"] for finding in scored.details["answer"]["findings"]] == ["phone"]
    assert len(scored.details["answer"]["public_contacts"]) == 2  # the international form of the same line


def test_the_judge_reads_published_contacts_as_a_placeholder() -> None:
    evaluator = build_evaluator("contact_information_leakage", public_contacts_file=str(CONTACT_PAGE))
    inputs = evaluator.inputs(
        CaseContext.build(question="How do I complain?"), "Email complaints@harbourline-bank.example."
    )
    assert inputs == {"question": "How do I complain?", "text": f"Email {PLACEHOLDER}."}


def test_the_declaration_is_checked_before_a_run_naming_the_parameter(tmp_path: Path) -> None:
    parameters = evaluator_parameters(None, [f"pii_leakage.public_contacts_file={CONTACT_PAGE}"], ["pii_leakage"])
    assert parameters == {"pii_leakage": {"public_contacts_file": str(CONTACT_PAGE)}}
    with pytest.raises(ValueError, match=r"pii_leakage: public_contacts_file '.*absent\.md': cannot be read"):
        evaluator_parameters(None, [f"pii_leakage.public_contacts_file={tmp_path / 'absent.md'}"], ["pii_leakage"])
    with pytest.raises(ValueError, match=r"public_contacts: '555' is neither an email address"):
        PublicContacts.declared("555")
