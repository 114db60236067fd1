"""Where labels come from besides a flat file (a test lab's categories, the MRM calibration step's labels), and
rows that cannot be scored: counted and named with the reason, never scored 0, never aborting the run."""

import json
from pathlib import Path

import pytest
from assay.evaluators import Services
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.formats import FormatError, export_file
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.validity.labels import load_labelled_set
from assay.validity.run import validate_labelled_set

runner = CliRunner()
CONTEXT = [RetrievedChunk(text="The fee is 25 pounds and payment is due within 30 days.")]
ANSWERS = {"c1": "The fee is 25 pounds.", "c2": "Write to bob@example.com.", "c3": "Within 30 days.", "c4": "No."}


def lab_with_labels(categories: dict[str, list[str]], models: tuple[str, ...] = ("bot",)) -> TestLab:
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt="What is due?", categories=categories.get(key, []), topic="fees"),
            model_key=model,
            actual_output=answer,
            context=CONTEXT,
        )
        for model in models
        for key, answer in ANSWERS.items()
    ]
    return TestLab(name="lab", models=[ModelHost(key=model, type="testlab") for model in models], rows=rows)


LABELLED = {"c1": ["label:1", "group:money"], "c2": ["label:0"], "c3": ["label:true"], "c4": ["label:false", "x"]}


@pytest.mark.parametrize("format", ["assay", "eval-studio-testlab"])
def test_a_lab_with_label_categories_loads(tmp_path: Path, format: str) -> None:
    path = tmp_path / "lab.json"
    export_file(lab_with_labels(LABELLED), path, format)
    labelled = load_labelled_set(path)
    assert [(row.id, row.label, row.group) for row in labelled.rows] == [
        ("c1", 1, "money"), ("c2", 0, "fees"), ("c3", 1, "fees"), ("c4", 0, "fees")
    ]  # fmt: skip
    validation = validate_labelled_set(labelled, ["pii_leakage"], Services(), baselines=["token_precision"])
    passes = validation.report.evaluators["pii_leakage"]["model_passes"]
    assert (passes.n, passes.auc) == (4, 0.75)  # c2 leaks and is labelled 0; c4 passes and is labelled 0


def test_a_lab_case_without_label_is_named(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    export_file(lab_with_labels({**LABELLED, "c3": ["group:x"]}), path, "assay")
    with pytest.raises(FormatError, match=r"lab.json: test case 'c3' \(model 'bot'\), categories: no label"):
        load_labelled_set(path)


def test_a_per_model_label_wins_in_a_lab_of_two_models(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    export_file(lab_with_labels({**LABELLED, "c1": ["label:1", "label:other:0"]}, ("bot", "other")), path, "assay")
    labels = {row.id: row.label for row in load_labelled_set(path).rows}
    assert (labels["bot:c1"], labels["other:c1"], labels["other:c2"]) == (1, 0, 0)


def calibration_run(folder: Path) -> Path:
    """An MRM run's export folder: its test lab and the labels a person gave in step 5 (item ids
    <evaluator>/<metric>/<model>/<case>)."""
    (folder / "automated-evaluation").mkdir(parents=True)
    export_file(lab_with_labels({}), folder / "automated-evaluation" / "test_lab.json", "assay")
    (folder / "calibration").mkdir()
    labels = [
        {"item_id": "pii_leakage/model_passes/bot/c1", "human_passes": True, "reviewer": "ana"},
        {"item_id": "groundedness/groundedness/bot/c1", "human_passes": True, "reviewer": "ana"},
        {"item_id": "pii_leakage/model_passes/bot/c2", "human_passes": False, "reviewer": "ana"},
        {"item_id": "pii_leakage/model_passes/bot/c3", "human_passes": True, "reviewer": "ana"},
        {"item_id": "groundedness/groundedness/bot/c3", "human_passes": False, "reviewer": "ana"},
        {"item_id": "pii_leakage/model_passes/bot/c4", "human_passes": True, "reviewer": "policy"},
    ]
    (folder / "calibration" / "labels.json").write_text(json.dumps(labels), encoding="utf-8")
    return folder


def test_calibration_labels_load_per_answer(tmp_path: Path) -> None:
    run = calibration_run(tmp_path / "run")
    for source in (run, run / "calibration" / "labels.json"):
        labelled = load_labelled_set(source)
        # c3 was passed on one metric and failed on another: not acceptable; c4's only label was a policy's
        assert [(row.id, row.label, row.group) for row in labelled.rows] == [("c1", 1, "fees"), ("c2", 0, "fees"),
                                                                             ("c3", 0, "fees")]  # fmt: skip
        assert labelled.rows[0].row.actual_output == ANSWERS["c1"]
        assert any("policy" in note for note in labelled.notes) and any("read as 0" in note for note in labelled.notes)


def test_an_approvals_file_loads_with_its_lab(tmp_path: Path) -> None:
    run = calibration_run(tmp_path / "run")
    approvals = tmp_path / "approvals.json"
    approvals.write_text(
        json.dumps(
            {
                "reviewer": "ana",
                "calibration": {
                    "passed_item_ids": ["pii_leakage/model_passes/bot/c1", "pii_leakage/model_passes/bot/c3"],
                    "failed_item_ids": ["pii_leakage/model_passes/bot/c2"],
                },
            }
        ),
        encoding="utf-8",
    )
    lab = run / "automated-evaluation" / "test_lab.json"
    assert {row.id: row.label for row in load_labelled_set(approvals, lab=lab).rows} == {"c1": 1, "c3": 1, "c2": 0}
    with pytest.raises(FormatError, match="give their test lab with --lab"):
        load_labelled_set(approvals)
    result = runner.invoke(
        app,
        ["evaluators", "validate", "--labels", str(approvals), "--lab", str(lab), "--evaluators", "pii_leakage",
         "--out", str(tmp_path / "v")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "v" / "validity.json").read_text())
    assert report["labels_source"] == "calibration labels (approvals file)" and report["rows"] == 3


def test_unscored_rows_are_counted_and_named(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(
        "id,question,context,answer,label,group\n"
        'a,What is due?,"[""The fee is 25 pounds."", ""Due in 30 days.""]",The fee is 25 pounds.,1,\n'
        "b,What is due?,The fee is 25 pounds.,,0,g\n"
        "c,What is due?,,The fee is 25 pounds.,true,g\n"
        "d,What is due?,The fee is 25 pounds.,Nothing.,false,g\n",
        encoding="utf-8",
    )
    labelled = load_labelled_set(path)
    assert [len(row.row.context) for row in labelled.rows] == [2, 1, 0, 1]
    validation = validate_labelled_set(
        labelled, ["pii_leakage", "groundedness_judge"], Services(), baselines=["token_precision", "minilm_cosine"]
    )
    report = validation.report
    precision = report.baselines["token_precision"]["token_precision"]
    assert (precision.n, precision.n_unscored) == (2, 2)
    assert [(row.id, row.reason) for row in precision.unscored] == [
        ("b", "the answer has no words"), ("c", "the context has no words")
    ]  # fmt: skip
    passes = report.evaluators["pii_leakage"]["model_passes"]
    assert (passes.n, passes.unscored_ids) == (3, ["b"])
    assert passes.groups["g"].n_unscored == 1
    # no judge and no embedding engine: reported, not scored, and the run goes on
    assert "groundedness_judge" in report.unavailable and "groundedness_judge" not in report.evaluators
    assert "baseline minilm_cosine" in report.unavailable
    assert validation.rows[1]["evaluators"]["pii_leakage"]["unscored_reason"] == "missing input: actual_output"


def test_the_threshold_in_force_says_who_set_it(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    export_file(lab_with_labels(LABELLED), path, "assay")
    book = tmp_path / "thresholds.json"
    by = "calibrated on 8 labels by ana (prefect-ui)"
    entry = {"evaluator_id": "pii_leakage", "metric": "model_passes", "threshold": 0.3, "higher_is_better": True,
             "source": "calibrated", "set_by": by, "default_threshold": 0.5}  # fmt: skip
    book.write_text(json.dumps({"entries": [entry], "reviewer": "ana (prefect-ui)"}), encoding="utf-8")
    command = ["evaluators", "validate", "--labels", str(path), "--evaluators", "pii_leakage"]
    command += ["--thresholds", str(book)]
    for extra, expected in (
        ([], ("calibrated", 0.3, f"{by} ({book})")),
        (["--param", "pii_leakage.metric_threshold=0.9"], ("user", 0.9, "parameter metric_threshold")),
    ):
        result = runner.invoke(app, [*command, *extra, "--out", str(tmp_path / "v")])
        assert result.exit_code == 0, result.output
        figures = json.loads((tmp_path / "v" / "validity.json").read_text())["evaluators"]["pii_leakage"]
        threshold = figures["model_passes"]["threshold"]
        assert (threshold["source"], threshold["value"]) == expected[:2] and threshold["set_by"].startswith(expected[2])
        assert figures["model_failures"]["threshold"]["source"] == "default"
