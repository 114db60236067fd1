"""Repeats (flaky verdicts flagged, never averaged), the offline-first cascade and the judge budget, with a
small judged evaluator defined here (not registered) on the local judge's ``test_overlap`` rule."""

from dataclasses import dataclass
from pathlib import Path

from assay.artifacts.findings.problems import find_problems
from assay.evaluators import CaseContext, Services, build_evaluator, run_evaluator
from assay.evaluators._judged import CaseJudge, JudgedEvaluator
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine
from assay.judges.client import open_judge
from assay.judges.templates import JudgeTemplate
from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import EvaluatorSpec, MetricMeta
from assay.models.judges import JudgeRunOptions
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import endpoint_for

OVERLAP = JudgeTemplate.build(
    id="test_overlap",
    version="1",
    description="Share of the expected answer the answer covers.",
    system="",
    user="<expected>\n{{ expected }}\n</expected>\n<answer>\n{{ answer }}\n</answer>",
    inputs=["expected", "answer"],
    schema={
        "type": "object",
        "required": ["rationale", "score"],
        "properties": {"rationale": {"type": "string"}, "score": {"type": "number", "minimum": 0, "maximum": 1}},
    },
)


@dataclass
class OverlapJudge(JudgedEvaluator):
    spec = EvaluatorSpec(
        id="test_overlap_judge",
        display_name="Overlap (test judge)",
        description="Test-only judged evaluator.",
        domain="generation",
        compliance=["test"],
        required_inputs=["expected_output", "actual_output"],
        needs=["llm"],
        metrics=[
            MetricMeta(key="score", display_name="Score", description="Judge's score.", threshold=0.5, is_primary=True)
        ],
    )
    golden = {}
    cascade_proxy = "answer_semantic_similarity"

    async def judge(self, case: CaseContext, ask: CaseJudge) -> dict[str, float | None]:
        verdict = await ask(OVERLAP, expected=case.expected_output, answer=case.actual_output)
        return {"score": float(verdict["score"])}


EXPECTED = "Savings accounts pay 2% interest, credited monthly."
ANSWERS = {
    "same": EXPECTED,
    "close": "The savings account interest is 2 percent, paid every month.",
    "partial": "Interest on savings is credited monthly.",
    "off": "Our branches open at nine on weekdays.",
    "flaky": "Savings accounts pay 2% interest. [flaky]",
}


def _lab() -> TestLab:
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt="What do savings pay?", expected_output=EXPECTED),
            model_key="m",
            actual_output=answer,
        )
        for key, answer in ANSWERS.items()
    ]
    return TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=rows)


def _evaluator(server: JudgeServer, engine: EmbeddingEngine, cache: Path, **options: object) -> OverlapJudge:
    endpoint = endpoint_for(server)
    services = Services(
        embedder_factory=lambda: engine,
        judge_factory=lambda: open_judge(endpoint, cache),
        judge_options=JudgeRunOptions.model_validate(options),
    )
    return OverlapJudge(services=services)


def test_repeats_agree_on_stable_cases_and_flag_a_flipping_verdict_as_flaky(
    judge_server: JudgeServer, engine: EmbeddingEngine, tmp_path: Path
) -> None:
    lab = _lab()
    before = len(judge_server.requests)
    result = run_evaluator(_evaluator(judge_server, engine, tmp_path, repeats=3), lab)
    rows = {row.test_case_key: row for row in result.rows}
    assert len(judge_server.requests) - before == 3 * len(ANSWERS)
    seeds = sorted({request.body["seed"] for request in judge_server.requests[before:]})
    assert seeds == [0, 1, 2]
    assert rows["same"].scores["score"] == 1.0 and rows["same"].details["judge_repeats"]["agreement"] == 1.0
    flaky = rows["flaky"]
    assert flaky.unscored_reason == "flaky judge verdict: 2 of 3 repeats pass, 1 fail or were unscored"
    assert flaky.details["flaky"] and flaky.details["judge_repeats"]["verdicts"] == ["pass", "fail", "pass"]
    assert len(flaky.details["judge"]) == 3
    assert result.judge is not None and result.judge.flaky_cases == 1
    problems = [problem for problem in find_problems(lab, [result]) if problem.problem_type == "stability"]
    assert len(problems) == 1 and problems[0].attributes["test_case_keys"] == ["flaky"]


def _proxy_scores(engine: EmbeddingEngine) -> dict[str, float]:
    proxy = build_evaluator("answer_semantic_similarity", Services(embedder_factory=lambda: engine))
    cases = [CaseContext.from_row(row) for row in _lab().rows]
    proxy.prepare(cases)
    return {case.test_case_key: score_case(proxy, case).scores["answer_similarity"] for case in cases}


def test_the_cascade_sends_only_uncertain_cases_to_the_judge(
    judge_server: JudgeServer, engine: EmbeddingEngine, tmp_path: Path
) -> None:
    proxy = _proxy_scores(engine)
    band = 0.15
    uncertain = {key for key, value in proxy.items() if abs(value - 0.75) <= band}
    assert uncertain and uncertain != set(ANSWERS), proxy  # the sample has both kinds
    before = len(judge_server.requests)
    result = run_evaluator(_evaluator(judge_server, engine, tmp_path, cascade=True, band=band), _lab())
    assert len(judge_server.requests) - before == len(uncertain)
    for row in result.rows:
        if row.test_case_key in uncertain:
            assert row.details["judge"], row.test_case_key
        else:
            cascade = row.details["cascade"]
            assert row.unscored_reason.startswith("cascade: decided offline by answer_semantic_similarity")
            assert cascade["verdict"] == ("pass" if proxy[row.test_case_key] >= 0.75 else "fail")
            assert "judge" not in row.details
    assert result.judge is not None and result.judge.cascade is not None
    assert result.judge.cascade["sent_to_judge"] == len(uncertain)
    assert result.judge.account.saved_by_cascade == len(ANSWERS) - len(uncertain)


def test_a_budget_judges_the_most_uncertain_cases_first(
    judge_server: JudgeServer, engine: EmbeddingEngine, tmp_path: Path
) -> None:
    proxy = _proxy_scores(engine)
    most_uncertain = min(proxy, key=lambda key: abs(proxy[key] - 0.75))
    result = run_evaluator(_evaluator(judge_server, engine, tmp_path, budget=1), _lab())
    judged = [row.test_case_key for row in result.rows if row.details.get("judge")]
    assert judged == [most_uncertain]
    skipped = [row for row in result.rows if row.test_case_key != most_uncertain]
    assert all(row.unscored_reason.startswith("judge budget exhausted (1 cases judged") for row in skipped)
    assert result.judge.cascade["over_budget"] == len(ANSWERS) - 1  # type: ignore[union-attr]
