"""The services a run's evaluators share, built from Assay's settings: the embedding engine, the pair-score
store and, when configured, the LLM judge (their caches under the Assay cache folder). The flows' tasks and
the benches that measure them without Prefect build them here, so both score with the same caches."""

from functools import lru_cache
from pathlib import Path
from typing import Any

from assay.evaluators.base import Services

from assay.config import load_settings
from assay.embeddings import shared_engine
from assay.embeddings.keyed_store import SCORE_STORE_FILE, KeyedJsonStore
from assay.embeddings.sentences import use_sentence_store
from assay.models.judges import JudgeEndpoint, JudgeRunOptions


def configured_embedder():  # type: ignore[no-untyped-def]
    """The process's shared embedding engine for the configured model and cache folder."""
    settings = load_settings()
    return shared_engine(settings.embedding_model, settings.cache_path.resolve())


def _score_store() -> KeyedJsonStore:
    return _open_score_store(load_settings().cache_path.resolve() / SCORE_STORE_FILE)


@lru_cache(maxsize=4)
def _open_score_store(path: Path) -> KeyedJsonStore:
    """One connection per file per process, shared by every task run (an MRM run evaluates in three steps)."""
    return KeyedJsonStore(path, table="scores")


def run_services(judge: dict[str, Any] | None, judge_options: dict[str, Any] | None) -> Services:
    """The run's shared services: the embedding engine and, when ``judge`` configures one, the LLM judge
    (its cache under the Assay cache folder). Sentence splits and pair scores are kept in the same cache folder."""
    use_sentence_store(load_settings().cache_path.resolve())

    def judge_client():  # type: ignore[no-untyped-def]
        from assay.judges.client import open_judge

        return open_judge(JudgeEndpoint.model_validate(judge or {}), load_settings().cache_path.resolve() / "judge")

    return Services(
        embedder_factory=configured_embedder,
        judge_factory=judge_client,
        score_store_factory=_score_store,
        judge_options=JudgeRunOptions.model_validate(judge_options or {}),
    )
