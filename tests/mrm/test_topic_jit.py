"""numba's compiled UMAP kernels are kept on disk, so the topic-modeling step stops paying the JIT in every
process, and ``python -m assay.mrm.topic_jit`` fills a cold cache ahead of time (issue 12, MRM demo)."""

import subprocess
import sys
from importlib import import_module
from pathlib import Path

from assay.mrm.topic_jit import UMAP_KERNELS
from assay.mrm.topics import model_topics
from tests.mrm.test_topics import three_clusters


def test_a_topic_fit_leaves_umap_kernels_in_the_numba_cache_and_they_load_back() -> None:
    chunks, embedder = three_clusters()
    model = model_topics(chunks, embedder, grid=[{"min_topic_size": 3, "hdbscan_min_cluster_size": 3}], seed=0)
    assert len(model.topics) == 3
    from numba.core.caching import FunctionCache, NullCache

    for module_name, name in UMAP_KERNELS:
        kernel = getattr(import_module(module_name), name)
        assert isinstance(kernel._cache, FunctionCache), name
        assert kernel.signatures, f"{name} was not compiled by the fit"
        for signature in kernel.signatures:  # what a later process reads instead of compiling
            assert kernel._cache.load_overload(signature, kernel.targetctx) is not None, name
    parallel = import_module("umap.layouts")._nb_optimize_layout_euclidean_single_epoch_parallel
    assert isinstance(parallel._cache, NullCache)  # shares the serial kernel's cache key: never cached


WARM_THEN_FIT = """
import json
from importlib import import_module
from assay.mrm.topic_jit import UMAP_KERNELS, warm_up
from assay.mrm.topics import model_topics
from tests.mrm.test_topics import three_clusters

def signatures():
    return {name: sorted(map(str, getattr(import_module(module), name).signatures)) for module, name in UMAP_KERNELS}

warm_up()
warmed = signatures()
chunks, embedder = three_clusters()
model_topics(chunks, embedder, grid=[{"min_topic_size": 3, "hdbscan_min_cluster_size": 3}], seed=0)
print(json.dumps({"warmed": warmed, "fitted": signatures()}))
"""


def test_the_warm_up_compiles_the_signatures_a_topic_fit_asks_for() -> None:
    """A fresh process (this session's numba cache folder): after ``warm_up`` a real fit compiles nothing more."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", WARM_THEN_FIT],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
        check=True,
    )
    signatures = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(signatures["warmed"].values()), signatures["warmed"]
    assert signatures["fitted"] == signatures["warmed"]
