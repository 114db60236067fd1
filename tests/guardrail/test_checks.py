"""The guard's verdicts on live answers, with the real MiniLM embedder (loaded once per session)."""

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, build_evaluator

from assay.guardrail.checks import Guard
from assay.guardrail.config import default_config_data, parse_config
from assay.guardrail.embedding import BoundedEmbedder

CONTEXT = ["Easy Access Saver: balances from £10,000 to £49,999 earn 3.25% AER. Interest is paid monthly."]
QUESTION = "What rate does the Easy Access Saver pay on £20,000?"


def _guard(engine, **extra) -> Guard:  # type: ignore[no-untyped-def]
    data = default_config_data() | {"parameters": {"toxicity": {"model": "/nonexistent/toxicity-model"}}} | extra
    guard = Guard(parse_config(data, source="<test>"), embedder_factory=lambda: engine)
    guard.warm_up()
    return guard


@pytest.fixture(scope="module")
def guard(engine) -> Guard:  # type: ignore[no-untyped-def]
    return _guard(engine)


def test_grounded_answer_is_allowed(guard: Guard) -> None:
    result = guard.check(QUESTION, "Balances from £10,000 to £49,999 earn 3.25% AER.", CONTEXT)
    assert result.verdict == "allow", result.reasons
    grounded = result.evaluator("groundedness").metrics[0]
    # Its words and figures settle the verdict: the score is given as the range the embedding model would refine.
    assert grounded.passed is True and grounded.score is None and grounded.score_between is not None
    low, high = grounded.score_between
    assert grounded.threshold <= low < high <= 1


def test_ungrounded_answer_is_flagged(guard: Guard) -> None:
    result = guard.check(QUESTION, "Balances from £10,000 to £49,999 earn 4.10% AER.", CONTEXT)
    assert result.verdict == "flag"
    assert any("groundedness" in reason for reason in result.reasons)
    (reason,) = [reason for reason in result.reasons if "groundedness" in reason]
    assert "groundedness = 0 (below" in reason  # a figure the context does not state: 0 whatever the cosine


def test_a_verdict_the_words_cannot_settle_embeds_the_deciding_claims(guard: Guard, engine) -> None:  # type: ignore[no-untyped-def]
    answer = "Easy Access balances earn interest monthly. Interest gets paid every month."
    grounded = guard.check(QUESTION, answer, CONTEXT).evaluator("groundedness")
    assert grounded.details["embedded_claims"] == 1, grounded.details  # the first claim's words settle it
    exact = build_evaluator("groundedness", Services(embedder_factory=lambda: engine)).score(
        CaseContext.build(test_case_key="x", question=QUESTION, retrieved_context=CONTEXT, actual_output=answer)
    )
    assert grounded.metrics[0].score == pytest.approx(exact.scores["groundedness"], abs=1e-5)
    assert grounded.metrics[0].passed is True and exact.details["embedded_claims"] == 2


def test_pii_in_answer_blocks_and_pii_only_in_context_flags(guard: Guard) -> None:
    leaked = guard.check(QUESTION, "Write to jane.doe@example.com about 3.25% AER.", CONTEXT)
    assert leaked.verdict == "block"
    assert any(reason.startswith("block: pii_leakage") for reason in leaked.reasons)
    in_context = guard.check(QUESTION, "It pays 3.25% AER.", [*CONTEXT, "Owner: jane.doe@example.com"])
    assert in_context.verdict == "flag", in_context.reasons


def test_no_context_leaves_groundedness_unscored_not_failed(guard: Guard) -> None:
    result = guard.check(QUESTION, "It pays 3.25% AER.")
    grounded = result.evaluator("groundedness")
    assert grounded.status == "unscored" and "retrieved_context" in (grounded.reason or "")
    assert grounded.metrics[0].score is None and grounded.metrics[0].passed is None
    assert result.verdict == "allow"


def test_unavailable_evaluator_is_reported_not_scored(guard: Guard) -> None:
    toxicity = guard.check(QUESTION, "It pays 3.25% AER.", CONTEXT).evaluator("toxicity")
    assert toxicity.status == "unavailable" and "nonexistent" in (toxicity.reason or "")
    assert all(metric.score is None and metric.passed is None for metric in toxicity.metrics)


def test_configured_action_overrides_default(engine) -> None:  # type: ignore[no-untyped-def]
    strict = _guard(engine, actions={"groundedness": "block"})
    assert strict.check(QUESTION, "It pays 4.10% AER.", CONTEXT).verdict == "block"


def test_bounded_embedder_encodes_each_text_once_and_forgets_the_oldest() -> None:
    calls: list[list[str]] = []

    class Fake:
        def encode(self, sentences, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(list(sentences))
            return np.ones((len(sentences), 3), dtype=np.float32)

    embedder = BoundedEmbedder("fake", capacity=2, loader=lambda model: Fake())
    assert embedder.embed(["a", "b", "a"]).shape == (3, 3)
    embedder.embed(["b"])
    embedder.embed(["c"])
    embedder.embed(["a"])
    assert calls == [["a", "b"], ["c"], ["a"]]


def test_the_service_embeds_with_onnx_by_default_and_the_setting_switches_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from assay.guardrail.checks import _default_embedder

    embedder = _default_embedder(threads=2)
    assert (embedder.backend, embedder.threads) == ("onnx", 2)
    assert embedder._encoder is None  # nothing loaded or converted until the guard warms up
    monkeypatch.setenv("ASSAY_GUARDRAIL_EMBEDDING_BACKEND", "torch")
    assert _default_embedder().backend == "torch"
