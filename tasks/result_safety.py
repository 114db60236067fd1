"""Stored task results are data, never code.

Prefect reads a cached result with whatever serializer the stored record names, so a file planted in the
result storage that names ``pickle`` (or ``json`` with an importable ``object_decoder``) runs code on the
next rerun, whatever serializer the task declares. Resumable tasks therefore:

- serialize with :class:`AssayJSONSerializer`: plain JSON in which models carry a type tag that must name
  one of an allowlist of Assay models (nothing is imported by name);
- keep their cache keys in :class:`ResultKeyStorage`, which Prefect consults both to decide whether a
  cached result exists and to read it. It refuses any record not written by this serializer, or whose
  result does not load with it: Prefect then treats the key as a cache miss and the task recomputes (and
  overwrites the record), with a warning that names the refused file.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from prefect import task
from prefect.cache_policies import INPUTS, TASK_SOURCE
from prefect.filesystems import LocalFileSystem
from prefect.logging.loggers import get_logger
from prefect.serializers import Serializer
from prefect.settings import get_current_settings
from pydantic import BaseModel, Field

from assay.formats.errors import read_bytes
from assay.models import Chunk, TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import (
    Calibration,
    FailureClusters,
    ReviewItem,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
)
from assay.models.thresholds import ThresholdBook

SERIALIZER_TYPE = "assay-json"
KEYS_FOLDER = "assay-keys"
_TAG = "__assay_type__"
_ENVELOPE_VERSION = 1

# What a resumable task may return. Loading can only ever build these (and JSON values, lists, tuples).
STORABLE_MODELS: dict[str, type[BaseModel]] = {
    model.__name__: model
    for model in (
        Calibration,
        Chunk,
        EvaluationResult,
        FailureClusters,
        ReviewItem,
        RobustnessReport,
        SuiteValidation,
        TestLab,
        TestSuite,
        ThresholdBook,
        TopicModel,
        WeaknessReport,
    )
}

logger = get_logger("assay.results")
F = TypeVar("F", bound=Callable[..., Any])


def encode(value: Any) -> Any:
    """A JSON-ready form of ``value``; models and tuples are tagged so :func:`decode` restores their types."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, BaseModel):
        name = type(value).__name__
        if STORABLE_MODELS.get(name) is not type(value):
            raise TypeError(f"{name} is not in the allowlist of storable Assay models")
        return {_TAG: name, "value": value.model_dump(mode="json")}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, tuple):
        return {_TAG: "tuple", "value": [encode(item) for item in value]}
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("only dictionaries with string keys can be stored")
        encoded = {key: encode(item) for key, item in value.items()}
        return {_TAG: "dict", "value": encoded} if _TAG in value else encoded
    raise TypeError(f"a {type(value).__name__} cannot be stored as a task result")


def decode(value: Any) -> Any:
    """The inverse of :func:`encode`; a tag naming anything outside the allowlist is rejected."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if _TAG not in value:
        return {key: decode(item) for key, item in value.items()}
    if set(value) != {_TAG, "value"}:
        raise ValueError(f"a tagged value holds unexpected keys {sorted(set(value) - {_TAG, 'value'})}")
    tag, inner = value[_TAG], value["value"]
    if tag == "tuple" and isinstance(inner, list):
        return tuple(decode(item) for item in inner)
    if tag == "dict" and isinstance(inner, dict):
        return {key: decode(item) for key, item in inner.items()}
    if isinstance(tag, str) and tag in STORABLE_MODELS:
        return STORABLE_MODELS[tag].model_validate(inner)
    raise ValueError(f"stored type {tag!r} is not an Assay model allowed in task results")


class AssayJSONSerializer(Serializer):
    """Prefect serializer for task results: JSON, restricted to the allowlisted Assay models."""

    type: str = Field(default=SERIALIZER_TYPE, frozen=True)

    def dumps(self, obj: Any) -> bytes:
        return json.dumps({"assay-json": _ENVELOPE_VERSION, "value": encode(obj)}).encode()

    def loads(self, blob: bytes) -> Any:
        envelope = json.loads(blob)
        if not isinstance(envelope, dict) or envelope.get("assay-json") != _ENVELOPE_VERSION or "value" not in envelope:
            raise ValueError("not a result written by Assay's JSON serializer")
        return decode(envelope["value"])


class ResultKeyStorage(LocalFileSystem):
    """Where resumable tasks keep their cache keys (result metadata), under Prefect's local result storage.

    Every read is verified; see the module docstring. The folder is resolved at each call from Prefect's
    current settings, so it follows ``PREFECT_HOME`` and ``PREFECT_RESULTS_LOCAL_STORAGE_PATH``.
    """

    _block_type_name: ClassVar[str] = "Assay Result Keys"

    def _resolve_path(self, path: str) -> Path:
        folder = Path(get_current_settings().results.local_storage_path) / KEYS_FOLDER
        return LocalFileSystem(basepath=str(folder))._resolve_path(path)

    def read_path(self, path: str, _sync: bool = True) -> bytes:  # type: ignore[override]
        """Prefect passes ``_sync``; reading is always synchronous here."""
        location = self._resolve_path(path)
        if not location.is_file():
            raise ValueError(f"no cached result at {location}")
        try:
            content = read_bytes(location)
            _verify(content)
        except (ValueError, TypeError, OSError, RecursionError) as refusal:
            logger.warning("ignoring the cached result %s (%s); the step runs again", location, refusal)
            raise ValueError(f"{location}: {refusal}") from refusal
        return content

    async def aread_path(self, path: str) -> bytes:  # type: ignore[override]
        return self.read_path(path)


def _verify(metadata_content: bytes) -> None:
    """Accept a record only if its metadata names our serializer, exactly, and its result loads with it."""
    from prefect._internal.result_records import ResultRecordMetadata
    from prefect.results import resolve_result_storage

    raw = json.loads(metadata_content)
    if not isinstance(raw, dict) or raw.get("serializer") != {"type": SERIALIZER_TYPE}:
        raise ValueError("not written by Assay's JSON serializer")
    metadata = ResultRecordMetadata.load_bytes(metadata_content)
    if metadata.storage_key is None:
        raise ValueError("names no stored result")
    if metadata.storage_block_id is not None:
        storage = resolve_result_storage(metadata.storage_block_id, _sync=True)
        result = storage.read_path(metadata.storage_key, _sync=True)  # type: ignore[call-arg]
    else:
        result = _local_result(Path(metadata.storage_key))
    AssayJSONSerializer().loads(result)


def _local_result(location: Path) -> bytes:
    """Only a file inside Prefect's local result storage; a record cannot point anywhere else."""
    base = Path(get_current_settings().results.local_storage_path).expanduser().resolve()
    resolved = location.expanduser().resolve()
    if not resolved.is_absolute() or base not in resolved.parents:
        raise ValueError(f"names a result outside {base}")
    return read_bytes(resolved)  # refuses a FIFO or device planted there instead of blocking on it


RESUMABLE = (TASK_SOURCE + INPUTS).configure(key_storage=ResultKeyStorage())


def resumable(name: str, run_name: str | None = None) -> Callable[[F], F]:
    """A task whose result is persisted as JSON and cached on (source, inputs), so a rerun of the same run
    resumes after its last finished step without ever executing stored bytes. ``run_name`` names its task
    runs in the Prefect UI (a template over the parameters, e.g. ``"evaluate-{evaluator_id}"``)."""

    def decorate(fn: F) -> F:
        return task(  # type: ignore[return-value]
            name=name,
            task_run_name=run_name or name,
            persist_result=True,
            cache_policy=RESUMABLE,
            result_serializer=AssayJSONSerializer(),
        )(fn)

    return decorate
