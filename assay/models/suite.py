"""Test suites: what to ask the system under test and what a good answer looks like."""

from typing import Literal

from pydantic import Field, FiniteFloat, model_validator

from assay.models.assertions import Assertion
from assay.models.base import DomainModel, PersistedModel

PERTURBATION = "perturbation"
"""Relationship type saying: this case is a perturbed variant of the case named by ``target``."""


class Relationship(DomainModel):
    """A typed link to another test case, e.g. this case is a perturbation of ``target``."""

    type: str
    target: str


class ConversationTurn(DomainModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    context: list[str] = Field(
        default_factory=list,
        description="Passages retrieved for this turn's answer, when known (a production session's earlier "
        "requests, imported from traces): what conversation-level groundedness checks the turn against.",
    )


class TestCase(DomainModel):
    __test__ = False  # not a pytest class

    key: str = Field(min_length=1)
    prompt: str
    expected_output: str = ""
    output_condition: str = Field(
        default="", description="Text-matching condition, see evaluators.conditions."
    )
    constraints: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    turns: list[ConversationTurn] = Field(default_factory=list)
    variables: dict[str, str] = Field(default_factory=dict)
    guidelines: list[str] = Field(default_factory=list)
    expected_retrieved_doc_uris: list[str] = Field(default_factory=list)
    reference_contexts: list[str] = Field(
        default_factory=list,
        description="Passages a correct retrieval returns (Ragas reference_contexts), kept as written; their ids "
        "are in expected_retrieved_doc_uris.",
    )
    sources: list[str] = Field(
        default_factory=list, description="Chunks the case was generated from, as '<doc_uri>#<chunk index>'."
    )
    assertions: list[Assertion] = Field(default_factory=list)
    response_format: Literal["text", "json"] = Field(
        default="text", description="A json response must parse as JSON (seed 004) before assertions apply."
    )
    weight: FiniteFloat = Field(
        default=1.0, ge=0, le=1, description="Weight of this case in weighted scores (seed 004)."
    )
    topic: str | None = None
    generator: str | None = Field(default=None, description="Who wrote the case: a person, a generator id...")

    @property
    def perturbation_of(self) -> str | None:
        """Key of the original case when this one is a perturbation of it."""
        return next((link.target for link in self.relationships if link.type == PERTURBATION), None)


class Test(DomainModel):
    """A group of test cases over the same documents."""

    __test__ = False

    key: str = Field(min_length=1)
    name: str = ""
    description: str = ""
    documents: list[str] = Field(default_factory=list)
    test_cases: list[TestCase] = Field(default_factory=list)


class TestSuite(PersistedModel):
    __test__ = False

    name: str
    description: str = ""
    tests: list[Test] = Field(default_factory=list)

    @model_validator(mode="after")
    def _keys_are_unique(self) -> "TestSuite":
        seen: set[str] = set()
        for test in self.tests:
            for case in test.test_cases:
                if case.key in seen:
                    raise ValueError(f"test case key {case.key!r} is used more than once")
                seen.add(case.key)
        return self

    def cases(self) -> list[tuple[Test, TestCase]]:
        """Every test case with the test it belongs to, in file order."""
        return [(test, case) for test in self.tests for case in test.test_cases]

    @property
    def case_count(self) -> int:
        return sum(len(test.test_cases) for test in self.tests)
