"""Fuzzing every importer: whatever the bytes, the only way to fail is a `FormatError` naming the file.

Three kinds of input: raw bytes, structure-aware mutations of each format's sample file (a subtree replaced by a
hostile value, a key dropped, NaN/Infinity/huge numbers, nesting thousands of levels deep), and CSV text built
from quotes, separators and newlines.
"""

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.formats import FormatError, import_file
from assay.models import TestLab, TestSuite
from assay.testing.formats import ALL_FORMAT_SUFFIXES
from tests.fuzz.strategies import FUZZ, dumps, json_values, mutate, mutation_paths, nested

DATA = Path(__file__).parents[1] / "formats" / "data"
SAMPLES: dict[str, list[tuple[str, str]]] = {
    # format -> (sample file, suffix to write mutations with)
    "assay": [],
    "eval-studio-suite": [("eval_studio_suite.json", ".json")],
    "eval-studio-testlab": [("eval_studio_testlab.json", ".json")],
    "mlflow": [("mlflow_suite.json", ".json"), ("mlflow_lab.jsonl", ".jsonl")],
    "ragas": [("ragas_suite.jsonl", ".jsonl")],  # CSV is fuzzed as text below
}

_WORKDIR = Path(tempfile.mkdtemp(prefix="assay-fuzz-"))


def _import(text: str | bytes, format: str, suffix: str) -> None:
    """Import ``text`` as ``format``: success, or a FormatError that names the file; anything else fails."""
    path = _WORKDIR / f"input{suffix}"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    try:
        imported = import_file(path, format)
    except FormatError as error:
        assert str(path) in str(error), f"error does not name the file: {error}"
        return
    assert isinstance(imported, TestSuite | TestLab)


def _native_sample() -> Any:
    from assay.corpora import sample_data_path

    return json.loads((sample_data_path() / "suite.json").read_text(encoding="utf-8"))


def _sample_document(name: str) -> list[Any] | Any:
    path = DATA / name
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(path.read_text(encoding="utf-8"))


def _render(document: Any, suffix: str) -> str:
    if suffix == ".jsonl" and isinstance(document, list):
        return "\n".join(dumps(record) for record in document)
    return dumps(document)


@pytest.mark.parametrize(("format", "suffix"), ALL_FORMAT_SUFFIXES)
@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes(format: str, suffix: str, data: bytes) -> None:
    _import(data, format, suffix)


@pytest.mark.parametrize(("format", "suffix"), ALL_FORMAT_SUFFIXES)
@FUZZ
@given(document=json_values)
def test_random_json_documents(format: str, suffix: str, document: Any) -> None:
    _import(_render(document, suffix), format, suffix)


HOSTILE_VALUES = st.one_of(
    json_values,
    st.sampled_from([float("inf"), float("nan"), -1, 10**400, "", "\x00", "[/]", "<script>", None, [], {}]),
    st.integers(min_value=500, max_value=5000).map(lambda depth: json.loads(nested(depth)) if depth < 900 else []),
)


@pytest.mark.parametrize(
    ("format", "sample", "suffix"),
    [("assay", "native", ".json")]
    + [(f, name, suffix) for f, pairs in SAMPLES.items() for name, suffix in pairs if suffix != ".csv"],
)
@FUZZ
@given(path=mutation_paths, replacement=HOSTILE_VALUES, drop=st.booleans())
def test_mutated_samples(format: str, sample: str, suffix: str, path: list[Any], replacement: Any, drop: bool) -> None:
    original = _native_sample() if sample == "native" else _sample_document(sample)
    _import(_render(mutate(original, path, replacement, drop), suffix), format, suffix)


@pytest.mark.parametrize(("format", "suffix"), ALL_FORMAT_SUFFIXES)
@FUZZ
@given(depth=st.integers(min_value=1, max_value=200_000), opener=st.sampled_from(["[", '{"a":']))
def test_deep_nesting(format: str, suffix: str, depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    _import(opener * depth + "1" * (opener != "[") + closer * depth, format, suffix)


CSV_PIECES = ["user_input", "response", "reference", "retrieved_contexts", ",", '"', '""', "\n", "\r\n", "q", "a",
              "[", "]", "'x'", '["c"]', "\x00", " ", "\ufeff", "é"]


@FUZZ
@given(
    body=st.lists(st.sampled_from(CSV_PIECES), max_size=40).map("".join),
    header=st.sampled_from(["user_input,response,reference\n", "user_input,retrieved_contexts,response\n", ""]),
)
def test_csv_text(body: str, header: str) -> None:
    _import(header + body, "ragas", ".csv")


@FUZZ
@given(size=st.integers(min_value=100_000, max_value=400_000))
def test_csv_huge_cells(size: int) -> None:
    _import(f'user_input,response\nq,"{"a" * size}"\n', "ragas", ".csv")
