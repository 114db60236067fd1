"""Flip counting of the robustness steps on a hand-made baseline and perturbed lab."""

from assay.evaluators import build_evaluator, run_evaluator

from assay.models import ModelHost, Relationship, TestCase, TestLab, TestLabRow
from assay.mrm.robustness import flip_reports

CONDITION = '"£25"'


def case(key: str, *, perturbed_from: str | None = None, perturbator: str = "", topic: str = "cards") -> TestCase:
    relationships = [Relationship(type="perturbation", target=perturbed_from)] if perturbed_from else []
    categories = ["perturbed", f"perturbator:{perturbator}", "intensity:medium"] if perturbed_from else []
    return TestCase(
        key=key,
        prompt=f"q {key}",
        output_condition=CONDITION,
        relationships=relationships,
        categories=categories,
        topic=topic,
        generator="numerical",
    )


def lab(rows: list[TestLabRow]) -> TestLab:
    return TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)


def test_flips_are_counted_by_perturbator_topic_and_generator() -> None:
    baseline = lab(
        [
            TestLabRow(test_case=case("a"), model_key="m", actual_output="£25"),
            TestLabRow(test_case=case("b"), model_key="m", actual_output="no idea"),
        ]
    )
    perturbed = lab(
        [
            TestLabRow(
                test_case=case("a~typos", perturbed_from="a", perturbator="typos"), model_key="m", actual_output="hm"
            ),
            TestLabRow(
                test_case=case("b~typos", perturbed_from="b", perturbator="typos"), model_key="m", actual_output="£25"
            ),
            TestLabRow(
                test_case=case("a~swap", perturbed_from="a", perturbator="word_swap"),
                model_key="m",
                actual_output="£25",
            ),
            TestLabRow(
                test_case=case("b~swap", perturbed_from="b", perturbator="word_swap"), model_key="m", error="down"
            ),
        ]
    )
    evaluator = build_evaluator("text_matching")
    (report,) = flip_reports(
        "input_variations", perturbed, [run_evaluator(evaluator, perturbed)], [run_evaluator(evaluator, baseline)]
    )
    assert report.metric == "model_passes"
    typos, swap = report.by_perturbator["typos"], report.by_perturbator["word_swap"]
    assert (typos.cases, typos.flips, typos.pass_to_fail, typos.fail_to_pass) == (2, 2, 1, 1)
    assert (swap.cases, swap.flips) == (1, 0)  # the failed host call is not a case, let alone a flip
    assert report.by_topic["cards"].flips == 2 and report.by_generator["numerical"].cases == 3
    assert report.flipped_row_keys == ["m:a~typos", "m:b~typos"]


def test_calibrated_thresholds_decide_the_flips() -> None:
    baseline = lab([TestLabRow(test_case=case("a"), model_key="m", actual_output="£25")])
    perturbed = lab(
        [
            TestLabRow(
                test_case=case("a~t", perturbed_from="a", perturbator="typos"), model_key="m", actual_output="nothing"
            )
        ]
    )
    evaluator = build_evaluator("text_matching")
    results = [run_evaluator(evaluator, perturbed)], [run_evaluator(evaluator, baseline)]
    assert flip_reports("adversarial", perturbed, *results)[0].by_perturbator["typos"].flips == 1
    never_fails = {("text_matching", "model_passes"): 0.0}
    assert flip_reports("adversarial", perturbed, *results, never_fails)[0].by_perturbator["typos"].flips == 0
