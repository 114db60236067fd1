"""Test-wide setup: everything offline, all state in a temporary Assay home, one embedding engine."""

import os
import tempfile
from pathlib import Path

_HOME = Path(tempfile.mkdtemp(prefix="assay-test-home-"))
os.environ["ASSAY_HOME"] = str(_HOME)
os.environ.pop("ASSAY_CONFIG", None)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["PREFECT_HOME"] = str(_HOME / "prefect")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
# Commands under test use the session's harness or a test's own server; tests/test_prefect_server.py covers
# the kept server (a kept one per test would outlive the test).
os.environ["ASSAY_PREFECT_SERVER"] = "temporary"
# One math thread per test process (torch, BLAS, numba): the workers and the flow, server and browser processes
# they start already share the cores, and a process's second thread only waited (spinning) for the first.
for _threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")
# the project's numba cache, which `make install` fills with UMAP's kernels (python -m assay.mrm.topic_jit):
# every test process that fits topics loads them instead of compiling for ~30 s
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".assay" / "cache" / "numba"))

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from assay.embeddings import EmbeddingEngine, shared_engine  # noqa: E402
from assay.testing.seaweed import SeaweedServer, running_seaweed  # noqa: E402
from tests.support.durations_file import (  # noqa: E402
    DURATIONS,
    QUICK_FILE_LIMIT_S,
    heavy_files,
    seconds_per_file,
)
from tests.support.prefect_server import PrefectServer, running_prefect_server  # noqa: E402


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedServer]:
    """A real SeaweedFS S3 server on 127.0.0.1, started only when a test asks for it."""
    with running_seaweed(tmp_path_factory.mktemp("seaweed")) as server:
        yield server


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """One real Prefect server per test process (an xdist worker), started on first use: the flow runs, CLI
    runs and served deployments of the worker's tests report to it instead of each starting their own (a start
    costs about 10 s of CPU, and the suite is bound by CPU)."""
    home = tmp_path_factory.mktemp("prefect-server")
    with running_prefect_server(home) as api_url:
        yield PrefectServer(api_url, home)


@pytest.fixture(scope="session")
def engine() -> EmbeddingEngine:
    """The real packaged MiniLM, loaded once for the whole session (no on-disk cache)."""
    return shared_engine()


@pytest.fixture(scope="session")
def assay_home() -> Path:
    return _HOME


_PREFECT_POINTERS = ("PREFECT_API_URL", "PREFECT_HOME", "PREFECT_PROFILE")


@pytest.fixture(autouse=True)
def _prefect_pointers_left_as_found() -> Iterator[None]:
    """A test that leaves ``PREFECT_API_URL`` (or Prefect's home or profile) changed in this process sends every
    later command of its worker to a server that no longer runs; fail that test, not the later ones."""
    before = {name: os.environ.get(name) for name in _PREFECT_POINTERS}
    yield
    after = {name: os.environ.get(name) for name in _PREFECT_POINTERS}
    changed = {name: (before[name], after[name]) for name in _PREFECT_POINTERS if before[name] != after[name]}
    for name, (value, _) in changed.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    assert not changed, f"this test left Prefect's settings in os.environ changed (before, after): {changed}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help=f"leave out the test files measured at {QUICK_FILE_LIMIT_S:g} worker-seconds or more "
        "(tests/durations.txt): `make check`",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest test files first (stable: a file's tests keep their order; unmeasured files go last), as
    ``tests/durations.txt`` measured them; with ``--quick``, the heavy files are left out. xdist's ``--dist
    loadfile`` keeps this order only with ``--no-loadscope-reorder``; by default it orders files by their
    number of tests."""
    durations = DURATIONS.read_text(encoding="utf-8") if DURATIONS.is_file() else ""
    if config.getoption("--quick"):
        heavy = heavy_files(durations)
        left_out = [item for item in items if item.nodeid.split("::")[0] in heavy]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if item.nodeid.split("::")[0] not in heavy]
    costs = seconds_per_file(durations)
    items.sort(key=lambda item: -costs.get(item.nodeid.split("::")[0], 0.0))


_FAILED_STEP: dict[str, str] = {}
"""Module -> the first of its steps that failed, in modules marked ``steps`` (see ``pytest_runtest_setup``)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.get_closest_marker("steps") is not None:
        _FAILED_STEP.setdefault(item.module.__name__, item.name)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A module marked ``steps`` is one scenario in order (a person's session, test by test, each under the
    time limit of one test): once a step fails, the later ones are not run, they say which step failed."""
    if item.get_closest_marker("steps") is not None and item.module.__name__ in _FAILED_STEP:
        pytest.skip(f"an earlier step of this scenario failed: {_FAILED_STEP[item.module.__name__]}")


_CPU_LOG = os.environ.get("ASSAY_TEST_CPU_LOG")
"""Where to append each test's CPU seconds (this worker and the processes it waited for), wall seconds, node id,
worker and the time it ended (how the workers' loads end): on a 2-core machine the suite is bound by CPU, so
wall times measured under load say little about what to cut."""


def _cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not _CPU_LOG:
        yield
        return
    import time

    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    with open(_CPU_LOG, "a", encoding="utf-8") as log:
        worker, ended = os.environ.get("PYTEST_XDIST_WORKER", "main"), time.time()
        log.write(f"{_cpu_seconds() - cpu:.2f} {time.monotonic() - wall:.2f} {item.nodeid} {worker} {ended:.1f}\n")
