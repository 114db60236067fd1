"""The ZIP archive in the manual's layout and the CSV export."""

import csv
import io
import json
import zipfile
from pathlib import Path

from assay.artifacts.report.exports import results_csv, write_zip
from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import read_folder

from tests.artifacts.report.report_lab import build_run


def test_zip_layout_and_csv(tmp_path: Path) -> None:
    run = read_folder(build_run(tmp_path / "run"))
    html, interpretation = render_report(run)
    names = zipfile.ZipFile(write_zip(run, html, interpretation, tmp_path / "run.zip")).namelist()
    folder = "explainer_assay_evaluators_pii_leakage_run-report-1"
    assert {"interpretation.html", "interpretation.json"} <= set(names)
    for relative in ("global_llm_eval_results/application_json/explanation.json",
                     "global_llm_eval_results/text_csv/explanation.csv",
                     "global_llm_heatmap_leaderboard/application_json/explanation.json",
                     "global_llm_heatmap_leaderboard/text_markdown/explanation.md",
                     "global_html_fragment/text_html/explanation.html", "insights/insights_and_actions.json",
                     "problems/problems_and_actions.json", "result_descriptor.json"):  # fmt: skip
        assert f"{folder}/{relative}" in names
    archive = zipfile.ZipFile(tmp_path / "run.zip")
    assert json.loads(archive.read("interpretation.json"))["overview"]["run_id"] == "run-report-1"
    rows = list(csv.DictReader(io.StringIO(results_csv(run))))
    assert len(rows) == 6 * (5 + 4 + 3)
    unscored = [r for r in rows if r["evaluator"] == "text_matching" and r["test_case_key"] == "tc-3"]
    assert unscored and all(r["score"] == "" and r["verdict"] == "unscored" and r["unscored_reason"] for r in unscored)
    leak = next(
        r for r in rows if r["metric"] == "model_passes" and r["model"] == "leaky" and r["test_case_key"] == "tc-2"
    )
    assert (leak["score"], leak["verdict"], leak["threshold"]) == ("0.0", "failed", "0.5")
