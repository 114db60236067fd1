"""A tiny evaluated run for the report tests: two models, three cases, cheap evaluators, through the real
evaluate code path (run_evaluator + publish_evaluation), hostile text optional."""

from pathlib import Path

from assay.artifacts.publish import publish_evaluation
from assay.evaluators import build_evaluator, run_evaluator

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.lab import RetrievedChunk

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(1)><b>bold</b>\x1b[31mred\x1b[0m"
EVALUATORS = ("text_matching", "pii_leakage", "token_count")


def build_run(folder: Path, *, hostile: bool = False, run_id: str = "run-report-1") -> Path:
    cases = [
        TestCase(key="tc-1", prompt="What is the fee?", expected_output="The fee is 5 pounds.", output_condition='"5"'),
        TestCase(key="tc-2", prompt="Who do I call?", expected_output="Call 020 7946 0958.", output_condition='"call"'),
        TestCase(
            key="tc-3", prompt=HOSTILE if hostile else "Is it free?", expected_output=HOSTILE if hostile else "No."
        ),
    ]
    answers = {
        "good": ["The fee is 5 pounds.", "Please call us.", HOSTILE if hostile else "No."],
        "leaky": ["It costs 7 pounds.", "Call 020 7946 0958 now.", ("A" * 1_000_000 + HOSTILE) if hostile else "Yes."],
    }
    rows = [
        TestLabRow(
            test_case=case,
            test_key="t",
            model_key=model,
            actual_output=answers[model][index],
            context=[RetrievedChunk(text=HOSTILE if hostile else "The fee is 5 pounds.", doc_uri="fees.md")],
            actual_duration=0.1,
            input_tokens=10,
            output_tokens=5,
        )
        for model in answers
        for index, case in enumerate(cases)
    ]
    models = [ModelHost(key="good", type="sample-rag", name="Good RAG"), ModelHost(key="leaky", type="sample-rag")]
    lab = TestLab(name="Report lab", models=models, rows=rows)
    results = [run_evaluator(build_evaluator(evaluator_id), lab) for evaluator_id in EVALUATORS]
    publish_evaluation(lab, results, out_dir=folder, artifact_store=None, evaluation_name="report", run_id=run_id)
    return folder


SAMPLE_SIZED_EVALUATORS = (*EVALUATORS, "latency", "looping_detection", "sensitive_data_leakage", "bleu", "rouge")


def build_sample_sized_run(folder: Path, *, cases: int = 120, run_id: str = "run-sample-sized") -> Path:
    """A run the size of the sample bank's MRM evaluation: ``cases`` cases, two models, three retrieved
    chunks a row, answers and chunks as long as the sample's, eight cheap evaluators."""
    chunk = "Harbourline Bank charges a fee of 5 pounds for a replacement card, waived for the Classic account. " * 7
    tests = [
        TestCase(key=f"tc-{index}", prompt=f"What is the fee for service {index}?", expected_output=chunk[:400])
        for index in range(cases)
    ]
    rows = [
        TestLabRow(
            test_case=case,
            test_key="t",
            model_key=model,
            actual_output=f"{model} answer {index}: " + chunk[:240],
            context=[RetrievedChunk(text=chunk, doc_uri=f"doc-{part}.md") for part in range(3)],
            actual_duration=0.1 + index / 100,
            input_tokens=300,
            output_tokens=40,
        )
        for model in ("good", "leaky")
        for index, case in enumerate(tests)
    ]
    models = [ModelHost(key="good", type="sample-rag", name="Good RAG"), ModelHost(key="leaky", type="sample-rag")]
    lab = TestLab(name="Sample-sized lab", models=models, rows=rows)
    results = [run_evaluator(build_evaluator(evaluator_id), lab) for evaluator_id in SAMPLE_SIZED_EVALUATORS]
    publish_evaluation(lab, results, out_dir=folder, artifact_store=None, evaluation_name="sized", run_id=run_id)
    return folder
