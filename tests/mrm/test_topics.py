"""MRM step 1: topic modeling on the bundled sample corpus with the real MiniLM engine, and on tiny
hand-made inputs with a fake embedder (fallbacks, validation, clusters known in advance)."""

from collections.abc import Sequence

import numpy as np
import pytest

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.embeddings import EmbeddingEngine
from assay.models import Chunk
from assay.models.mrm import TopicModel
from assay.mrm.topics import default_grid, model_topics


class FakeEmbedder:
    """Fixed vectors per text, counting calls: the step must embed all chunks in one call."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return np.stack([self.vectors[text] for text in texts])


def three_clusters() -> tuple[list[Chunk], FakeEmbedder]:
    """30 chunks in three well-separated groups (cards, savings, mortgages)."""
    rng = np.random.default_rng(7)
    words = {"card": "card payment contactless", "saver": "saver interest deposit", "mortgage": "mortgage home loan"}
    chunks, vectors = [], {}
    for group, (name, text) in enumerate(words.items()):
        centre = np.zeros(16)
        centre[group] = 1.0
        for index in range(10):
            chunk = Chunk(doc_uri=f"{name}.md", index=index, text=f"{text} {name} note {index}")
            vector = centre + rng.normal(scale=0.05, size=16)
            vectors[chunk.text] = vector / np.linalg.norm(vector)
            chunks.append(chunk)
    return chunks, FakeEmbedder(vectors)


@pytest.fixture(scope="module")
def sample_chunks() -> list[Chunk]:
    return chunk_corpus(load_corpus(sample_data_path() / "corpus"))


@pytest.fixture(scope="module")
def sample_model(sample_chunks: list[Chunk], engine: EmbeddingEngine) -> TopicModel:
    return model_topics(sample_chunks, engine, seed=0)


def test_sample_corpus_topics(sample_model: TopicModel, sample_chunks: list[Chunk]) -> None:
    assert len(sample_model.topics) >= 3
    placed = [ref for topic in sample_model.topics for ref in topic.chunk_refs] + sample_model.outlier_chunk_refs
    assert sorted(placed) == sorted(chunk.ref for chunk in sample_chunks)  # each chunk exactly once
    labels = [topic.label for topic in sample_model.topics]
    assert len(set(labels)) == len(labels)
    for topic in sample_model.topics:
        assert topic.label == ", ".join(topic.keywords[:3])
        assert len(topic.keywords) == sample_model.config["top_n_words"]
        assert not {"the", "and", "harbourline", "0800"} & set(topic.keywords)  # stop words, corpus words, numbers
        assert topic.representative and topic.representative.split()[0] in {
            chunk.text.split()[0] for chunk in sample_chunks if chunk.ref in topic.chunk_refs
        }


def test_sample_corpus_keeps_the_best_silhouette_of_the_grid(
    sample_model: TopicModel, sample_chunks: list[Chunk]
) -> None:
    grid = sample_model.grid
    assert len(grid) == len(default_grid(len(sample_chunks)))
    assert {"clustering", "silhouette", "topics", "outliers", "umap_n_neighbors"} <= set(grid[0])
    assert {entry["clustering"] for entry in grid} == {"hdbscan", "kmeans"}
    scores = [entry["silhouette"] for entry in grid if entry["silhouette"] is not None]
    assert sample_model.silhouette == max(scores)
    kept = next(entry for entry in grid if entry["silhouette"] == sample_model.silhouette)
    assert kept["topics"] == len(sample_model.topics)
    assert kept["outliers"] == len(sample_model.outlier_chunk_refs)
    assert sample_model.config["method"] == "bertopic"
    assert sample_model.config["seed"] == 0


def test_sample_corpus_is_deterministic_with_the_seed(
    sample_model: TopicModel, sample_chunks: list[Chunk], engine: EmbeddingEngine
) -> None:
    assert model_topics(sample_chunks, engine, seed=0) == sample_model


def test_known_clusters_are_found_and_embedded_once() -> None:
    chunks, embedder = three_clusters()
    model = model_topics(
        chunks, embedder, grid=[{"clustering": "kmeans", "kmeans_n_clusters": 3, "min_topic_size": 2}], seed=0
    )
    assert embedder.calls == 1
    assert sorted(sorted(topic.chunk_refs) for topic in model.topics) == [
        sorted(f"{name}.md#{index}" for index in range(10)) for name in ("card", "mortgage", "saver")
    ]
    assert {topic.keywords[0] for topic in model.topics} == {"card", "saver", "mortgage"}
    assert model.silhouette is not None and model.silhouette > 0.5
    assert model.grid[0]["topics"] == 3 and model.grid[0]["outliers"] == 0
    assert model.outlier_chunk_refs == []


def test_tiny_corpus_falls_back_to_one_tf_idf_topic() -> None:
    texts = ["Card fees and card limits.", "Card limits per day.", "Savings rates."]
    chunks = [Chunk(doc_uri="doc.md", index=index, text=text) for index, text in enumerate(texts)]
    embedder = FakeEmbedder({text: np.eye(3)[index] for index, text in enumerate(texts)})
    model = model_topics(chunks, embedder)
    assert embedder.calls == 1
    assert model.config["method"] == "single topic (fallback)"
    assert model.config["reason"] == "only 3 chunks (fewer than 10): too few to cluster"
    (topic,) = model.topics
    assert topic.chunk_refs == ["doc.md#0", "doc.md#1", "doc.md#2"]
    assert topic.keywords[:2] == ["card", "limits"]
    assert topic.label == "card, limits, " + topic.keywords[2]
    assert model.silhouette is None and model.grid == []


def test_a_grid_that_finds_no_two_topics_falls_back_and_records_it() -> None:
    chunks, embedder = three_clusters()
    model = model_topics(chunks, embedder, grid=[{"hdbscan_min_cluster_size": 100, "min_topic_size": 100}])
    assert model.config["reason"] == "no configuration of the grid found 2 or more topics"
    assert len(model.topics) == 1 and len(model.topics[0].chunk_refs) == 30
    assert model.grid[0]["silhouette"] is None and model.grid[0]["topics"] == 0


def test_bad_input_is_refused_with_the_reason() -> None:
    chunks, embedder = three_clusters()
    with pytest.raises(ValueError, match=r"unknown topic modeling parameter\(s\) \['n_topics'\]"):
        model_topics(chunks, embedder, grid=[{"n_topics": 3}])
    with pytest.raises(ValueError, match="clustering must be 'hdbscan' or 'kmeans'"):
        model_topics(chunks, embedder, grid=[{"clustering": "spectral"}])
    with pytest.raises(ValueError, match="needs at least one chunk"):
        model_topics([], embedder)


def test_default_grid_scales_with_the_corpus() -> None:
    small, large = default_grid(130), default_grid(2000)
    assert small[0]["min_topic_size"] == 4 and large[0]["min_topic_size"] == 15
    assert [entry["kmeans_n_clusters"] for entry in small if entry.get("clustering") == "kmeans"] == [8, 12]


def test_the_users_parameters_are_fixed_in_every_configuration_tried() -> None:
    from assay.models.workflow import TopicModelingParameters
    from assay.mrm.topics import grid_for

    assert grid_for(TopicModelingParameters(), 130) is None  # nothing set: model_topics' own grid
    fixed = grid_for(TopicModelingParameters(umap_n_neighbors=7, chunk_words=60), 130)
    assert fixed is not None and len(fixed) == len(default_grid(130))
    assert all(config["umap_n_neighbors"] == 7 for config in fixed)
    assert all("chunk_words" not in config for config in fixed)  # a chunking choice, not a topic model's
