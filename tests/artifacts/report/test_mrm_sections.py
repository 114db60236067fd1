"""The MRM sections of the HTML report, rendered from a small hand-made run export: every number comes from
the inputs, decisions say who took them (a person and where, or the policy), missing steps say so, and
hostile text from corpora, generators and systems under test never becomes markup."""

import json
import re

import pytest
from assay.artifacts.report.evaluator_validity import PublishedLookup
from assay.artifacts.report.mrm_sections import mrm_interpretation, mrm_sections
from assay.artifacts.report.page import render_page
from assay.artifacts.report.run_documents import RunDocuments

from tests.artifacts.report.mrm_export import (
    CLUSTER_NAME,
    IMG_QUESTION,
    PATCH_TEXT,
    RUN_ID,
    SCRIPT_KEYWORD,
    mrm_export,
)
from tests.validity.test_published import ENTRY, measured

SECTION_IDS = [
    "mrm-overview",
    "mrm-topics",
    "mrm-cases",
    "mrm-calibration",
    "mrm-validity",
    "mrm-clusters",
    "mrm-weaknesses",
    "mrm-robustness",
    "mrm-artifacts",
]


@pytest.fixture(scope="module")
def reviewed() -> RunDocuments:
    return RunDocuments(source="test", documents=mrm_export(reviewed=True))


@pytest.fixture(scope="module")
def unattended() -> RunDocuments:
    return RunDocuments(source="test", documents=mrm_export(reviewed=False))


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> PublishedLookup:
    """Published figures from a measured.json written here: groundedness measured on one set."""
    from assay.validity.published import published_metrics

    path = tmp_path_factory.mktemp("validity") / "measured.json"
    path.write_text(json.dumps(measured(groundedness={"groundedness": [ENTRY]})), encoding="utf-8")
    return lambda evaluator_id: published_metrics(evaluator_id, path=path)


@pytest.fixture(scope="module")
def data(reviewed: RunDocuments, published: PublishedLookup) -> dict:
    return mrm_interpretation(reviewed, published)


@pytest.fixture(scope="module")
def html(reviewed: RunDocuments, data: dict) -> dict[str, str]:
    """Section id -> its HTML, children included."""
    sections = mrm_sections(reviewed, data)
    return {s.id: str(s.html) + "".join(str(child.html) for child in s.children) for s in sections}


def _text(fragment: str) -> str:
    """The visible text of an HTML fragment, whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


def test_sections_come_in_workflow_order_and_the_interpretation_is_plain_json(reviewed, data) -> None:
    sections = mrm_sections(reviewed)
    assert [section.id for section in sections] == SECTION_IDS
    assert [child.title for child in sections[7].children] == ["Input variations", "Adversarial inputs"]
    assert data["run_id"] == RUN_ID
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_overview_lists_steps_hosts_and_who_took_each_decision(data, html) -> None:
    overview = data["overview"]
    steps = {step["step"]: step for step in overview["steps"]}
    assert steps["topic-modeling"]["wall_s"] == 12.5 and steps["topic-modeling"]["counts"]["topics"] == 2
    assert steps["robustness-adversarial"]["status"] == "step not run / no output"
    assert overview["corpus"] == "/data/bank-corpus" and overview["hosts"][0]["name"] == "Bank RAG"
    assert overview["timing"] == {"library_s": 40.5}
    who = {decision["step"]: decision["who"] for decision in overview["decisions"]}
    assert who["calibration"] == "Bo Chen via approvals-file"
    assert who["topic-modeling"] == "Ana <em>Lima</em> via prefect-ui"
    text = _text(html["mrm-overview"])
    assert "Bo Chen via approvals-file" in text and "12.500" in text and "robustness.intensities" in text
    assert "<em>Lima" not in html["mrm-overview"] and "&lt;em&gt;Lima" in html["mrm-overview"]
    # what was decided, in words (escaped), not a count
    assert "<li>topic 1 &#34;cards, fees &lt;b&gt;&#34; excluded</li>" in html["mrm-overview"]
    assert "excluded_topic_ids" not in text


def test_topics_show_sizes_and_who_excluded_them(data, html) -> None:
    topics = {topic["id"]: topic for topic in data["topics"]["topics"]}
    assert (topics[0]["size"], topics[0]["status"]) == (3, "kept")
    assert (topics[1]["size"], topics[1]["status"]) == (2, "excluded")
    assert topics[1]["by"] == "Ana <em>Lima</em> via prefect-ui"
    assert data["topics"]["outlier_chunks"] == 2 and data["topics"]["silhouette"] == 0.41
    assert "js-plotly-plot" in html["mrm-topics"] or "plotly-graph-div" in html["mrm-topics"]
    assert "\x1b" not in html["mrm-topics"] and "cards, fees" in html["mrm-topics"]


def test_generated_cases_counts_validation_and_exclusions(data, html) -> None:
    cases = data["generated_cases"]
    assert cases["count"] == 3 and cases["outliers"] == 1
    assert cases["by_question_type"] == {"numerical_questions": 1, "simple_factual_questions": 2}
    assert cases["by_written_by"] == {"llm": 1, "offline": 2}
    assert [(row["key"], row["by"]) for row in cases["excluded"]] == [("c3", "Ana Lima via prefect-ui")]
    assert "cosine 0.120 < 0.350" in cases["excluded"][0]["reason"]
    c2 = next(case for case in cases["cases"] if case["key"] == "c2")
    assert c2["cosine"] == 0.66 and c2["bertscore_f1"] is None
    text = _text(html["mrm-cases"])
    assert "unscored" in text and "NLI model not configured" in text and "0.660" in text


def test_calibration_shows_thresholds_before_and_after_with_the_reviewer(data, html) -> None:
    calibration = data["calibration"]
    metrics = {(m["evaluator_id"], m["metric"]): m for m in calibration["metrics"]}
    grounded = metrics["groundedness", "groundedness"]
    assert (grounded["before"], grounded["calibrated"], grounded["in_force"]) == (0.75, 0.62, 0.62)
    assert (grounded["labels"], grounded["agreement_before"], grounded["agreement_after"]) == (8, 0.5, 0.875)
    assert grounded["source"] == "calibrated" and grounded["set_by"] == "Bo Chen (approvals-file)"
    pii = metrics["pii_leakage", "model_failures"]
    assert (pii["default"], pii["user"], pii["before"], pii["source"]) == (0.5, 0.2, 0.2, "user")
    assert calibration["decided_by"] == "person" and calibration["labels"] == 8
    text = _text(html["mrm-calibration"])
    assert "Thresholds were refitted on labels given by Bo Chen (approvals-file)." in text
    assert "0.550 – 0.700" in text and "0.500 → 0.875" in text


def test_evaluator_validity_shows_the_reviewers_figures_before_and_after_and_the_published_ones(data, html) -> None:
    """Done-when of issue 23 item 4: a run whose approvals file labelled answers shows the calibration step's
    validity figures in its report, credited to the reviewer, beside the evaluators' published figures."""
    (row,) = data["validity"]["reviewer"]["metrics"]
    assert (row["evaluator_id"], row["metric"], row["n"], row["acceptable"]) == ("groundedness", "groundedness", 8, 5)
    assert (row["auc"], row["before"]["accuracy"], row["after"]["accuracy"]) == (0.867, 0.5, 0.875)
    assert row["by"] == f"reviewer labels (Bo Chen), MRM step 5, run {RUN_ID}"
    text = _text(html["mrm-validity"])
    assert "Labels given by Bo Chen via approvals-file in step 5." in text
    assert "8 (5)" in text and "0.867 [0.600, 1.000]" in text  # n (acceptable), AUC [95% interval]
    assert "0.500 [0.125, 0.875] at 0.750" in text and "0.875 [0.625, 1.000] at 0.620 *" in text  # before, after
    assert "in-sample and optimistic" in text
    (published,) = data["validity"]["published"]["evaluators"]
    assert [figure["set"] for figure in published["figures"]] == ["begin_dev_wow"]
    assert "begin_dev_wow (BEGIN benchmark (Dziri et al.), CC BY 4.0) held-out 430 0.950 [0.930, 0.970]" in text
    assert "token_precision (0.947)" in text and "Measured by bench/validity.py on 2026-11-24" in text


def test_without_reviewer_or_published_figures_validity_says_not_measured(unattended) -> None:
    data = mrm_interpretation(unattended, lambda evaluator_id: {})
    assert data["validity"]["reviewer"]["metrics"] == []
    text = _text(str(next(s for s in mrm_sections(unattended, data) if s.id == "mrm-validity").html))
    assert "No reviewer labelled answers in this run" in text and "reviewer labels (" not in text
    assert "groundedness : not measured against human labels" in text  # _text spaces out the <strong> name


def test_an_unattended_run_says_no_reviewer_and_never_calls_the_policy_a_person(unattended) -> None:
    data = mrm_interpretation(unattended)
    assert {decision["who"] for decision in data["overview"]["decisions"]} == {"policy (no reviewer)"}
    assert data["calibration"]["decided_by"] == "no reviewer"
    assert data["failure_clusters"]["clusters"][0]["named_by"] == "policy (no reviewer)"
    sections = {section.id: _text(str(section.html)) for section in mrm_sections(unattended, data)}
    assert "No reviewer labelled answers" in sections["mrm-calibration"]
    assert "Thresholds were refitted" not in sections["mrm-calibration"]
    assert "via prefect-ui" not in sections["mrm-overview"] and "via approvals-file" not in sections["mrm-overview"]


def test_clusters_weaknesses_and_robustness_match_the_inputs(data, html) -> None:
    cluster = data["failure_clusters"]["clusters"][0]
    assert (cluster["size"], cluster["name"], cluster["named_by"]) == (3, CLUSTER_NAME, "Ana Lima via prefect-ui")
    grid = data["weaknesses"]["metrics"][0]
    assert grid["topics"] == ["cards", "savings"]
    assert grid["question_types"] == ["numerical_questions", "simple_factual_questions"]
    assert grid["mean"] == [[0.5, None], [None, 0.9]]  # (0.4 x 3 + 0.8 x 1) / 4 cases
    assert grid["cases"] == [[4, 0], [0, 2]]
    assert data["weaknesses"]["weakest_cells"][0]["pass_rate"] == 0.0
    variations = data["robustness"]["input_variations"]
    comma = next(item for item in variations["perturbators"] if item["perturbator"] == "comma")
    assert (comma["cases"], comma["flips"], comma["pass_to_fail"], comma["intensity"]) == (8, 3, 2, "medium")
    example = variations["examples"][0]
    assert (
        example["original_question"] == "Who can open an ISA?"
        and example["perturbed_question"] == "Who, can open an ISA?"
    )
    assert (example["original_score"], example["threshold"], example["direction"]) == (0.8, 0.62, "pass to fail")
    assert "Flipped cases" in _text(html["mrm-robustness"]) and "word_swap" in html["mrm-robustness"]


def test_missing_steps_say_so_and_never_crash() -> None:
    full = mrm_export()
    partial = RunDocuments(source="test", documents={"workflow_summary.json": full["workflow_summary.json"]})
    data = mrm_interpretation(partial)
    for part in ("topics", "generated_cases", "calibration", "failure_clusters", "weaknesses"):
        assert data[part] == {"available": False, "message": data[part]["message"]}
        assert "step not run / no output" in data[part]["message"]
    assert not data["robustness"]["adversarial"]["available"]
    page = "".join(str(section.html) for section in mrm_sections(partial, data))
    assert page.count("step not run / no output") >= 8


def test_an_unreadable_document_names_the_file_and_field() -> None:
    documents = mrm_export()
    documents["topic-modeling/topics.json"] = {"topics": [{"id": "not a number"}], "config": {}, "silhouette": None}
    data = mrm_interpretation(RunDocuments(source="test", documents=documents))
    assert data["topics"]["available"] is False
    assert data["topics"]["message"].startswith("topic-modeling/topics.json: unreadable (topics.0.")


def test_hostile_text_is_escaped_everywhere(html) -> None:
    page = "".join(html.values())
    for hostile in (SCRIPT_KEYWORD, IMG_QUESTION, CLUSTER_NAME, "<script>alert('patch')", "<i>at all</i>"):
        assert hostile not in page
    assert "&lt;script&gt;alert(" in html["mrm-topics"]
    assert "&lt;img src=x onerror=alert(" in html["mrm-cases"] and "&lt;b onmouseover" in html["mrm-clusters"]
    assert "&lt;script&gt;alert(&#39;patch&#39;)&lt;/script&gt; £25" in html["mrm-artifacts"]
    assert PATCH_TEXT.splitlines()[0] in html["mrm-artifacts"]
    assert "Anyone &lt;i&gt;at all&lt;/i&gt;." in html["mrm-robustness"]


def test_artifacts_show_their_file_names_and_the_guardrail_table(data, html) -> None:
    names = [artifact["name"] for artifact in data["artifacts"]]
    assert names == ["artifacts/corpus_patch.md", "artifacts/system_prompt_extension.md", "artifacts/guardrails.json"]
    guardrails = data["artifacts"][2]
    assert guardrails["reviewed_by"] == "Bo Chen (approvals-file)"
    assert {(r["evaluator_id"], r["metric"], r["threshold"], r["source"]) for r in guardrails["rows"]} == {
        ("groundedness", "groundedness", 0.62, "calibrated"),
        ("pii_leakage", "model_failures", 0.2, "user"),
    }
    assert "run parameter metric_threshold" in _text(html["mrm-artifacts"])


def test_a_full_page_renders_with_the_sections_and_the_data(reviewed, data) -> None:
    page = render_page("MRM run", mrm_sections(reviewed, data), subtitle=RUN_ID, data={"mrm": data})
    for section_id in SECTION_IDS:
        assert f'id="{section_id}"' in page and f'href="#{section_id}"' in page
    assert page.count('class="plotly-graph-div"') == 4  # topics, calibration, weakness grid, input variations
    embedded = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert json.loads(embedded.group(1))["mrm"]["calibration"]["labels"] == 8
