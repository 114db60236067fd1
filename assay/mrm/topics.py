"""MRM step 1, topic modeling (seed 002 "Topic modeling"): cluster the corpus chunks into topics that test
generation then works through, so the generated suite covers what the corpus is actually about.

The manual's method: reduce the chunk embeddings with UMAP, cluster them (HDBSCAN or k-means), name each
cluster by its top c-TF-IDF words, try several parameter settings and keep the one with the best silhouette.
Chunks are embedded once by the caller's engine; BERTopic only clusters and names (no model inside it).
"""

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.embeddings.engine import Embedder
from assay.models import Chunk
from assay.models.mrm import Topic, TopicModel
from assay.models.workflow import TopicModelingParameters
from assay.mrm.topic_jit import umap_reducer
from assay.progress import Progress, embed_reporting, part, report

MIN_CHUNKS_TO_CLUSTER = 10
REPRESENTATIVE_CHARS = 400
LABEL_KEYWORDS = 3
# Words of 3+ letters: phone numbers, amounts and contraction tails ("0800", "555", "ll") make poor names.
WORD_TOKENS = r"(?u)\b[^\W\d_]{3,}\b"
# Words in more than this share of the chunks name no topic (the organisation's name, "account", "policy").
CORPUS_STOP_SHARE = 1 / 3
EMBEDDING_SHARE = 0.1
"""Of the step's progress: embedding a few hundred chunks takes seconds, the grid of fits minutes."""
UMAP_SHARE = 0.7
"""Of one configuration's fit: UMAP's epochs, before clustering, naming and the silhouette."""

DEFAULTS: dict[str, Any] = {
    "clustering": "hdbscan",
    "top_n_words": 10,
    "min_topic_size": 5,
    "umap_n_neighbors": 15,
    "umap_n_components": 5,
    "umap_min_dist": 0.0,
    "hdbscan_min_cluster_size": 5,
    "hdbscan_min_samples": None,
    "hdbscan_cluster_selection_epsilon": 0.0,
    "kmeans_n_clusters": 8,
}
"""The manual's step parameters. It publishes no defaults: these are BERTopic's, with the minimum sizes
lowered from 10 to 5 because a corpus of a few hundred chunks has topics of a handful of chunks;
``default_grid`` scales them to the corpus."""


def default_grid(n_chunks: int) -> list[dict[str, Any]]:
    """A small grid scaled to the corpus: minimum sizes and k grow with the square root of the chunk count
    (4 and 8 for the ~130-chunk sample), so a 2,000-chunk corpus does not splinter into a hundred topics.
    Each entry changes one or two manual parameters from the first; k-means is the manual's alternative."""
    size = max(3, round(math.sqrt(n_chunks) / 3))
    k = max(2, round(math.sqrt(n_chunks / 2)))
    base = {"min_topic_size": size, "hdbscan_min_cluster_size": size}
    dense = {"hdbscan_min_samples": max(1, size // 2)}
    return [
        base,
        {**base, "umap_n_neighbors": 10},
        {**base, **dense},
        {**base, **dense, "umap_n_neighbors": 10},
        {"min_topic_size": size + 2, "hdbscan_min_cluster_size": size + 2},
        {**base, "hdbscan_cluster_selection_epsilon": 0.5},
        {"clustering": "kmeans", "kmeans_n_clusters": k, "min_topic_size": 2},
        {"clustering": "kmeans", "kmeans_n_clusters": round(1.5 * k), "min_topic_size": 2},
    ]


def grid_for(parameters: TopicModelingParameters, n_chunks: int) -> list[dict[str, Any]] | None:
    """The configurations step 1 tries: the default grid with the manual's parameters the user set fixed in
    every entry, or None (``model_topics``' own default grid) when the user set none."""
    overrides = parameters.overrides()
    return [{**config, **overrides} for config in default_grid(n_chunks)] if overrides else None


def model_topics(
    chunks: Sequence[Chunk],
    embedder: Embedder,
    *,
    grid: Sequence[dict] | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> TopicModel:
    """Embed every chunk once, fit each grid configuration, keep the best silhouette (>= 2 topics).
    ``progress`` hears the fraction done (0..1): after each batch of embeddings (the first tenth; loading the
    model comes first) and twice per configuration, once its UMAP is fitted and once it is clustered and
    scored: a configuration's fit takes from seconds to a minute, UMAP most of it."""
    if not chunks:
        raise ValueError("topic modeling needs at least one chunk; the corpus gave none")
    texts = [chunk.text for chunk in chunks]
    embeddings = np.asarray(embed_reporting(embedder, texts, part(progress, 0.0, EMBEDDING_SHARE)), dtype=np.float32)
    if len(chunks) < MIN_CHUNKS_TO_CLUSTER:
        reason = f"only {len(chunks)} chunks (fewer than {MIN_CHUNKS_TO_CLUSTER}): too few to cluster"
        report(progress, 1.0)
        return _single_topic(chunks, embeddings, reason, [])
    configs = [_resolve(overrides) for overrides in (default_grid(len(chunks)) if grid is None else grid)]
    if not configs:
        raise ValueError("the topic modeling grid is empty: give at least one configuration")
    neighbours = cosine_neighbours(embeddings)
    stop_words = _stop_words(texts)
    records: list[dict[str, Any]] = []
    reductions: dict[tuple[Any, ...], _SharedReduction] = {}
    best: tuple[float, dict[str, Any], Any, np.ndarray] | None = None
    share = (1.0 - EMBEDDING_SHARE) / len(configs)
    for done, config in enumerate(configs, start=1):
        config_progress = part(progress, EMBEDDING_SHARE + share * (done - 1), EMBEDDING_SHARE + share * done)
        fitted, labels, reduced = _fit(
            config, chunks, embeddings, neighbours, stop_words, seed, config_progress, reductions
        )
        kept = labels != -1
        n_topics = len(set(labels[kept].tolist()))
        silhouette = None
        if n_topics >= 2 and kept.sum() > n_topics:
            from sklearn.metrics import silhouette_score

            silhouette = round(float(silhouette_score(reduced[kept], labels[kept])), 6)
        records.append({**config, "silhouette": silhouette, "topics": n_topics, "outliers": int((~kept).sum())})
        if silhouette is not None and (best is None or silhouette > best[0]):
            best = (silhouette, config, fitted, labels)
        report(config_progress, 1.0)
    if best is None:
        return _single_topic(chunks, embeddings, "no configuration of the grid found 2 or more topics", records)
    silhouette, config, fitted, labels = best
    topics = [
        _topic(topic_id, _keywords(fitted.get_topic(topic_id)), chunks, embeddings, labels == topic_id)
        for topic_id in sorted(set(labels.tolist()) - {-1})
    ]
    outliers = [chunk.ref for chunk, label in zip(chunks, labels, strict=True) if label == -1]
    return TopicModel(
        topics=_unique_labels(topics),
        outlier_chunk_refs=outliers,
        config={**config, "method": "bertopic", "seed": seed, "corpus_stop_words": sorted(stop_words[1])},
        silhouette=silhouette,
        grid=records,
    )


def _resolve(overrides: dict) -> dict[str, Any]:
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown topic modeling parameter(s) {unknown}; expected some of {sorted(DEFAULTS)}")
    config = {**DEFAULTS, **overrides}
    if config["clustering"] not in ("hdbscan", "kmeans"):
        raise ValueError(f"clustering must be 'hdbscan' or 'kmeans', got {config['clustering']!r}")
    unused = "hdbscan_" if config["clustering"] == "kmeans" else "kmeans_"
    return {key: value for key, value in config.items() if not key.startswith(unused)}


def cosine_neighbours(embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact cosine neighbours of every chunk, sorted. UMAP would compute the same, but its numba kernel
    for it compiles for ~10 s on first use; a few hundred chunks take milliseconds in numpy."""
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    unit = embeddings / np.where(norms == 0, 1.0, norms)
    distances = np.clip(1.0 - unit @ unit.T, 0.0, None)
    np.fill_diagonal(distances, 0.0)
    order = np.argsort(distances, axis=1, kind="stable")
    return order, np.take_along_axis(distances, order, axis=1)


def _stop_words(texts: list[str]) -> tuple[list[str], set[str]]:
    """English stop words plus the corpus's own ubiquitous words; returns (all of them, the corpus's)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    vectorizer = CountVectorizer(stop_words="english", token_pattern=WORD_TOKENS, binary=True)
    shares = np.asarray(vectorizer.fit_transform(texts).sum(axis=0)).ravel() / len(texts)
    frequent = {
        str(word)
        for word, share in zip(vectorizer.get_feature_names_out(), shares, strict=True)
        if share > CORPUS_STOP_SHARE
    }
    return sorted(ENGLISH_STOP_WORDS | frequent), frequent


def _fit(
    config: dict[str, Any],
    chunks: Sequence[Chunk],
    embeddings: np.ndarray,
    neighbours: tuple[np.ndarray, np.ndarray],
    stop_words: tuple[list[str], set[str]],
    seed: int,
    progress: Progress | None = None,
    reductions: dict[tuple[Any, ...], "_SharedReduction"] | None = None,
) -> tuple[Any, np.ndarray, np.ndarray]:
    """One configuration's BERTopic fit: its labels and the reduced embeddings they were clustered in.
    ``reductions`` (kept by the caller over a grid) lets configurations with the same UMAP settings share one
    UMAP fit."""
    from bertopic import BERTopic
    from sklearn.feature_extraction.text import CountVectorizer

    n = len(chunks)
    setting = tuple(config[name] for name in UMAP_SETTINGS)
    reductions = {} if reductions is None else reductions
    if setting not in reductions:
        reductions[setting] = _SharedReduction(umap_reducer(config, n, neighbours, seed))
    umap = reductions[setting]
    model = BERTopic(
        embedding_model=None,
        umap_model=umap,
        hdbscan_model=_MinimumTopicSize(_clusterer(config, n, seed), int(config["min_topic_size"]), progress),
        vectorizer_model=CountVectorizer(stop_words=stop_words[0], token_pattern=WORD_TOKENS),
        top_n_words=int(config["top_n_words"]),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UMAP's notes on n_jobs under a seed and on the precomputed neighbours
        labels, _ = model.fit_transform([chunk.text for chunk in chunks], embeddings=embeddings)
    return model, np.asarray(labels), np.asarray(umap.embedding_)


UMAP_SETTINGS = ("umap_n_neighbors", "umap_n_components", "umap_min_dist")
"""What a configuration's UMAP depends on besides the chunks and the seed (``umap_reducer``)."""


class _SharedReduction:
    """A UMAP fitted once and handed to every configuration of a grid search with the same UMAP settings: the
    default grid has 8 configurations but only 2 UMAP settings, and UMAP is most of a fit's time. Under a seed
    UMAP is deterministic, so the shared reduction is the one each configuration would have fitted again."""

    def __init__(self, reducer: Any) -> None:
        self.reducer = reducer
        self.fitted = False

    @property
    def embedding_(self) -> np.ndarray:
        return self.reducer.embedding_

    def fit(self, features: np.ndarray, y: Any = None) -> "_SharedReduction":
        if not self.fitted:
            self.reducer.fit(features, y=y)
            self.fitted = True
        return self

    def fit_transform(self, features: np.ndarray, y: Any = None) -> np.ndarray:
        return np.array(self.fit(features, y).embedding_, copy=True)

    def transform(self, features: np.ndarray) -> np.ndarray:
        return self.reducer.transform(features)


def _clusterer(config: dict[str, Any], n: int, seed: int) -> Any:
    if config["clustering"] == "kmeans":
        from sklearn.cluster import KMeans

        clusters = max(2, min(int(config["kmeans_n_clusters"]), n - 1))
        return KMeans(n_clusters=clusters, n_init=10, random_state=seed)
    from hdbscan import HDBSCAN

    return HDBSCAN(
        min_cluster_size=max(2, int(config["hdbscan_min_cluster_size"])),
        min_samples=config["hdbscan_min_samples"],
        cluster_selection_epsilon=float(config["hdbscan_cluster_selection_epsilon"]),
    )


class _MinimumTopicSize:
    """The manual's "minimum topic size" for any clusterer: smaller clusters become outliers. BERTopic only
    applies min_topic_size to the HDBSCAN it builds itself, and k-means has no such notion."""

    def __init__(self, clusterer: Any, min_size: int, progress: Progress | None = None) -> None:
        """``progress`` (of the configuration's fit) hears UMAP_SHARE when BERTopic hands over the reduced
        embeddings: UMAP is done."""
        self.clusterer = clusterer
        self.min_size = min_size
        self.progress = progress
        self.labels_ = np.zeros(0, dtype=int)

    def fit(self, features: np.ndarray, y: Any = None) -> "_MinimumTopicSize":
        report(self.progress, UMAP_SHARE)
        self.clusterer.fit(features)
        raw = np.asarray(self.clusterer.labels_)
        sizes = Counter(raw.tolist())
        kept = sorted(label for label, size in sizes.items() if label != -1 and size >= self.min_size)
        renumber = {label: index for index, label in enumerate(kept)}
        self.labels_ = np.array([renumber.get(label, -1) for label in raw.tolist()], dtype=int)
        return self


def _keywords(words: Any) -> list[str]:
    return [word for word, _ in (words or []) if word]


def _topic(topic_id: int, keywords: list[str], chunks: Sequence[Chunk], embeddings: np.ndarray, mask: Any) -> Topic:
    members = [chunk for chunk, member in zip(chunks, mask, strict=True) if member]
    vectors = embeddings[np.asarray(mask)]
    centroid = vectors.mean(axis=0)
    nearest = int(np.argmax(vectors @ centroid))
    return Topic(
        id=topic_id,
        label=", ".join(keywords[:LABEL_KEYWORDS]) or f"topic {topic_id}",
        keywords=keywords,
        chunk_refs=[chunk.ref for chunk in members],
        representative=_truncate(members[nearest].text),
    )


def _truncate(text: str) -> str:
    if len(text) <= REPRESENTATIVE_CHARS:
        return text
    return text[:REPRESENTATIVE_CHARS].rsplit(" ", 1)[0] + " ..."


def _unique_labels(topics: list[Topic]) -> list[Topic]:
    """Test cases name their topic by label, so two topics must never share one."""
    counts = Counter(topic.label for topic in topics)
    return [
        topic.model_copy(update={"label": f"{topic.label} (topic {topic.id})"}) if counts[topic.label] > 1 else topic
        for topic in topics
    ]


def _single_topic(
    chunks: Sequence[Chunk], embeddings: np.ndarray, reason: str, records: list[dict[str, Any]]
) -> TopicModel:
    """One topic holding every chunk, named by TF-IDF: the fallback when clustering is not meaningful."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    top_n = int(DEFAULTS["top_n_words"])
    try:
        tfidf = TfidfVectorizer(stop_words="english", token_pattern=WORD_TOKENS)
        weights = np.asarray(tfidf.fit_transform([chunk.text for chunk in chunks]).sum(axis=0)).ravel()
        vocabulary = tfidf.get_feature_names_out()
        ranked = sorted(range(len(vocabulary)), key=lambda index: (-weights[index], vocabulary[index]))
        keywords = [str(vocabulary[index]) for index in ranked[:top_n]]
    except ValueError:  # nothing but stop words and numbers
        keywords = []
    topic = _topic(0, keywords, chunks, embeddings, [True] * len(chunks))
    return TopicModel(
        topics=[topic],
        config={"method": "single topic (fallback)", "reason": reason, "keywords": "tf-idf", "top_n_words": top_n},
        silhouette=None,
        grid=records,
    )
