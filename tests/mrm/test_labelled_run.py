"""A real ``assay mrm run --non-interactive --approvals FILE`` whose approvals file labels answers: the
calibration output carries each metric's agreement with those labels, credited to the file's reviewer, and
the exported HTML report shows them in its "Evaluator validity" section.

Review item ids ('<evaluator>/<metric>/<model>/<case>') are known only once a run has sampled them, and they
are the same for the same corpus, hosts, evaluators, parameters and seed: a first run without approvals
(policy decisions, nobody labels) writes ``calibration/review_items.json``; the approvals file labels those
items and a second run, a new run in a new folder, uses it (a label naming an item the run did not offer
would fail the run). Both runs share one temporary Prefect server and an Assay home of their own."""

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.processes import small_corpus
from tests.support.prefect_server import PrefectServer
from tests.support.reports import interval_text, report_section, visible_text

pytestmark = pytest.mark.slow
REVIEWER = "Ana Lima"
EVALUATORS = ("text_matching", "answer_semantic_similarity")
runner = CliRunner()


def _run(corpus: Path, out: Path, approvals: Path | None = None) -> Path:
    arguments = ["mrm", "run", "--non-interactive", "--corpus", str(corpus), "--out", str(out)]
    arguments += [part for evaluator in EVALUATORS for part in ("--evaluator", evaluator)]
    arguments += ["--per-topic-per-generator", "1", "--variation", "comma", "--adversarial", "base64"]
    arguments += ["--approvals", str(approvals)] if approvals else []
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    return out


def _approvals(items: list[dict[str, Any]], path: Path) -> Path:
    """The reviewer agrees with every verdict but the last of each metric (so both labels occur wherever the
    sample has both verdicts) and skips each metric's first item."""
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_metric.setdefault(f"{item['evaluator_id']}/{item['metric']}", []).append(item)
    passed, failed = [], []
    for offered in by_metric.values():
        for index, item in enumerate(offered[1:], start=1):
            passes = item["metric_passes"] != (index == len(offered) - 1)
            (passed if passes else failed).append(item["item_id"])
    path.write_text(
        json.dumps({"reviewer": REVIEWER, "calibration": {"passed_item_ids": passed, "failed_item_ids": failed}}),
        encoding="utf-8",
    )
    return path


@dataclass(frozen=True)
class Runs:
    """The two runs of the module and what the second one showed in the Prefect UI."""

    unlabelled: Path  # export folders
    labelled: Path
    approvals: Path
    calibration_summary: str  # the labelled run's calibration summary in the Prefect UI's Artifacts tab


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, prefect_server: PrefectServer) -> Iterator[Runs]:
    from prefect.artifacts import Artifact

    base = tmp_path_factory.mktemp("labelled-run")
    corpus = small_corpus(base / "corpus")
    with pytest.MonkeyPatch.context() as patch, prefect_server.reporting():
        patch.setenv("ASSAY_HOME", str(base / "home"))
        unlabelled = _run(corpus, base / "unlabelled")
        items = json.loads((unlabelled / "calibration" / "review_items.json").read_text())
        approvals = _approvals(items, base / "approvals.json")
        labelled = _run(corpus, base / "labelled", approvals)
        summary = Artifact.get("mrm-5-calibration-summary")  # the latest: the labelled run's
        assert summary is not None and isinstance(summary.data, str)
        yield Runs(unlabelled, labelled, approvals, summary.data)


def _labels(approvals: Path) -> dict[str, bool]:
    chosen = json.loads(approvals.read_text())["calibration"]
    return {**dict.fromkeys(chosen["passed_item_ids"], True), **dict.fromkeys(chosen["failed_item_ids"], False)}


def test_the_calibration_output_carries_the_approvals_reviewers_validity_figures(runs: Runs) -> None:
    labelled = runs.labelled
    summary = json.loads((labelled / "workflow_summary.json").read_text())
    taken = {d["step"]: (d["decided_by"], d["source"], d["reviewer"]) for d in summary["decisions"]}
    assert taken.pop("calibration") == ("person", "approvals-file", REVIEWER)
    assert set(taken.values()) == {("policy", "policy", "")}  # the file decides calibration only
    assert summary["run_id"] != json.loads((runs.unlabelled / "workflow_summary.json").read_text())["run_id"]

    labels = _labels(runs.approvals)
    per_metric = Counter("/".join(item_id.split("/")[:2]) for item_id in labels)
    acceptable = Counter("/".join(item_id.split("/")[:2]) for item_id, passes in labels.items() if passes)
    calibration = json.loads((labelled / "calibration" / "calibration.json").read_text())
    assert (calibration["decided_by"], calibration["reviewers"]) == ("person", [REVIEWER])
    figures = {f"{m['evaluator_id']}/{m['metric']}": m["validity"] for m in calibration["metrics"]}
    assert set(figures) == set(per_metric) and {key.split("/")[0] for key in figures} == set(EVALUATORS)
    for key, validity in figures.items():
        assert validity["labelled_by"] == [REVIEWER], key
        assert (validity["n"], validity["acceptable"]) == (per_metric[key], acceptable[key]), key
        assert 0 <= validity["before"]["accuracy"] <= 1 and 0 <= validity["after"]["accuracy"] <= 1
        if 0 < acceptable[key] < per_metric[key]:  # two classes of labels: the AUC and its interval exist
            assert validity["auc_low"] <= validity["auc"] <= validity["auc_high"], key
    stored = json.loads((labelled / "calibration" / "labels.json").read_text())
    assert {label["item_id"]: label["human_passes"] for label in stored} == labels
    assert {label["reviewer"] for label in stored} == {REVIEWER}


def test_a_run_nobody_labelled_has_no_validity_figures(runs: Runs) -> None:
    unlabelled = runs.unlabelled
    calibration = json.loads((unlabelled / "calibration" / "calibration.json").read_text())
    assert (calibration["decided_by"], calibration["reviewers"]) == ("no reviewer", [])
    assert [metric["validity"] for metric in calibration["metrics"]] == [None] * len(calibration["metrics"])
    text = visible_text(report_section((unlabelled / "interpretation.html").read_text(), "mrm-validity"))
    assert "No reviewer labelled answers in this run" in text and "reviewer labels (" not in text


def test_the_exported_report_shows_the_figures_credited_to_the_reviewer(runs: Runs) -> None:
    labelled = runs.labelled
    run_id = json.loads((labelled / "run.json").read_text())["run_id"]
    section = report_section((labelled / "interpretation.html").read_text(encoding="utf-8"), "mrm-validity")
    assert section.lstrip().startswith("<h2>Evaluator validity</h2>")
    assert f"Labels given by {REVIEWER} via approvals-file in step 5." in visible_text(section)
    calibration = json.loads((labelled / "calibration" / "calibration.json").read_text())
    for metric in calibration["metrics"]:
        validity = metric["validity"]
        key = f"{metric['evaluator_id']}/{metric['metric']}"
        row = section.split(f'<tr data-metric="{key}">', 1)[1].split("</tr>", 1)[0]
        before, after = validity["before"], validity["after"]
        assert visible_text(row).split(" ", 3)[3] == " ".join(
            [
                f"{validity['n']} ({validity['acceptable']})",
                interval_text(validity["auc"], validity["auc_low"], validity["auc_high"]),
                interval_text(before["accuracy"], before["accuracy_low"], before["accuracy_high"]),
                f"at {before['threshold']:.3f}",
                interval_text(after["accuracy"], after["accuracy_low"], after["accuracy_high"]),
                f"at {after['threshold']:.3f}" + (" *" if validity["refitted"] else ""),
                _changed_cell(validity),
                f"reviewer labels ({REVIEWER}), MRM step 5, run {run_id}",
            ]
        ), key


def test_the_calibration_summary_in_the_prefect_ui_shows_the_same_figures(runs: Runs) -> None:
    calibration = json.loads((runs.labelled / "calibration" / "calibration.json").read_text())
    assert f"- labelled by {REVIEWER} via approvals-file" in runs.calibration_summary
    lines = runs.calibration_summary.split("\n")
    for metric in calibration["metrics"]:
        validity = metric["validity"]
        auc = interval_text(validity["auc"], validity["auc_low"], validity["auc_high"])
        line = f"- {metric['evaluator_id']} / {metric['metric']}: AUC {auc}; "
        shown = [text for text in lines if text.startswith(line)]
        changed = (
            ", every label confirms the metric's verdict (no independent evidence)"
            if validity["changed"] == 0
            else f", {validity['changed']} changed from the metric's verdict"
        )
        ending = f"; n {validity['n']} ({validity['acceptable']} acceptable){changed}; labels by {REVIEWER}"
        assert len(shown) == 1 and shown[0].endswith(ending), (line, lines)


def _changed_cell(validity: dict) -> str:
    """The report's 'labels changed from the metric's verdict' cell for one metric."""
    if validity["changed"] == 0:
        return "0 (all confirm: no independent evidence)"
    return f"{validity['changed']} of {validity['n']}"


def test_the_report_names_each_decisions_artifact_version_as_run_json_lists_it(runs: Runs) -> None:
    record = json.loads((runs.labelled / "run.json").read_text())
    listed = {entry["step"]: entry for entry in record["decisions"]}
    assert set(listed) == {"topic-modeling", "test-validation", "calibration", "failure-clustering"}
    report = (runs.labelled / "interpretation.html").read_text(encoding="utf-8")
    report = report.split('class="mrm-decisions"', 1)[1]  # the overview's table (the executive one is shorter)
    for step, entry in listed.items():
        row = report.split(f'<tr data-step="{step}">', 1)[1].split("</tr>", 1)[0]
        assert f"{entry['artifact']} v{entry['version']}, sha256 {entry['sha256'][:12]}" in visible_text(row), step
