"""Which tools can live in Assay's environment (issue 36, docs/how-to/other-tools.md).

A tool shares Assay's environment when installing it there changes no installed distribution: the OpenTelemetry
SDK, OpenInference's openai instrumentation and mlflow-tracing (all three are dev requirements, so already there).
A tool needs its own environment when installing it would upgrade or downgrade something Assay or its
dependencies installed (or pip finds no resolution at all): the Phoenix server (SQLAlchemy 2.1, which breaks
Prefect 3.8's scheduler), DeepEval (an older click) and Ragas (openai 1.x). pip installs a tool's requirements
without re-checking what is already installed, so such an install "succeeds" and breaks Assay afterwards.

Each check asks pip itself, as configured here (its indexes, find-links and constraints), for the installation
report of ``pip install --dry-run``, which changes nothing, and compares it with the installed distributions. It
needs the package index: offline, or when the index does not offer the tool, the check is skipped.
"""

import json
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

SHARES = ("opentelemetry-sdk", "openinference-instrumentation-openai", "mlflow-tracing")
OWN_ENVIRONMENT = ("arize-phoenix", "deepeval", "ragas")
DRY_RUN_TIMEOUT_S = 300
PROBE_TIMEOUT_S = 60
# what pip prints when it cannot reach an index, or the index does not offer a (sub)requirement
_UNREACHABLE = (
    "No matching distribution found",
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ConnectTimeout",
    "ReadTimeout",
    "Could not fetch URL",
)


def _pip(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=timeout)


def _installed() -> dict[str, str]:
    """Installed distributions by canonical name (the first one found, as pip sees it)."""
    found: dict[str, str] = {}
    for dist in distributions():
        found.setdefault(canonicalize_name(dist.metadata["Name"]), dist.version)
    return found


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _broken_requirements(name: str, version: str) -> list[str]:
    """Installed distributions whose requirements exclude ``name`` at ``version`` (why the change hurts)."""
    broken = []
    for dist in distributions():
        for line in dist.requires or []:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) != name or (req.marker and not req.marker.evaluate({"extra": ""})):
                continue
            try:
                excluded = not req.specifier.contains(version, prereleases=True)
            except InvalidVersion:
                excluded = False
            if excluded:
                broken.append(f"{dist.metadata['Name']} needs {req}")
    return sorted(set(broken))


def _dry_run(package: str, report: Path) -> list[str]:
    """The installed distributions that ``pip install package`` would change ("name old -> new (why)"), or
    ``["ResolutionImpossible: ..."]`` when pip finds no resolution; skips when the index cannot be reached."""
    try:
        probe = _pip("index", "versions", "--retries", "0", "--timeout", "15", package, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.skip(f"package index did not answer for {package} within {PROBE_TIMEOUT_S} s (offline?)")
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"package index unreachable or without {package} (offline?): {last}")
    try:
        run = _pip("install", "--dry-run", "--quiet", "--report", str(report), package, timeout=DRY_RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip install --dry-run {package} took over {DRY_RUN_TIMEOUT_S} s (index unreachable or slow?)")
    output = run.stdout + run.stderr
    if run.returncode != 0:
        if "ResolutionImpossible" in output:
            conflict = [line.strip() for line in output.splitlines() if "conflict" in line.lower()]
            return [f"ResolutionImpossible: {' | '.join(conflict) or output.strip()[-500:]}"]
        if any(marker in output for marker in _UNREACHABLE):
            pytest.skip(f"pip could not fetch {package} or a requirement of it (offline?): {output.strip()[-300:]}")
        pytest.fail(f"pip install --dry-run {package} failed (exit {run.returncode}):\n{output}")
    installed = _installed()
    changed = []
    for item in json.loads(report.read_text())["install"]:
        name, version = canonicalize_name(item["metadata"]["name"]), item["metadata"]["version"]
        if name in installed and not _same(installed[name], version):
            why = _broken_requirements(name, version)
            changed.append(f"{name} {installed[name]} -> {version}" + (f" ({'; '.join(why)})" if why else ""))
    return changed


@pytest.mark.slow
@pytest.mark.parametrize("package", SHARES)
def test_the_tool_shares_assays_environment(package: str, tmp_path: Path) -> None:
    changed = _dry_run(package, tmp_path / "report.json")
    print(f"{package}: shares Assay's environment" if not changed else f"{package}: {changed}")
    assert not changed, f"installing {package} beside Assay would change: {changed}"


@pytest.mark.slow
@pytest.mark.parametrize("package", OWN_ENVIRONMENT)
def test_the_tool_needs_its_own_environment(package: str, tmp_path: Path) -> None:
    changed = _dry_run(package, tmp_path / "report.json")
    print(f"{package}: needs its own environment: {changed}")
    assert changed, f"{package} now installs beside Assay without changing anything: move it to the shared list"
