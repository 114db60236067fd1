"""The corpus patch from hand-made calibration and robustness outputs: which questions enter, with which answer
(the one a reviewer passed for a calibration entry, the expected one for a robustness flip) and reason,
deduplication, and the Markdown a corpus owner adds as is."""

from assay.artifacts.corpus_patch import CorpusPatch, build_corpus_patch

from assay.models import ModelHost, Relationship, TestCase, TestLab, TestLabRow
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.mrm import Calibration, FlipCount, MetricCalibration, RobustnessReport

FEE = TestCase(key="fee", prompt="What is the card replacement fee?", expected_output="£25 per card.", topic="cards")
FEE_AGAIN = TestCase(key="fee-2", prompt=" what is the card  replacement fee? ", expected_output="£25.", topic="cards")
LATE = TestCase(key="late", prompt="What is the late payment fee?", expected_output="£12.", topic="cards")
RATE = TestCase(key="rate", prompt="What rate does the saver pay?", expected_output="2.5% AER.", topic="savings")
VAGUE = TestCase(key="vague", prompt="Tell me about it", expected_output="")
ISA = TestCase(key="isa", prompt="Can I open an ISA online?", expected_output="Yes, in the app.")
TYPO_RATE = TestCase(
    key="rate~t1",
    prompt="What rat does the saver pay?",
    relationships=[Relationship(type="perturbation", target="rate")],
    categories=["perturbed", "perturbator:typos", "intensity:medium"],
)


ANSWERS = {"fee": "A replacement card costs £25.", "fee-2": "It is £25 per card.", "late": "£12 per late payment.",
           "rate": "The saver pays 2.5% AER.", "isa": "Yes: open it in the app.", "vague": "  "}  # fmt: skip
"""What the systems answered (every model the same): a passed answer enters the patch in place of the expected."""


def lab(name: str, cases: list[TestCase], models: tuple[str, ...] = ("m1", "m2")) -> TestLab:
    return TestLab(
        name=name,
        models=[ModelHost(key=model, type="t") for model in models],
        rows=[
            TestLabRow(test_case=case, model_key=model, actual_output=ANSWERS.get(case.key, "x"))
            for case in cases
            for model in models
        ],
    )


BASELINE = lab("baseline", [FEE, FEE_AGAIN, LATE, RATE, VAGUE, ISA])
CALIBRATION = Calibration(
    metrics=[
        MetricCalibration(
            evaluator_id="similarity",
            metric="score",
            higher_is_better=True,
            default_threshold=0.7,
            calibrated_threshold=0.4,
            labels=12,
            agreement_before=0.5,
            agreement_after=0.9,
            stable=True,
        )
    ],
    human_passed_failures=["m1:fee", "m2:fee-2", "m1:vague", "m1:ghost"],
    decided_by="person",
)
SIMILARITY = EvaluationResult(
    evaluator=EvaluatorSpec(
        id="similarity",
        display_name="Similarity",
        description="d",
        domain="generation",
        required_inputs=["actual_output"],
        metrics=[MetricMeta(key="score", display_name="Score", description="d", threshold=0.7, is_primary=True)],
    ),
    rows=[
        CaseScores(test_case_key="fee", model_key="m1", scores={"score": 0.5}),
        CaseScores(test_case_key="fee-2", model_key="m2", scores={"score": 0.6}),
        CaseScores(test_case_key="late", model_key="m1", scores={"score": 0.9}),
    ],
)


def report(kind: str, flipped: list[str]) -> RobustnessReport:
    return RobustnessReport(
        kind=kind,  # type: ignore[arg-type]
        evaluator_id="similarity",
        metric="score",
        by_perturbator={"typos": FlipCount(cases=4, flips=len(flipped), pass_to_fail=len(flipped), fail_to_pass=0)},
        flipped_row_keys=flipped,
    )


def test_entries_from_calibration_and_input_variation_flips() -> None:
    patch = build_corpus_patch(
        BASELINE,
        CALIBRATION,
        [report("input_variations", ["m2:rate~t1", "m1:late~swap"]), report("adversarial", ["m1:isa~attack"])],
        run_id="run-7",
        results=[SIMILARITY],
        perturbed_labs=[lab("perturbed", [TYPO_RATE], models=("m2",))],
    )
    entries = [entry.model_dump() for entry in patch.entries]
    assert entries == [
        {
            "question": "What is the card replacement fee?",
            "answer": "A replacement card costs £25.",  # what m1 answered and the reviewer passed, not expected
            "answer_source": "answer passed by the reviewer",
            "topic": "cards",
            "reasons": ["failed by similarity/score but passed by the reviewer"],
            "source_case_keys": ["fee", "fee-2"],  # same question, once
            "models": ["m1", "m2"],
        },
        {
            "question": "What rate does the saver pay?",  # the original question, not the perturbed one
            "answer": "2.5% AER.",  # a flip: the expected answer, not what a system answered
            "answer_source": "expected answer",
            "topic": "savings",
            "reasons": ["answer flipped under typos perturbation (similarity/score)"],
            "source_case_keys": ["rate"],
            "models": ["m2"],
        },
        {
            "question": "What is the late payment fee?",  # original found from the key without the perturbed lab
            "answer": "£12.",
            "answer_source": "expected answer",
            "topic": "cards",
            "reasons": ["answer flipped under an input-variation perturbation (similarity/score)"],
            "source_case_keys": ["late"],
            "models": ["m1"],
        },
    ]
    assert patch.skipped == ["m1:vague: the answer the reviewer passed is empty", "m1:ghost: not in the test lab"]
    assert patch.run_id == "run-7" and patch.schema_version == 2


def test_a_passed_answer_is_taken_even_without_an_expected_one_and_a_flip_needs_the_expected_one() -> None:
    """A production-like case has no expected answer: the reviewer's passed answer is all the patch needs; an
    input-variation flip of such a case has no answer to give and is skipped, saying why."""
    unreferenced = TestCase(key="open", prompt="When is the branch open?", expected_output="", topic="branches")
    answered = lab("l", [unreferenced], models=("m1",))
    answered.rows[0].actual_output = " Monday to Friday, 9 to 5. "
    passed = CALIBRATION.model_copy(update={"human_passed_failures": ["m1:open"]})
    [entry] = build_corpus_patch(answered, passed, []).entries
    assert (entry.answer, entry.answer_source) == ("Monday to Friday, 9 to 5.", "answer passed by the reviewer")
    flipped = build_corpus_patch(answered, None, [report("input_variations", ["m1:open~t1"])])
    assert flipped.entries == [] and flipped.skipped == ["m1:open~t1: test case 'open' has no expected answer"]


def test_a_version_1_patch_loads_with_expected_answers() -> None:
    written = build_corpus_patch(BASELINE, CALIBRATION, []).model_dump(mode="json")
    written["schema_version"] = 1
    for entry in written["entries"]:
        del entry["answer_source"]
    old = CorpusPatch.model_validate(written)
    assert {entry.answer_source for entry in old.entries} == {"expected answer"}


def test_markdown_groups_entries_by_topic() -> None:
    by_ana = CALIBRATION.model_copy(
        update={"human_passed_failures": ["m1:isa", "m1:rate", "m1:fee"], "decided_by": "person", "reviewers": ["ana"]}
    )
    patch = build_corpus_patch(BASELINE, by_ana, [], title="Bank FAQ")
    assert patch.entries[0].reasons == ["failed by an automated metric but passed by the reviewer (ana)"]
    assert [entry.answer_source for entry in patch.entries] == ["answer passed by the reviewer"] * 3
    assert patch.markdown() == (
        "# Bank FAQ\n"
        "\n"
        "Generated by Assay from run baseline: questions that were hard to answer, with their correct answers.\n"
        "\n"
        "## cards\n"
        "\n"
        "Q: What is the card replacement fee?\n"
        "A: A replacement card costs £25.\n"
        "\n"
        "## savings\n"
        "\n"
        "Q: What rate does the saver pay?\n"
        "A: The saver pays 2.5% AER.\n"
        "\n"
        "## Other questions\n"
        "\n"
        "Q: Can I open an ISA online?\n"
        "A: Yes: open it in the app.\n"
    )


def test_nothing_found_gives_an_empty_patch() -> None:
    patch = build_corpus_patch(BASELINE, None, [report("input_variations", [])])
    assert patch.entries == [] and patch.skipped == []
    assert CorpusPatch.model_validate_json(patch.model_dump_json()) == patch
