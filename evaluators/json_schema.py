"""JSON Schema: is the answer valid JSON that conforms to the expected schema (seed 002).

Where the schema comes from: a test case may carry its own schema as a constraint (a constraint that parses
as a JSON object with a "$schema" or "type" key); when it has one or more, the answer must satisfy each, and
the run-wide ``json_schema`` parameter is not used for that case. Otherwise the ``json_schema`` parameter
applies; its default ``{}`` checks only that the answer parses as JSON, as in the reference. A case with no
schema at all is checked for parseability too when the evaluator is chosen by name (the manual's promise);
``--evaluators all`` sets ``check_cases_without_schema`` to False so free-text cases are not counted as JSON
failures there.

Schemas come from suite authors and answers from models, so neither may hang, exhaust or crash the run: no
``$ref`` is fetched, schema regexes run on the bounded engine (``evaluators._schema_validators``), and a schema
or answer nested too deeply for Python's parser leaves only its own case unscored, with the reason.
"""

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored, verdict_metrics
from assay.evaluators.registry import register

from assay.bounded_regex import PatternError
from assay.models.evaluation import EvaluatorSpec

_JSON_FENCE_LANGUAGES = ("", "json")
_JSON_BLOCK = re.compile(r"```json[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
MAX_LISTED_ERRORS = 10
MAX_MESSAGE_CHARS = 200


class SchemaProblem(ValueError):
    """A schema that is not JSON, not an object, or not a valid JSON Schema."""


def strip_json_fence(text: str) -> str:
    """The body of an answer wrapped in one Markdown code fence (```json ... ``` or ``` ... ```)."""
    stripped = text.strip()
    if not (stripped.startswith("```") and stripped.endswith("```") and "\n" in stripped):
        return stripped
    info, body = stripped[3:-3].split("\n", 1)
    return body.strip() if info.strip().lower() in _JSON_FENCE_LANGUAGES else stripped


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_json(text: str) -> tuple[Any, dict[str, Any] | None]:
    """(document, None) for strict JSON (NaN and Infinity rejected), else (None, why): the parser's message
    and, for a syntax error, its line and column in ``text`` itself (a stripped fence shifts nothing).
    JSON nested too deeply for Python's parser raises ``RecursionError``: it may be valid, so it is no failure."""
    body = strip_json_fence(text)
    try:
        return json.loads(body, parse_constant=_reject_constant), None
    except json.JSONDecodeError as error:
        fenced = body != text.strip()
        position = text.find(body, text.index("\n") + 1 if fenced else 0) + error.pos
        line_start = text.rfind("\n", 0, position) + 1
        return None, {
            "message": error.msg,
            "line": text.count("\n", 0, position) + 1,
            "column": position - line_start + 1,
        }
    except ValueError as error:
        return None, {"message": str(error)}


def parse_json(text: str) -> tuple[bool, Any]:
    """(True, document) for strict JSON (NaN and Infinity rejected), (False, None) otherwise."""
    document, problem = load_json(text)
    return problem is None, document


def validation_errors(sources: list[tuple[str, Any]], document: Any) -> dict[str, Any]:
    """The first ``MAX_LISTED_ERRORS`` violations as JSON path + message (naming the schema when there are
    several), enough for a reviewer to fix the output without re-running the validator."""
    from referencing.exceptions import Unresolvable

    errors: list[dict[str, Any]] = []
    for label, validator in sources:
        named = {"schema": label} if len(sources) > 1 else {}
        try:
            for error in islice(validator.iter_errors(document), MAX_LISTED_ERRORS + 1 - len(errors)):
                errors.append(named | {"path": error.json_path, "message": _cut(error.message)})
        except Unresolvable as error:
            errors.append(named | {"path": "$", "message": f"schema reference cannot be resolved: {error}"})
        except (PatternError, RecursionError) as error:  # the verdict stands; only the listing stops early
            errors.append(named | {"path": "$", "message": _cut(f"listing stopped: {_why(error)}")})
        if len(errors) > MAX_LISTED_ERRORS:
            return {"validation_errors": errors[:MAX_LISTED_ERRORS], "more_validation_errors": True}
    return {"validation_errors": errors}


def _cut(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 3] + "..."


def _why(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "the schema or the answer nests too deeply to check"
    return str(error)


def json_fragments(text: str) -> list[str]:
    """The JSON a retrieved chunk holds: each ```json fenced block, or the whole chunk when it opens with
    { or [ (a JSON document cut into chunks)."""
    fenced = [match.group(1) for match in _JSON_BLOCK.finditer(text)]
    if fenced:
        return fenced
    return [text] if text.lstrip().startswith(("{", "[")) else []


def schema_constraints(constraints: list[str]) -> list[tuple[int, str]]:
    """(index, text) of the constraints that are JSON Schemas: JSON objects with a "$schema" or "type" key.

    A JSON object nested too deeply to parse cannot be told apart from a schema; it counts as one, so its case
    is left unscored with the reason rather than silently checked against another schema (never raises)."""
    found = []
    for index, constraint in enumerate(constraints):
        try:
            document = json.loads(constraint)
        except ValueError:
            continue
        except RecursionError:
            if constraint.lstrip().startswith("{"):
                found.append((index, constraint))
            continue
        if isinstance(document, dict) and ("$schema" in document or "type" in document):
            found.append((index, constraint))
    return found


@lru_cache(maxsize=256)
def compiled_validator(schema_text: str) -> Any:
    """A validator for the schema's declared draft (2020-12 when undeclared), checking "format" too, that
    resolves only references inside the schema and runs its regexes on the bounded engine."""
    from assay.evaluators._schema_validators import LOCAL_REGISTRY, bounded_validator_class, unbounded_keyword_problem
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        schema = json.loads(schema_text)
    except ValueError as error:
        raise SchemaProblem(f"is not valid JSON: {error}") from error
    except RecursionError as error:
        raise SchemaProblem("is nested too deeply to read as JSON") from error
    if not isinstance(schema, dict):
        raise SchemaProblem(f"must be a JSON object, got {type(schema).__name__}")
    if not isinstance(schema.get("$schema", ""), str):
        raise SchemaProblem(f'has a "$schema" that is not a string: {schema["$schema"]!r}')
    validator_class = bounded_validator_class(validator_for(schema, default=Draft202012Validator))
    try:
        validator_class.check_schema(schema, format_checker=validator_class.FORMAT_CHECKER)
    except SchemaError as error:
        raise SchemaProblem(f"is not a valid JSON Schema: {error.message}") from error
    except PatternError as error:
        raise SchemaProblem(f"has a pattern that cannot be used: {error}") from error
    except RecursionError as error:
        raise SchemaProblem("is nested too deeply to check") from error
    problem = unbounded_keyword_problem(schema)
    if problem is not None:
        raise SchemaProblem(problem)
    return validator_class(schema, registry=LOCAL_REGISTRY, format_checker=validator_class.FORMAT_CHECKER)


def _validator(case: CaseContext, label: str, schema_text: str) -> Any:
    try:
        return compiled_validator(schema_text)
    except SchemaProblem as error:
        raise Unscored(f"test case {case.test_case_key}: {label} {error}") from error


def _conforms(case: CaseContext, label: str, validator: Any, document: Any) -> bool:
    """Whether the document satisfies one schema; what keeps the check from finishing leaves the case unscored."""
    from referencing.exceptions import Unresolvable

    try:
        return bool(validator.is_valid(document))
    except Unresolvable as error:
        target = repr(error.ref) if error.ref else _cut(str(error))
        raise Unscored(
            f"test case {case.test_case_key}: schema reference cannot be resolved: {label} refers to {target}, "
            "which it does not define (only references inside the schema are followed; nothing is fetched)"
        ) from error
    except (PatternError, RecursionError) as error:
        raise Unscored(f"test case {case.test_case_key}: {label} cannot be checked: {_why(error)}") from error


@register
@dataclass
class JsonSchema(Evaluator):
    spec = EvaluatorSpec(
        id="json_schema",
        display_name="JSON Schema",
        description=(
            "Checks that the actual answer is valid JSON (a ```json fence around it is accepted) and that it "
            "validates against a JSON Schema: the schema given in the test case's constraints (a constraint "
            'that is a JSON object with a "$schema" or "type" key), else the json_schema parameter; an empty '
            "schema {} checks parseability only, also for cases without any schema unless "
            "check_cases_without_schema is off (as under --evaluators all). Invalid JSON and schema violations "
            "fail the case; a malformed schema, a remote $ref or a schema regex that runs out of time leaves it "
            "unscored. For RAG, JSON fragments in the retrieved context are checked too (Invalid retrieved "
            "JSON): for parseability only, since retrieved documents follow their own formats, not the answer's "
            "schema."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["actual_output"],
        metrics=verdict_metrics(
            [
                (
                    "model_passes",
                    "Valid JSON (pass)",
                    "Share of actual answers that parse as JSON and conform to the schema.",
                ),
                (
                    "model_failures",
                    "Invalid JSON (fail)",
                    "Share of actual answers that are not JSON or break the schema",
                ),
                (
                    "model_retrieval_failures",
                    "Invalid retrieved JSON",
                    "Share of RAG cases whose retrieved context holds a JSON fragment (a ```json block, or a chunk "
                    "that opens with { or [) that does not parse as JSON.",
                ),
                (
                    "model_generation_failures",
                    "Invalid generated JSON",
                    "Share of generated answers that fail JSON Schema validation (equal to the model failures).",
                ),
            ]
        ),
        keywords=["json", "json schema", "structured output", "format", "validation"],
    )

    golden = {
        "good": {
            "actual_output": '```json\n{"product": "Easy Access Saver", "rate": 3.25}\n```',
            "constraints": [
                '{"type": "object", "required": ["product", "rate"], '
                '"properties": {"product": {"type": "string"}, "rate": {"type": "number"}}}'
            ],
        },
        "bad": {
            "actual_output": "The Easy Access Saver pays 3.25% AER.",
            "constraints": ['{"type": "object", "required": ["product", "rate"]}'],
        },
    }

    json_schema: str = field(
        default="{}",
        metadata={
            "description": (
                "JSON Schema (as a JSON string) for cases without a schema constraint; {} checks only that the "
                "answer parses as JSON."
            )
        },
    )

    check_cases_without_schema: bool = field(
        default=True,
        metadata={
            "description": (
                "Whether a case with no schema constraint, a text response format and no json_schema parameter "
                "is checked for parseability as JSON (True, as when the evaluator is chosen by name) or left "
                "unscored as not applicable (False, what --evaluators all uses, so free-text answers of a "
                "question-answering suite are not counted as JSON failures)."
            )
        },
    )

    evaluate_retrieved_context: bool = field(
        default=True,
        metadata={"description": "Also check JSON fragments in the retrieved context (RAG) for invalid JSON."},
    )

    def not_applicable(self, case: CaseContext) -> str | None:
        """Where no JSON is expected (no schema constraint, a text response format, no json_schema parameter)
        the case is still checked for parseability unless ``check_cases_without_schema`` is off."""
        if self.check_cases_without_schema or self.json_schema.strip() != "{}":
            return None
        if schema_constraints(case.constraints) or case.response_format == "json":
            return None
        return "no JSON schema in its constraints, response format text, and no json_schema parameter"

    def score(self, case: CaseContext) -> Scored:
        sources = [
            (f"constraint {index + 1} (a JSON Schema)", text) for index, text in schema_constraints(case.constraints)
        ]
        sources = sources or [("the json_schema parameter", self.json_schema)]
        validators = [(label, _validator(case, label, text)) for label, text in sources]
        try:
            document, parse_error = load_json(case.actual_output or "")
        except RecursionError as error:
            raise Unscored(
                f"test case {case.test_case_key}: the answer nests too deeply to parse as JSON, so it cannot be checked"
            ) from error
        valid = parse_error is None and all(
            _conforms(case, label, validator, document) for label, validator in validators
        )
        failed = 0.0 if valid else 1.0
        retrieval, invalid_chunks = self._retrieved_json(case)
        scores = {"model_passes": 1.0 - failed, "model_failures": failed, "model_generation_failures": failed}
        if retrieval is not None:  # a case without retrieved context (an LLM) has no such metric
            scores["model_retrieval_failures"] = retrieval
        details: dict[str, Any] = {"retrieved_context": invalid_chunks} if invalid_chunks else {}
        if not valid:
            details |= {"parse_error": parse_error} if parse_error else validation_errors(validators, document)
        return Scored(scores=scores, details=details)

    def _retrieved_json(self, case: CaseContext) -> tuple[float | None, list[dict[str, Any]]]:
        """1.0 when a retrieved chunk holds a JSON fragment that does not parse, 0.0 when none does, None
        without retrieved context (or when it is not to be checked); plus where the invalid fragments are."""
        if not self.evaluate_retrieved_context or not case.retrieved_context:
            return None, []
        invalid = []
        for index, chunk in enumerate(case.retrieved_context):
            for fragment in json_fragments(chunk.text):
                try:
                    _, problem = load_json(fragment)
                except RecursionError:  # nested too deeply to parse: it may be valid, so it is no failure
                    continue
                if problem is not None:
                    where = {"chunk": index} | ({"doc_uri": chunk.doc_uri} if chunk.doc_uri else {})
                    invalid.append(where | {"parse_error": problem})
        return (1.0 if invalid else 0.0), invalid[:MAX_LISTED_ERRORS]
