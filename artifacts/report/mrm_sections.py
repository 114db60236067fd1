"""The MRM-only sections of a run's HTML report (seed 002 "Workflow report"): workflow overview, topics,
generated cases and validation, calibration, evaluator validity, failure clusters, the weakness grid,
robustness and the three compliance artifacts. The evaluation sections of the run's automated-evaluation
step are the evaluation report's; this module adds what only an MRM run has.

``mrm_interpretation`` is the machine-readable twin (for ``interpretation.json``); ``mrm_sections`` renders
that same dict, so the page and the JSON cannot disagree. A step without output shows "step not run / no
output" in its section instead of failing the report."""

from typing import Any

from assay.artifacts.report import mrm_figures as figures
from assay.artifacts.report.evaluator_validity import PublishedLookup, mrm_validity
from assay.artifacts.report.mrm_outcomes import clusters, compliance_artifacts, robustness, weaknesses
from assay.artifacts.report.mrm_steps import calibration, decisions, generated_cases, overview, topics
from assay.artifacts.report.page import Section, render
from assay.artifacts.report.run_documents import RunDocuments
from markupsafe import Markup

from assay.models.base import SCHEMA_VERSION
from assay.validity.published import published_metrics

SHOWN_CASES = 15
"""Cases shown before the rest of the generated-cases table is folded away."""


def mrm_interpretation(run: RunDocuments, published: PublishedLookup = published_metrics) -> dict[str, Any]:
    """Everything the MRM sections show, as plain JSON-ready data; ``published`` looks up the evaluators'
    published validity figures (the package's, unless a caller injects others)."""
    taken = decisions(run)
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run.run_id,
        "overview": overview(run, taken),
        "topics": topics(run, taken),
        "generated_cases": generated_cases(run, taken),
        "calibration": calibration(run, taken),
        "validity": mrm_validity(run, taken, published),
        "failure_clusters": clusters(run, taken),
        "weaknesses": weaknesses(run),
        "robustness": {kind: robustness(run, kind) for kind in ("input_variations", "adversarial")},
        "artifacts": compliance_artifacts(run),
    }


def mrm_sections(run: RunDocuments, interpretation: dict[str, Any] | None = None) -> list[Section]:
    """The sections, in workflow order; ``interpretation`` is reused when the caller has built it already."""
    data = interpretation if interpretation is not None else mrm_interpretation(run)
    topic_part, case_part, calibration_part = data["topics"], data["generated_cases"], data["calibration"]
    weakness_part, variations, adversarial = data["weaknesses"], *data["robustness"].values()
    overview_part = data["overview"]
    return [
        Section(
            "mrm-overview",
            "Workflow overview",
            render("mrm/overview.html.j2", part=overview_part, parameters=flatten(overview_part["parameters"])),
        ),
        Section(
            "mrm-topics",
            "Topics",
            render("mrm/topics.html.j2", part=topic_part, chart=_chart(topic_part, "topics", figures.topic_sizes)),
        ),
        Section(
            "mrm-cases",
            "Generated cases and validation",
            render("mrm/cases.html.j2", part=case_part, shown=SHOWN_CASES),
        ),
        Section(
            "mrm-calibration",
            "Calibration",
            render(
                "mrm/calibration.html.j2",
                part=calibration_part,
                chart=_chart(calibration_part, "metrics", figures.thresholds_before_after),
            ),
        ),
        Section("mrm-validity", "Evaluator validity", render("mrm/validity.html.j2", part=data["validity"])),
        Section("mrm-clusters", "Failure clusters", render("mrm/clusters.html.j2", part=data["failure_clusters"])),
        Section(
            "mrm-weaknesses",
            "Weakness grid",
            render(
                "mrm/weaknesses.html.j2",
                part=weakness_part,
                chart=_chart(weakness_part, "metrics", figures.weakness_grid),
            ),
        ),
        Section(
            "mrm-robustness",
            "Robustness",
            Markup(""),
            children=[
                _robustness("mrm-robustness-variations", "Input variations", variations),
                _robustness("mrm-robustness-adversarial", "Adversarial inputs", adversarial),
            ],
        ),
        Section("mrm-artifacts", "Compliance artifacts", render("mrm/artifacts.html.j2", artifacts=data["artifacts"])),
    ]


def _robustness(section_id: str, title: str, part: dict[str, Any]) -> Section:
    chart = None
    if part.get("available") and part["perturbators"]:
        chart = figures.flips(part["perturbators"], f"{title}: verdict flips per perturbator")
    return Section(section_id, title, render("mrm/robustness.html.j2", part=part, chart=chart))


def _chart(part: dict[str, Any], key: str, draw: Any) -> Markup | None:
    return draw(part[key]) if part.get("available") and part.get(key) else None


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested parameters as ``a.b = value`` rows; lists of scalars joined, so a table shows each setting."""
    if isinstance(value, dict):
        return [row for key, item in value.items() for row in flatten(item, f"{prefix}{key}.")] or [
            (prefix.rstrip("."), "{}")
        ]
    if isinstance(value, list):
        value = ", ".join(str(item) for item in value) if value else "[]"
    return [(prefix.rstrip("."), "not set" if value is None else value)]
