"""Failure clustering (MRM step 6): group the failed cases so a reviewer can name the weakness behind each group.

As the manual describes: embed the failed cases, reduce the embeddings, train a random forest whose leaves
define a proximity (cases sharing leaves across many trees are alike), and cluster on that proximity. The
forest is the unsupervised kind (Breiman; Shi & Horvath): it learns to tell the real failures from synthetic
points. Two kinds are used together because each alone failed (measured with these settings): a copy with
every column permuted keeps the marginals and only breaks dependence between columns, but PCA components are
uncorrelated by construction, so the forest learnt little and two obvious groups (the test's card and mortgage
questions) came out whole for 1 seed in 10; points drawn uniformly in the bounding box teach density, but on
the sample bank's results one skewed score column (groundedness, mostly 1.0) dominated and put 55 of 57
failures in one cluster. Together: the two groups for 10 seeds in 10, and six clusters of 5-14 on the bank.
"""

from collections.abc import Mapping, Sequence

import numpy as np

from assay.embeddings import Embedder
from assay.models import TestLab, TestLabRow
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import FailureCluster, FailureClusters
from assay.mrm.operational import quality_results

Thresholds = Mapping[tuple[str, str], float]
MAX_COMPONENTS = 5
LEAF_SIZE = 5
MAX_CLUSTERS = 8
MIN_CLUSTER_SIZE = 3
SILHOUETTE_TOLERANCE = 0.02
TREES = 300
KEYWORDS = 6
EXAMPLES = 3
QUESTION_WORDS = frozenset(
    {"does", "did", "work", "works", "happen", "happens", "need", "want", "tell", "know", "don", "ve", "ll", "re"}
)
"""Words of the question template, not of its subject; added to scikit-learn's English stop words."""


def failed_row_keys(
    lab: TestLab, results: Sequence[EvaluationResult], thresholds: Thresholds | None = None
) -> list[str]:
    """Row keys, in lab order, whose primary metric of at least one evaluator is on the bad side of its
    threshold (a calibrated one when given). Unscored cases are not failures: nothing was measured, and a slow
    or costly answer is no quality failure (operational metrics are left out, see ``assay.mrm.operational``)."""
    failed: set[str] = set()
    for result in quality_results(results):
        metric = result.evaluator.primary_metric
        threshold = result.threshold(metric.key, thresholds)
        if threshold is None:
            continue
        for scored in result.rows:
            score = scored.scores.get(metric.key)
            if score is not None and not metric.passes(score, threshold):
                failed.add(f"{scored.model_key}:{scored.test_case_key}")
    return [row.row_key for row in lab.rows if row.row_key in failed]


def cluster_failures(
    lab: TestLab,
    results: Sequence[EvaluationResult],
    embedder: Embedder,
    *,
    thresholds: Thresholds | None = None,
    min_failures: int = 5,
    seed: int = 0,
) -> FailureClusters:
    """Clusters of failed cases with their size, TF-IDF keywords, the most typical questions and mean scores.
    Too few failures is not an error (the manual counts the step as successful): no clusters, and a message.
    Operational metrics (latency, tokens, cost) are no quality features: wall-clock time would make the clusters
    of two runs on the same inputs differ."""
    results = quality_results(results)
    keys = failed_row_keys(lab, results, thresholds)
    if len(keys) < max(min_failures, 2):
        return FailureClusters(
            clusters=[],
            failures=len(keys),
            message=f"{len(keys)} failed cases, fewer than the {max(min_failures, 2)} needed to cluster failures",
        )
    rows = {row.row_key: row for row in lab.rows}
    failed = [rows[key] for key in keys]
    scores = _scores(failed, results)
    primary = {f"{result.evaluator.id}/{result.evaluator.primary_metric.key}" for result in results}
    primary_scores = {name: values for name, values in scores.items() if name in primary}
    features = np.hstack([_reduced_embeddings(failed, embedder, seed), _score_features(primary_scores, len(failed))])
    proximity = _forest_proximity(features, seed)
    labels, silhouette = _agglomerate(1.0 - proximity)
    members = [np.flatnonzero(labels == label) for label in np.unique(labels)]
    members.sort(key=lambda indices: (-len(indices), indices[0]))
    questions = [row.test_case.prompt for row in failed]
    keywords = _keywords([[questions[i] for i in indices] for indices in members])
    clusters = []
    for cluster_id, indices in enumerate(members):
        typical = indices[np.argsort(-proximity[np.ix_(indices, indices)].mean(axis=1), kind="stable")]
        clusters.append(
            FailureCluster(
                id=cluster_id,
                size=len(indices),
                row_keys=[keys[i] for i in indices],
                keywords=keywords[cluster_id],
                example_questions=list(dict.fromkeys(questions[i] for i in typical))[:EXAMPLES],
                mean_scores=_mean_scores(scores, indices),
            )
        )
    quality = f" (silhouette {silhouette:.2f})" if silhouette is not None else ""
    return FailureClusters(
        clusters=clusters, failures=len(keys), message=f"{len(keys)} failed cases in {len(clusters)} clusters{quality}"
    )


def _scores(failed: list[TestLabRow], results: Sequence[EvaluationResult]) -> dict[str, list[float | None]]:
    """'<evaluator>/<metric>' -> the failed rows' values (None: unscored), for every metric any row has."""
    index = {row.row_key: position for position, row in enumerate(failed)}
    columns: dict[str, list[float | None]] = {}
    for result in results:
        for scored in result.rows:
            position = index.get(f"{scored.model_key}:{scored.test_case_key}")
            if position is None:
                continue
            for metric, value in scored.scores.items():
                if value is not None and np.isfinite(value):
                    column = columns.setdefault(f"{result.evaluator.id}/{metric}", [None] * len(failed))
                    column[position] = float(value)
    return dict(sorted(columns.items()))


def _reduced_embeddings(failed: list[TestLabRow], embedder: Embedder, seed: int) -> np.ndarray:
    """PCA of the question + answer embeddings: the forest then splits on a few directions that carry the
    variance instead of hundreds of noisy dimensions."""
    from sklearn.decomposition import PCA

    texts = [f"{row.test_case.prompt}\n{row.actual_output or ''}" for row in failed]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    components = min(MAX_COMPONENTS, len(failed) - 1, vectors.shape[1])
    return PCA(n_components=components, svd_solver="full", random_state=seed).fit_transform(vectors)


def _score_features(scores: dict[str, list[float | None]], rows: int) -> np.ndarray:
    """Primary scores as columns (secondary metrics mostly restate them, e.g. failures = 1 - passes, and would
    outvote the embedding); an unscored value takes its column's median so it sides with no group."""
    columns = []
    for values in scores.values():
        known = [value for value in values if value is not None]
        fill = float(np.median(known))
        columns.append([fill if value is None else value for value in values])
    return np.array(columns, dtype=np.float64).T if columns else np.zeros((rows, 0))


def _forest_proximity(features: np.ndarray, seed: int) -> np.ndarray:
    """Share of trees in which two failures land in the same leaf, from a forest trained to tell the failures
    from synthetic points: half drawn uniformly in their bounding box (the forest learns where failures are
    dense), half a column-wise permuted copy (it learns which features go together)."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(seed)
    uniform = rng.uniform(features.min(axis=0), features.max(axis=0), size=features.shape)
    permuted = np.column_stack([rng.permutation(column) for column in features.T])
    samples = np.vstack([features, uniform, permuted])
    labels = np.r_[np.ones(len(features)), np.zeros(2 * len(features))]
    forest = RandomForestClassifier(n_estimators=TREES, min_samples_leaf=LEAF_SIZE, random_state=seed)
    leaves = forest.fit(samples, labels).apply(features)
    return (leaves[:, None, :] == leaves[None, :, :]).mean(axis=2)


def _agglomerate(distance: np.ndarray) -> tuple[np.ndarray, float | None]:
    """Average-linkage clusters on the forest distance, k from 2 to as many as leave about three failures per
    cluster (at most 8: more groups than that no reviewer names). k is the smallest whose silhouette is within
    ``SILHOUETTE_TOLERANCE`` of the best: forest proximities are noisy, and a split that fits barely better is
    not worth another weakness to name (tried: two obvious groups otherwise came out as four for 2 seeds in 25)."""
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import silhouette_score

    np.fill_diagonal(distance, 0.0)
    fits: list[tuple[float, np.ndarray]] = []
    for k in range(2, min(MAX_CLUSTERS, len(distance) // MIN_CLUSTER_SIZE) + 1):
        labels = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="average").fit_predict(distance)
        fits.append((float(silhouette_score(distance, labels, metric="precomputed")), labels))
    if not fits:
        return np.zeros(len(distance), dtype=int), None
    best = max(score for score, _ in fits)
    score, labels = next(fit for fit in fits if fit[0] >= best - SILHOUETTE_TOLERANCE)
    return labels, score


def _keywords(groups: list[list[str]]) -> list[list[str]]:
    """Top TF-IDF terms of each cluster, its questions taken together as one document, so words shared by every
    cluster ("bank") rank below the words that set a cluster apart; bigrams never straddle two questions, and
    numbers ("000" of "£20,000") are not words."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    words = TfidfVectorizer(
        stop_words=sorted(ENGLISH_STOP_WORDS | QUESTION_WORDS),
        ngram_range=(1, 2),
        token_pattern=r"(?u)\b[^\W\d_]{2,}\b",
    )
    terms_of = words.build_analyzer()
    vectorizer = TfidfVectorizer(
        analyzer=lambda questions: [t for q in questions for t in terms_of(q)], sublinear_tf=True
    )
    try:
        weights = vectorizer.fit_transform(groups).toarray()
    except ValueError:  # nothing but stop words
        return [[] for _ in groups]
    terms = vectorizer.get_feature_names_out()
    return [[str(terms[i]) for i in np.lexsort((terms, -row))[:KEYWORDS] if row[i] > 0] for row in weights]


def _mean_scores(scores: dict[str, list[float | None]], indices: np.ndarray) -> dict[str, float]:
    means = {}
    for name, values in scores.items():
        known = [value for i in indices if (value := values[i]) is not None]
        if known:
            means[name] = float(np.mean(known))
    return means
