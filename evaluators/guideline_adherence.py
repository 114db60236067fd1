"""Guideline adherence (Judge): does the response follow the guidelines set for it (seed 003)?

Two ratings, as in the seed: the case's own guidelines (``guidelines`` of the test case) and the run's
``global_guidelines``, each judged in one call ("yes" only when every guideline of the set is followed), so a
failing global rule is not hidden by a case's own rules and vice versa. A case with neither set is unscored
(missing input); a case with only global guidelines has no per-case rating (null, skipped by the aggregate)."""

from dataclasses import dataclass, field

from assay.evaluators._databricks import COMPLIANCE, JudgeFailed, ask_each, rating_columns, rating_metric, rating_value
from assay.evaluators._judged import CaseJudge, JudgedEvaluator
from assay.evaluators.base import CaseContext, Scored, Unscored
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

CASE, GLOBAL = "guideline_adherence", "global_guideline_adherence"


@register
@dataclass
class GuidelineAdherence(JudgedEvaluator):
    spec = EvaluatorSpec(
        id="guideline_adherence",
        display_name="Guideline adherence (Judge)",
        description=(
            "Asks the LLM judge whether the actual answer follows every guideline given for it: the test case's "
            "own guidelines and, rated separately, the global guidelines set for the whole run (language, tone, "
            "length, required disclaimers, topics to avoid...). A multi-turn case (a production session's later "
            "request) is judged on its last answer with the conversation before it."
        ),
        domain="generation",
        compliance=[*COMPLIANCE, "EU AI Act: Transparency"],
        required_inputs=["question", "actual_output"],
        needs=["llm"],
        metrics=[
            rating_metric(
                CASE,
                "Guideline adherence",
                "1 when the judge rates the answer as following all of the case's guidelines (yes), 0 otherwise.",
                "response/llm_judged/guideline_adherence/rating/percentage",
            ),
            rating_metric(
                GLOBAL,
                "Global guideline adherence",
                "1 when the judge rates the answer as following all of the global guidelines (yes), 0 otherwise.",
                "response/llm_judged/global_guideline_adherence/rating/percentage",
                primary=False,
            ),
        ],
        keywords=["llm-judge", "guidelines", "policy", "instructions", "databricks"],
        problem_type="accuracy",
    )
    golden = {
        "good": {
            "question": "Can I open a savings account online?",
            "actual_output": "Yes, you can open a savings account online in about ten minutes.",
            "guidelines": ["The response must be in English", "The response must not mention competitors"],
        },
        "bad": {
            "question": "Can I open a savings account online?",
            "actual_output": "Yes, but Barclays and Monzo offer better savings accounts, so try them instead.",
            "guidelines": ["The response must be in English", "The response must not mention Barclays"],
        },
    }
    template_id = "databricks_guideline_adherence"
    global_guidelines: list[str] = field(
        default_factory=list,
        metadata={"description": "Guidelines every answer of the run must follow (global_guideline_adherence)."},
    )

    def not_applicable(self, case: CaseContext) -> str | None:
        """A case with no guideline to check (none of its own, no global ones) is no adherence case; saying
        so here lets ``--evaluators all`` leave the evaluator out of a lab without guidelines."""
        if not case.guidelines and not self.global_guidelines:
            return "no guidelines to check (the case has none and no global_guidelines are set)"
        return None

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        if not case.guidelines and not self.global_guidelines:
            raise Unscored("missing input: guidelines (the case has none and no global_guidelines are set)")
        sets = [(name, guidelines) for name, guidelines in ((CASE, case.guidelines), (GLOBAL, self.global_guidelines))
                if guidelines]  # fmt: skip
        requests = [(name, self.template_id, self._inputs(case, guidelines)) for name, guidelines in sets]
        outcomes = await ask_each(ask, requests)
        scores: dict[str, float | None] = {CASE: None, GLOBAL: None}
        columns: dict[str, object] = {}
        for (name, _guidelines), outcome in zip(sets, outcomes, strict=True):
            prefix = f"response/llm_judged/{name}"
            if isinstance(outcome, JudgeFailed):
                columns |= rating_columns(prefix, None, str(outcome))
            else:
                scores[name] = rating_value(outcome)
                columns |= rating_columns(prefix, outcome)
        failed = [outcome for outcome in outcomes if isinstance(outcome, JudgeFailed)]
        if failed and (scores[CASE] is None if case.guidelines else scores[GLOBAL] is None):
            raise Unscored(str(failed[0]), scores=scores, details={"columns": columns})
        return Scored(scores=scores, details={"columns": columns})

    @staticmethod
    def _inputs(case: CaseContext, guidelines: list[str]) -> dict[str, str]:
        """The last turn is judged with the conversation before it (a production session's earlier requests and
        answers), so that a guideline about the conversation ("do not repeat an earlier answer") can be judged."""
        numbered = "\n".join(f"{index}. {text.strip()}" for index, text in enumerate(guidelines, 1))
        conversation = "\n".join(f"{turn.role}: {turn.content}" for turn in case.turns) or "(none)"
        return {"conversation": conversation, "request": case.question, "response": case.actual_output or "",
                "guidelines": numbered}  # fmt: skip
