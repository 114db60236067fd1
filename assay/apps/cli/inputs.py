"""Every input of a command checked before any flow or Prefect server starts.

A rejected input is a ``ValueError`` (or ``FormatError``) whose message names the file, field or option and
what was expected; the command prints it as one line and exits 2. Checking up front means a typo costs a
second, never a server start-up and a traceback in the flow's log.
"""

import tempfile
from pathlib import Path
from typing import Any

from assay.models import ModelHost, TestLab, TestSuite
from assay.models.workflow import MrmParameters


def input_file(path: Path, option: str) -> Path:
    """An existing regular file: a folder, a FIFO or a device (a link to ``/dev/zero``) is named as what it is,
    not as missing (the readers would refuse it too, see ``assay.formats.errors.read_bytes``)."""
    from assay.formats.errors import FormatError, check_regular_file

    if path.is_dir():
        raise ValueError(f"{option} {path}: is a folder, expected a file")
    try:
        check_regular_file(path)
    except FormatError as error:
        raise ValueError(f"{option} {error}") from None
    return path


def suite_file(path: Path, format: str) -> TestSuite:
    """The test suite in ``path``, imported in full (so every field of it is checked), with at least one
    test case: an evaluation of nothing would report "0/0 answered" and pass every gate."""
    imported = _import(input_file(path, "--suite"), format)
    if not isinstance(imported, TestSuite):
        raise ValueError(f"{path}: holds a test lab with answers; pass it as --lab")
    return imported


def lab_file(path: Path, format: str) -> TestLab:
    """The test lab in ``path``, imported in full, with at least one row (see `suite_file`)."""
    imported = _import(input_file(path, "--lab"), format)
    if not isinstance(imported, TestLab):
        raise ValueError(f"{path}: holds a test suite without answers; pass it as --suite")
    return imported


def _import(path: Path, format: str) -> TestSuite | TestLab:
    from assay.formats import import_file

    imported = import_file(path, format)
    if (imported.case_count if isinstance(imported, TestSuite) else len(imported.rows)) == 0:
        raise ValueError(f"{path}: no test cases in the file; there is nothing to evaluate")
    return imported


def hosts(values: list[str]) -> list[str | dict[str, Any]]:
    """``--host TYPE`` (a registered host type) or ``--host FILE.json`` (a full host configuration); the
    configurations are returned as dicts, the flow's parameter form. Two hosts may not share a key."""
    chosen = [_host(value) for value in values]
    keys = [host if isinstance(host, str) else host["key"] for host in chosen]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(f"--host: two hosts share the key {duplicates[0]!r}; give each host its own key")
    return chosen


def _host(value: str) -> str | dict[str, Any]:
    from assay.hosts import default_host_config, host_class
    from assay.hosts.files import is_host_file
    from assay.hosts.registry import checked_host_config

    if not is_host_file(value):
        host_class(value)
        try:
            checked_host_config(default_host_config(value))
        except ValueError as error:
            raise ValueError(f"--host {value}: {error}; give a host file (.json or .toml) with it") from None
        return value
    return host_file(Path(value), "--host").model_dump(mode="json")


def _json_or_toml(path: Path) -> Any:
    from assay.hosts.files import json_or_toml

    return json_or_toml(path)


def host_file(path: Path, option: str) -> ModelHost:
    """The ``ModelHost`` in a ``.json`` or ``.toml`` file given as ``option`` (``read_host_file``)."""
    from assay.hosts.files import read_host_file

    return read_host_file(input_file(path, option))


def judge_file(path: Path) -> dict[str, Any]:
    """The LLM judge endpoint (``JudgeEndpoint``) in a ``.json`` or ``.toml`` file, as the flow's parameter;
    errors name the file and the field. A file may hold the key's variable name, never the key."""
    from assay.calls.network import check_url
    from assay.formats.errors import validate
    from assay.models.judges import JudgeEndpoint

    path = input_file(path, "--judge")
    endpoint = validate(JudgeEndpoint, _json_or_toml(path), path)
    if not endpoint.configured:
        raise ValueError(f"{path}: fields 'base_url' and 'model' are required for a judge")
    try:
        check_url(endpoint.base_url, "base_url")
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return endpoint.model_dump(mode="json")


def evaluator_ids(text: str) -> list[str]:
    """Comma-separated registered evaluator ids, or ``all`` or ``recommended`` alone."""
    from assay.evaluators import evaluator_class
    from assay.evaluators.selection import SELECTION_KEYWORDS

    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise ValueError("--evaluators needs at least one evaluator id")
    for keyword in SELECTION_KEYWORDS:
        if keyword in ids:
            if ids != [keyword]:
                raise ValueError(f"--evaluators {keyword} cannot be combined with evaluator ids")
            return ids
    for evaluator_id in ids:
        evaluator_class(evaluator_id)
    return ids


def evaluator_parameters(
    config: Path | None, assignments: list[str], requested: list[str]
) -> dict[str, dict[str, Any]]:
    """``--evaluators-config FILE`` (JSON or TOML) overridden by each ``--param ID.NAME=VALUE``, coerced by
    the evaluators' own parameter types and built once (see ``assay.apps.cli.evaluator_params``)."""
    from assay.apps.cli import evaluator_params

    from_file: dict[str, dict[str, Any]] = {}
    if config is not None:
        path = input_file(config, "--evaluators-config")
        from_file = evaluator_params.from_config(_json_or_toml(path), str(path), requested)
    parameters = evaluator_params.merged(from_file, evaluator_params.from_assignments(assignments, requested))
    evaluator_params.check_buildable(parameters, "--param/--evaluators-config")
    return parameters


def output_folder(path: Path, option: str = "--out") -> Path:
    """A folder the command can write into, created if missing."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path}: is a file, expected a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise ValueError(f"{option} {path}: cannot write there ({error.strerror or error})") from None
    return path


def corpus_folder(path: Path) -> Path:
    """A folder holding at least one readable .md, .txt or .pdf document (each is read once here)."""
    from assay.corpora import load_corpus

    if not path.is_dir():
        raise ValueError(f"--corpus {path}: no such folder")
    load_corpus(path)
    return path


def approvals_file(path: Path) -> Path:
    """A reviewer's approvals file that parses and names only known steps and fields."""
    from assay.mrm.approvals import load_approvals

    load_approvals(input_file(path, "--approvals"))
    return path


def workflow_parameters(
    path: Path | None,
    *,
    per_topic: int | None = None,
    generators: list[str] | None = None,
    variations: list[str] | None = None,
    adversarial: list[str] | None = None,
    intensities: list[str] | None = None,
) -> MrmParameters:
    """The MRM step parameters: a JSON/TOML file (``--parameters``), then the options given on the command line."""
    from pydantic import ValidationError

    data = _json_or_toml(input_file(path, "--parameters")) if path is not None else {}
    if not isinstance(data, dict):
        raise ValueError(f"--parameters {path}: expected an object with step names as keys")
    overrides = {
        ("test_generation", "per_topic"): per_topic,
        ("test_generation", "generators"): generators,
        ("robustness", "variation_perturbators"): variations,
        ("robustness", "adversarial_perturbators"): adversarial,
        ("robustness", "intensities"): intensities,
    }
    for (step, key), value in overrides.items():
        if value is not None:
            section = data.setdefault(step, {})
            if not isinstance(section, dict):
                raise ValueError(f"--parameters {path}: {step} must be an object")
            section[key] = value
    try:
        return MrmParameters.model_validate(data)
    except ValidationError as error:
        where = f"--parameters {path}" if path is not None else "step parameters"
        problems = "; ".join(f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in error.errors())
        raise ValueError(f"{where}: {problems}") from None


def interactive_review_possible(interactive: bool) -> None:
    """A review pause needs a server that outlives nothing less than the run: the user's or Assay's kept one,
    not the temporary server of ``ASSAY_PREFECT_SERVER=temporary``."""
    from assay.apps.prefect_server import configured_api_url
    from assay.config import load_settings

    if interactive and configured_api_url() is None and load_settings().prefect_server == "temporary":
        raise ValueError(
            "interactive review needs a Prefect server the reviewer can open, and ASSAY_PREFECT_SERVER=temporary "
            "gives none: unset it (Assay then keeps a local server), or set PREFECT_API_URL, or pass "
            "--non-interactive"
        )
