"""Deterministic assertions: a case's rules on the response, its tool calls, latency and cost (seed 004, plus
the Assay extension TOOL_CALLED_IN_ORDER on the order of the tool calls).

Each assertion passes or fails; the case score is the weighted average of the outcomes with the assertion
weights, scaled to 0-100, and a model's run-level score weights each case by its own weight. The default pass
mark is 100: assertions are rules the response must satisfy, and the seed fails a whole evaluation when its
JSON response does not validate, so a case passes only when every weighted rule holds; the 0-100 score keeps
the partial credit for ranking prompts. An assertion that cannot be checked (undefined variable, unreported
cost, turn out of range) is left out with the reason rather than counted as a failure; the others are still
checked. When one of them fails the case fails whatever the unchecked one would say, and is scored over the
assertions that were checked; when all of them hold the outcome hangs on what could not be checked, so the
case is unscored with the reasons (its details still list every assertion's outcome).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assay.evaluators import _assertion_checks as checks
from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored, golden_pair, quantity_metric, score_metric
from assay.evaluators.registry import register
from pydantic import ValidationError

from assay.models import Assertion, TestLabRow
from assay.models.evaluation import CaseScores, EvaluatorSpec, on_good_side

EVERY_CASE = "*"
"""The category of ``assertions_by_category`` whose assertions apply to every case."""
Verdict = tuple[bool | None, str]
"""One assertion's outcome (None: it could not be checked) and what was observed, or why it was not checked."""

TEXT_TYPES = {"EXACT_MATCH", "CONTAINS_ALL", "CONTAINS_ANY", "STARTS_WITH"}
SINGLE_TARGET_TYPES = {"EXACT_MATCH", "STARTS_WITH", "TOOL_CALLED", "TOOL_CALLED_WITH"}


def _assertion(category: str, index: int, item: Any) -> Assertion:
    try:
        return Assertion.model_validate(item)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'assertion'}: {e['msg']}" for e in error.errors())
        raise ValueError(f"assertions_by_category[{category!r}][{index}]: {problems}") from None


@register
@dataclass
class Assertions(Evaluator):
    spec = EvaluatorSpec(
        id="assertions",
        display_name="Assertions",
        description=(
            "Checks the deterministic assertions of each test case: EXACT_MATCH, CONTAINS_ALL, CONTAINS_ANY and "
            "STARTS_WITH on the answer (or a JSON path of a JSON answer, or an earlier assistant turn), "
            "TOOL_CALLED and TOOL_CALLED_WITH on the tool calls, LATENCY and COST against thresholds, with the "
            "NOT and ignore-case modifiers and {{variable}} templates; and TOOL_CALLED_IN_ORDER, an Assay "
            "extension: the tools named were called in that relative order, other calls in between allowed. A "
            "JSON answer that does not parse fails every assertion. The score is the weighted average of the "
            "outcomes, 0-100."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis", "SR 11-7: Ongoing Monitoring"],
        required_inputs=["assertions"],
        metrics=[
            quantity_metric(
                "assertion_score",
                "Assertion score",
                "Weighted average of the assertion outcomes (1 pass, 0 fail) with the assertion weights, "
                "scaled 0-100; passes only at 100, when every weighted assertion holds.",
                ceiling=100.0,
                threshold=100.0,
                higher_is_better=True,
                primary=True,
            ),
            score_metric(
                "assertions_passed",
                "Assertions passed",
                "Share of the case's assertions that hold, unweighted (weight-0 assertions count too).",
                threshold=1.0,
            ),
            score_metric(
                "assertions_failed",
                "Assertions failed",
                "Share of the case's assertions that fail, unweighted.",
                higher_is_better=False,
                threshold=0.0,
            ),
            quantity_metric(
                "weighted_assertion_score",
                "Weighted assertion score",
                "Per model: the case scores averaged with the case weights (0-100); per case, the case score.",
                ceiling=100.0,
                threshold=100.0,
                higher_is_better=True,
            ),
        ],
        keywords=["assertions", "rules", "json", "tool-calls", "latency", "cost", "prompt-foundry"],
    )

    # Both golden cases check a JSON answer naming the city asked for, the temperature, and no refusal.
    golden = golden_pair(
        '```json\n{"city": "Paris", "temperature": 21}\n```',
        '{"city": "Lyon", "temperature": 21}',
        response_format="json",
        variables={"city": "Paris"},
        assertions=[
            Assertion(type="EXACT_MATCH", targets=["{{city}}"], json_path="$.city"),
            Assertion(type="EXACT_MATCH", targets=["21"], json_path="$.temperature"),
            Assertion(type="CONTAINS_ANY", targets=["sorry", "cannot"], negate=True, ignore_case=True),
        ],
    )
    assertions_by_category: dict[str, list[dict[str, Any]]] = field(
        default_factory=dict,
        metadata={
            "description": (
                "Assertions for every case of a category, on top of the case's own: {CATEGORY: [assertion, ...]}, "
                f"'{EVERY_CASE}' for every case. Production traces carry no assertions of their own; their category "
                "is the request's route (the root span's name), e.g. {\"close-account\": [{\"type\": "
                "\"TOOL_CALLED_IN_ORDER\", \"targets\": [\"verify_identity\", \"close_account\"]}]}."
            )
        },
    )

    def __post_init__(self) -> None:
        self._by_category = {
            category: [_assertion(category, index, item) for index, item in enumerate(items)]
            for category, items in self.assertions_by_category.items()
        }

    def context_for(self, row: TestLabRow) -> CaseContext:
        case = super().context_for(row)
        added = [*self._by_category.get(EVERY_CASE, [])]
        for category in case.categories:
            added += self._by_category.get(category, [])
        return replace(case, assertions=[*case.assertions, *added]) if added else case


    def score(self, case: CaseContext) -> Scored:
        assertions = case.assertions
        total_weight = sum(assertion.weight for assertion in assertions)
        if total_weight <= 0:
            raise Unscored(f"test case {case.test_case_key}: every assertion has weight 0, so there is no score")
        resolved = [self._resolve(case, index, assertion) for index, assertion in enumerate(assertions)]
        answer, document, answer_is_json = self._answer(case, assertions)
        if case.response_format == "json" and not answer_is_json:
            # seed 004: a response that is not valid JSON fails the evaluation
            verdicts: list[Verdict] = [(False, "the response is not valid JSON")] * len(assertions)
        else:
            verdicts = [
                (None, outcome)
                if isinstance(outcome, str)
                else self._holds(case, index, assertion, *outcome, answer, document)
                for index, (assertion, outcome) in enumerate(zip(assertions, resolved, strict=True))
            ]
        listed = [
            {"index": index, "type": assertion.type, "passed": ok, "weight": assertion.weight}
            | ({} if ok else {"reason": reason})
            for index, (assertion, (ok, reason)) in enumerate(zip(assertions, verdicts, strict=True))
        ]
        checked = [(assertion, ok) for assertion, (ok, _) in zip(assertions, verdicts, strict=True) if ok is not None]
        unverified = [reason for ok, reason in verdicts if ok is None]
        if unverified and not any(not ok and assertion.weight > 0 for assertion, ok in checked):
            # Every assertion that could be checked holds: the case passes or fails on what could not be checked.
            raise Unscored("; ".join(unverified), details={"assertions": listed})
        details: dict[str, Any] = {"assertions": listed} | ({"unverified": unverified} if unverified else {})
        return Scored(scores=self._scores(checked), details=details)

    @staticmethod
    def _scores(checked: Sequence[tuple[Assertion, bool]]) -> dict[str, float | None]:
        """The case's scores over the assertions that could be checked (all of them unless one could not be,
        and then a checked one fails, so the case fails whatever the unchecked one would say)."""
        checked_weight = sum(assertion.weight for assertion, _ in checked)
        passed_weight = sum(assertion.weight for assertion, ok in checked if ok)
        case_score = round(100.0 * passed_weight / checked_weight, 6)
        passed_share = round(sum(ok for _, ok in checked) / len(checked), 6)
        return {
            "assertion_score": case_score,
            "assertions_passed": passed_share,
            "assertions_failed": round(1.0 - passed_share, 6),
            "weighted_assertion_score": case_score,
        }

    def corpus_metrics(
        self, cases: Sequence[CaseContext], scores: Sequence[CaseScores]
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        """The model's score over its evaluations, each weighted by the case weight (seed 004)."""
        pairs = [
            (case.case_weight, row.scores["assertion_score"])
            for case, row in zip(cases, scores, strict=True)
            if row.scores.get("assertion_score") is not None
        ]
        total = sum(weight for weight, _ in pairs)
        weighted = round(sum(weight * value for weight, value in pairs) / total, 6) if total > 0 else None
        return {"weighted_assertion_score": weighted}, {"case_weight_total": total}

    @staticmethod
    def _problem(case: CaseContext, index: int, assertion: Assertion, message: str) -> str:
        """Why an assertion cannot be checked, naming the case and the assertion."""
        return f"test case {case.test_case_key}: assertions[{index}] ({assertion.type}): {message}"

    def _resolve(
        self, case: CaseContext, index: int, assertion: Assertion
    ) -> tuple[list[str], dict[str, Any] | None] | str:
        """Targets and expected arguments with templates filled, or the authoring error (a message) that
        leaves this assertion unchecked."""
        if assertion.type in SINGLE_TARGET_TYPES and len(assertion.targets) > 1:
            return self._problem(case, index, assertion, f"takes one target, got {len(assertion.targets)}")
        if assertion.json_path is not None and assertion.type not in TEXT_TYPES:
            return self._problem(case, index, assertion, "json_path applies only to text assertions")
        if assertion.turn is not None and assertion.type not in TEXT_TYPES:
            return self._problem(case, index, assertion, "turn applies only to text assertions")
        if assertion.json_path is not None and case.response_format != "json":
            return self._problem(
                case, index, assertion, f"json_path {assertion.json_path!r} needs response_format 'json', not 'text'"
            )
        try:
            if assertion.json_path is not None:
                checks.compile_path(assertion.json_path)
            targets = [checks.fill_template(target, case.variables) for target in assertion.targets]
            arguments = (
                checks.fill_arguments(assertion.arguments, case.variables)
                if assertion.type == "TOOL_CALLED_WITH"
                else None
            )
        except checks.AssertionProblem as problem:
            return self._problem(case, index, assertion, str(problem))
        except RecursionError:
            return self._problem(case, index, assertion, "its expected arguments nest too deeply")
        return targets, arguments

    @staticmethod
    def _answer(case: CaseContext, assertions: Sequence[Assertion]) -> tuple[str | None, Any, bool]:
        """The final answer (fences stripped for JSON), its parsed document and whether it parsed.

        The answer is needed by text assertions on the final answer and, for a JSON case, by the validation
        the seed applies to every JSON response; turn-only, tool, latency and cost assertions need none.
        """
        needs_answer = case.response_format == "json" or any(
            assertion.type in TEXT_TYPES and assertion.turn is None for assertion in assertions
        )
        answer = case.actual_output if case.actual_output and case.actual_output.strip() else None
        if answer is None:
            if needs_answer:
                raise Unscored(f"test case {case.test_case_key}: missing input: actual_output (no answer to check)")
            return None, None, False
        if case.response_format != "json":
            return answer, None, False
        try:
            parsed, document = checks.parse_json(answer)
        except checks.AssertionProblem as problem:
            raise Unscored(f"test case {case.test_case_key}: {problem}") from problem
        return checks.strip_fences(answer), document, parsed

    def _holds(
        self,
        case: CaseContext,
        index: int,
        assertion: Assertion,
        targets: list[str],
        arguments: dict[str, Any] | None,
        answer: str | None,
        document: Any,
    ) -> Verdict:
        """One assertion's outcome with NOT applied, and what was observed (the reason when it fails); no
        outcome when the case lacks what it checks (an unreported cost, a turn out of range)."""
        try:
            holds, observed = self._check(case, assertion, targets, arguments, answer, document)
        except checks.AssertionProblem as problem:
            return None, self._problem(case, index, assertion, str(problem))
        except RecursionError:  # a value nested too deeply to compare or quote; checked, never crashed
            return None, self._problem(case, index, assertion, "the value it checks nests too deeply to compare")
        if holds is None:  # a JSON turn that does not parse fails whatever the modifier
            return False, observed
        return holds != assertion.negate, f"negated, but {observed}" if assertion.negate else observed

    def _check(
        self,
        case: CaseContext,
        assertion: Assertion,
        targets: list[str],
        arguments: dict[str, Any] | None,
        answer: str | None,
        document: Any,
    ) -> tuple[bool | None, str]:
        kind = assertion.type
        if kind in ("LATENCY", "COST"):
            measured = case.duration if kind == "LATENCY" else case.cost
            what = "duration" if kind == "LATENCY" else "cost"
            holds = self._within(measured, assertion.threshold, what)
            verdict = "is within" if holds else "exceeds"
            return holds, f"{what} {measured:g} {verdict} the threshold {assertion.threshold or 0.0:g}"
        if kind == "TOOL_CALLED_IN_ORDER":
            holds = checks.unmatched_in_order(case.tool_calls, targets, assertion.ignore_case) is None
            return holds, checks.describe_tool_order(case.tool_calls, targets, assertion.ignore_case)
        if kind in ("TOOL_CALLED", "TOOL_CALLED_WITH"):
            holds = checks.tool_called(case.tool_calls, targets[0], arguments, assertion.ignore_case)
            return holds, checks.describe_tool_call(case.tool_calls, targets[0], arguments, holds)
        where = "the answer"
        if assertion.turn is not None:
            answer = self._assistant_turn(case, assertion.turn)
            where = f"assistant turn {assertion.turn}"
            if assertion.json_path is not None:
                parsed, document = checks.parse_json(answer)
                if not parsed:
                    return None, f"{where} is not valid JSON"
        if assertion.json_path is not None:
            values, where = checks.select(assertion.json_path, document), f"{assertion.json_path} of {where}"
        else:
            values = [answer]
        holds = checks.text_holds(kind, values, targets, assertion.ignore_case)
        return holds, checks.describe_text(kind, values, targets, assertion.ignore_case, where)

    @staticmethod
    def _within(measured: float | None, threshold: float | None, what: str) -> bool:
        if measured is None:
            raise checks.AssertionProblem(f"the host reported no {what}")
        return bool(on_good_side(measured, threshold or 0.0, higher_is_better=False))

    @staticmethod
    def _assistant_turn(case: CaseContext, turn: int) -> str:
        replies = [entry.content for entry in case.turns if entry.role == "assistant"]
        if not -len(replies) <= turn < len(replies):
            raise checks.AssertionProblem(
                f"turn {turn} is out of range: the conversation has {len(replies)} assistant turn(s)"
            )
        return replies[turn]
