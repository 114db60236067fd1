"""Agent sanity check: did an agent's run, as its trace recorded it, hold together (seed 002)?

The manual's evaluator lints "the artifacts created by the agent during its operation". What a test lab keeps of
an agent's operation is its tool calls, in call order, and its final answer, so those are the artifacts checked,
without an LLM: a call is sane when it did not fail, returned something, had arguments that were a JSON object,
returned JSON that parses when it looks like JSON, and was not one too many of the same call. The score is the
share of checks that pass, so a reviewer can read it as "percentage of artifacts meeting quality standards".
"""

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.base import CaseContext, Evaluator, Scored, score_metric
from assay.evaluators.registry import register

from assay.escaping import short_line
from assay.models import ToolCall
from assay.models.evaluation import EvaluatorSpec

_REASON_CHARS = 120


@dataclass(frozen=True)
class SanityCheck:
    """One sanity check on one artifact; ``reason`` says what was wrong, and is None when it passed."""

    name: str
    reason: str | None
    call: ToolCall | None = None
    position: int | None = None

    @property
    def passed(self) -> bool:
        return self.reason is None

    def finding(self) -> dict[str, Any]:
        """The failed check as a reviewer reads it: which check, on which call (tool, position, trace span)."""
        where: dict[str, Any] = {}
        if self.call is not None:
            where = {"tool": self.call.name, "call_index": self.position, "span_id": self.call.span_id}
        return {"check": self.name, **where, "reason": self.reason}


def json_lint(output: str) -> str | None:
    """Why an output that looks like JSON (opens with ``{`` or ``[``) does not parse; None when it parses or
    does not look like JSON (plain text is a fine tool output)."""
    text = output.strip()
    if not text.startswith(("{", "[")):
        return None
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return f"the output looks like JSON but does not parse: {error}"
    except RecursionError:
        return "the output looks like JSON but nests too deeply to parse"
    return None


def call_identity(call: ToolCall) -> tuple[str, str]:
    """What makes two calls the same call: the tool and its arguments (key order not significant)."""
    if call.arguments_text is not None:
        return call.name.strip(), call.arguments_text
    return call.name.strip(), json.dumps(call.arguments, sort_keys=True, default=str)


def call_checks(call: ToolCall, position: int, seen_before: int, max_identical_calls: int) -> list[SanityCheck]:
    """The checks on one tool call; ``seen_before`` counts the earlier calls identical to it. A failed call is
    not also checked for its output: the failure is the finding, and counting it twice would weigh it double."""
    failure = None if call.error is None else f"the call failed: {short_line(call.error, _REASON_CHARS)}"
    arguments = call.arguments_text
    reasons: dict[str, str | None] = {
        "tool_error": failure,
        "arguments_lint": None
        if arguments is None
        else f"the arguments are not a JSON object: {short_line(arguments, _REASON_CHARS)}",
    }
    if call.error is None and call.output is not None:
        # One check per recorded output, named after the way it can fail.
        if call.output.strip():
            reasons["json_lint"] = json_lint(call.output)
        else:
            reasons["empty_output"] = "the call returned an empty output"
    runaway = seen_before >= max_identical_calls
    reasons["repetition"] = (
        f"{call.name!r} called with identical arguments {seen_before + 1} times (at most {max_identical_calls})"
        if runaway
        else None
    )
    return [SanityCheck(name, reason, call, position) for name, reason in reasons.items()]


@register
@dataclass
class AgentSanity(Evaluator):
    spec = EvaluatorSpec(
        id="agent_sanity",
        display_name="Agent sanity",
        description=(
            "Checks the artifacts of an agent's run as its trace recorded them, without an LLM. Each tool call, in "
            "call order, is checked: it did not fail (tool_error); its arguments were a JSON object "
            "(arguments_lint); when its output was recorded, the output is not blank (empty_output) and, when it "
            "opens with { or [, parses as JSON (json_lint); it is not a call to the same tool with identical "
            "arguments beyond the first max_identical_calls (repetition, a runaway loop). A failed call is not "
            "also checked for its output. The final answer must be present and not blank (final_answer), also "
            "after tool calls. The score is the share of checks that pass. A case whose run recorded no tool "
            "calls has no agent artifacts and is unscored (missing input: tool_calls), even with an answer, and "
            "a case whose host failed is unscored with the host error; the details list each failed check with "
            "the tool, its call index and its trace span."
        ),
        domain="generation",
        problem_type="runtime",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Ongoing Monitoring"],
        required_inputs=["tool_calls"],
        metrics=[
            score_metric(
                "agent_sanity",
                "Agent sanity",
                "Share of the sanity checks on the agent's tool calls and final answer that pass.",
                primary=True,
            )
        ],
        keywords=["agent", "tool-calls", "json", "lint", "artifacts", "rules"],
    )

    golden = {
        "good": {
            "actual_output": "The Easy Access Saver pays 3.25% AER.",
            "tool_calls": [
                ToolCall(name="search", arguments={"query": "easy access saver rate"}, output='{"hits": 2}'),
                ToolCall(name="read_document", arguments={"uri": "rates.md"}, output="Easy Access Saver: 3.25% AER"),
            ],
        },
        "bad": {
            "actual_output": "",
            "tool_calls": [
                ToolCall(name="search", arguments_text="query=rates", error="400: arguments must be JSON"),
                ToolCall(name="search", arguments={"query": "rates"}, output='{"hits": [1, 2'),
                ToolCall(name="read_document", arguments={"uri": "rates.md"}, output="   "),
            ],
        },
    }

    max_identical_calls: int = field(
        default=3,
        metadata={
            "description": "Calls to one tool with identical arguments allowed in one answer; each one beyond "
            "fails the repetition check (a runaway loop)."
        },
    )

    def __post_init__(self) -> None:
        if self.max_identical_calls < 1:
            raise ValueError(f"agent_sanity: max_identical_calls must be at least 1, not {self.max_identical_calls}")

    def score(self, case: CaseContext) -> Scored:
        seen: Counter[tuple[str, str]] = Counter()
        checks: list[SanityCheck] = []
        for position, call in enumerate(case.tool_calls):
            identity = call_identity(call)
            checks.extend(call_checks(call, position, seen[identity], self.max_identical_calls))
            seen[identity] += 1
        answered = case.actual_output is not None and bool(case.actual_output.strip())
        calls = len(case.tool_calls)
        checks.append(SanityCheck("final_answer", None if answered else f"no final answer after {calls} tool call(s)"))
        passed = sum(check.passed for check in checks)
        details: dict[str, Any] = {"tool_calls": calls, "checks": len(checks), "checks_passed": passed}
        failed = [check.finding() for check in checks if not check.passed]
        if failed:
            details["failed_checks"] = failed
        return Scored(scores={"agent_sanity": round(passed / len(checks), 6)}, details=details)
