"""Shared fixtures for the format tests: Assay objects that use every field a format can carry."""

from pathlib import Path

import pytest

from assay.models import (
    Assertion,
    ConversationTurn,
    ModelHost,
    Relationship,
    RetrievedChunk,
    Test,
    TestCase,
    TestLab,
    TestLabRow,
    TestSuite,
    ToolCall,
)

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def rich_suite() -> TestSuite:
    """A suite using every TestCase field, including those Eval Studio does not know."""
    capital = TestCase(
        key="capital",
        prompt="What is the capital of France?",
        expected_output="Paris",
        output_condition='"Paris" AND NOT "Lyon"',
        constraints=["answer in one word"],
        categories=["geography", "factual"],
        guidelines=["Answer in English"],
        expected_retrieved_doc_uris=["france.md"],
        sources=["france.md#0"],
        topic="geography",
        generator="analyst",
        assertions=[
            Assertion(type="CONTAINS_ANY", targets=["Paris", "paris"], ignore_case=True, weight=0.5),
            Assertion(type="LATENCY", threshold=2.0, negate=True),
        ],
        response_format="text",
        weight=0.8,
    )
    perturbed = TestCase(
        key="capital-typo",
        prompt="What is the captial of France?",
        expected_output="Paris",
        relationships=[Relationship(type="perturbation", target="capital")],
        turns=[
            ConversationTurn(role="system", content="Be brief."),
            ConversationTurn(role="user", content="Hi"),
            ConversationTurn(role="assistant", content="Hello!"),
        ],
        variables={"country": "France"},
    )
    other = TestCase(key="river", prompt="Which river flows through Paris?", expected_output="The Seine")
    return TestSuite(
        name="Geography",
        description="Capitals and rivers.",
        tests=[
            Test(
                key="t-capitals",
                name="Capitals",
                description="Capital cities",
                documents=["france.md"],
                test_cases=[capital, perturbed],
            ),
            Test(key="t-rivers", test_cases=[other]),
        ],
    )


@pytest.fixture
def rich_lab(rich_suite: TestSuite) -> TestLab:
    """Two models answering the suite, with every row field in use (errors, tokens, scored context...)."""
    rag = ModelHost(
        key="rag",
        type="h2ogpte",
        name="RAG",
        url="https://rag.example.com",
        secret_ref="RAG_API_KEY",
        llm_model_name="llama-3-70b",
        settings={"connection": "conn-1", "documents": ["france.md"], "model_cfg": {"temperature": 0.0}},
    )
    llm = ModelHost(key="llm", type="openai_chat", llm_model_name="gpt-4o")
    rows = []
    for test, case in rich_suite.cases():
        rows.append(
            TestLabRow(
                test_case=case,
                test_key=test.key,
                model_key="rag",
                actual_output=f"RAG answer to {case.key}",
                context=[
                    RetrievedChunk(
                        text="Paris is the capital of France.", doc_uri="france.md", rank=0, score=0.9
                    ),
                    RetrievedChunk(text="Lyon is a large city.", doc_uri="france.md", rank=1, score=0.4),
                ],
                actual_duration=1.5,
                cost=0.002,
                input_tokens=120,
                output_tokens=12,
                tool_calls=[ToolCall(name="search", arguments={"q": case.prompt})],
            )
        )
        rows.append(
            TestLabRow(
                test_case=case,
                test_key=test.key,
                model_key="llm",
                actual_output=None,
                context=[RetrievedChunk(text="plain chunk")],
                error="timeout after 30s",
                attempts=3,
            )
        )
    return TestLab(name="Geography lab", description="RAG vs LLM", models=[rag, llm], rows=rows)
