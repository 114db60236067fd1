"""Keep numba's compilation out of the topic-modeling step's time.

UMAP and its dependency pynndescent are numba code. Measured on the 2-core machine with an empty
``NUMBA_CACHE_DIR`` (a new Assay home): ``import umap`` compiles pynndescent for ~21 s, and the first UMAP fit
compiles UMAP's own kernels for ~7 s; the step also embeds the corpus, which first imports and loads MiniLM
(~17 s). Two things help:

- UMAP declares its fit kernels without ``cache=True``, so every process compiled them again, cold or warm;
  :func:`cache_umap_kernels` keeps them in numba's on-disk cache, and a later process loads them (~0.3 s);
- ``python -m assay.mrm.topic_jit`` (:func:`warm_up`) fills a cold cache ahead of time, e.g. when a CI image
  or a fresh Assay home is prepared, so the first run does not pay the ~28 s either.

The code loaded from the cache is what compilation produces, so the topics do not change. Tried and left out:
compiling in a separate process while the step embeds the chunks saved 8 s of a cold 52 s step once and
nothing the next time (2 shared cores), and made a step with a fast embedder wait for it.
"""

from functools import cache
from typing import Any

import numpy as np

UMAP_KERNELS = (
    ("umap.umap_", "smooth_knn_dist"),
    ("umap.umap_", "compute_membership_strengths"),
    ("umap.layouts", "_nb_optimize_layout_euclidean_single_epoch"),
)
"""The kernels a seeded UMAP fit compiles. The parallel epoch kernel is left alone: numba's cache key does not
tell it from the serial variant of the same function, and a seeded UMAP never runs it."""
WARM_UP_POINTS = 60
EMBEDDING_DIMENSIONS = 384  # MiniLM's; the kernels' signatures depend on dtypes, not on sizes


@cache
def cache_umap_kernels() -> None:
    """Have numba keep UMAP's fit kernels in its on-disk cache (idempotent; call before the first fit)."""
    from importlib import import_module

    from numba.core.caching import NullCache

    for module_name, name in UMAP_KERNELS:  # a UMAP version without one of them compiles it as before
        kernel = getattr(import_module(module_name), name, None)
        if isinstance(getattr(kernel, "_cache", None), NullCache):
            kernel.enable_caching()


def umap_reducer(config: dict[str, Any], n: int, neighbours: tuple[np.ndarray, np.ndarray], seed: int) -> Any:
    """The step's UMAP for one grid configuration, on precomputed exact cosine neighbours."""
    from umap import UMAP

    cache_umap_kernels()
    k = max(2, min(int(config["umap_n_neighbors"]), n - 1))
    order, distances = neighbours
    return UMAP(
        n_neighbors=k,
        n_components=max(2, min(int(config["umap_n_components"]), n - 2)),
        min_dist=float(config["umap_min_dist"]),
        metric="cosine",
        random_state=seed,
        precomputed_knn=(order[:, :k], distances[:, :k], None),
    )


def warm_up() -> None:
    """Import UMAP (compiling pynndescent) and fit the default configuration's UMAP on random unit vectors of
    the embeddings' dtype, so the cached kernels have the signatures the step's fits ask for."""
    import warnings

    from assay.mrm.topics import DEFAULTS, cosine_neighbours

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(WARM_UP_POINTS, EMBEDDING_DIMENSIONS)).astype(np.float32)
    reducer = umap_reducer(DEFAULTS, WARM_UP_POINTS, cosine_neighbours(vectors), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer.fit_transform(vectors)


if __name__ == "__main__":
    warm_up()
