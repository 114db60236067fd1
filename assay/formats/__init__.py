"""Import and export of test suites and test labs in Assay's and other tools' file formats.

``import_file(path, "mlflow")`` reads a file into a `TestSuite` or `TestLab`; ``export_file(obj, path,
"ragas")`` writes one; ``import_file(path)`` detects the format from the content first (`detect_format`).
``read_file`` does the same and also says which format was read and what the file held that Assay could not
carry (`Imported.notes`), for the CLI to print. Every problem with a file raises `FormatError` naming the
file, the field or line, and what was expected; when the file was named as one format and reads as another,
the error says "this looks like" that one. Line-based variants (JSONL vs JSON, CSV) are chosen by the
file's extension. DeepEval, promptfoo and MLflow 3 GenAI files are read, not written (`IMPORT_ONLY`).
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from assay.formats import deepeval, eval_studio, mlflow, mlflow_genai, native, promptfoo, ragas
from assay.formats.detect import AUTO, detect_format
from assay.formats.errors import FormatError
from assay.formats.native import detect_kind
from assay.formats.options import ImportOptions
from assay.models import TestLab, TestSuite

__all__ = [
    "AUTO",
    "FORMATS",
    "FormatError",
    "ImportOptions",
    "Imported",
    "detect_format",
    "detect_kind",
    "export_file",
    "import_file",
    "read_file",
]

Importer = Callable[[Path, ImportOptions], TestSuite | TestLab]
Exporter = Callable[[TestSuite | TestLab, Path, str | None], None]

_IMPORTERS: dict[str, Importer] = {
    "eval-studio-suite": lambda path, _: eval_studio.import_suite(path),
    "eval-studio-testlab": lambda path, _: eval_studio.import_lab(path),
    "mlflow": lambda path, options: mlflow.import_mlflow(path, model_key=options.model_key),
    "mlflow-genai": mlflow_genai.import_mlflow_genai,
    "ragas": lambda path, options: ragas.import_ragas(path, model_key=options.model_key),
    "deepeval": deepeval.import_deepeval,
    "promptfoo": promptfoo.import_promptfoo,
    "assay": lambda path, _: native.import_native(path),
}


@dataclass(frozen=True)
class Imported:
    """What a file held, the format it was read as (``detected``: chosen from the content), and what it held
    that Assay could not carry."""

    content: TestSuite | TestLab
    format: str
    detected: bool
    notes: list[str]


def _only(kind: type[TestSuite] | type[TestLab], write: Callable[..., None], format: str) -> Exporter:
    """An exporter for a format that holds only suites or only labs."""

    def export(obj: TestSuite | TestLab, path: Path, _model_key: str | None) -> None:
        if not isinstance(obj, kind):
            message = f"{format} holds a {kind.__name__}, got a {type(obj).__name__}"
            raise FormatError(path, "", message)
        write(obj, path)

    return export


_EXPORTERS: dict[str, Exporter] = {
    "eval-studio-suite": _only(TestSuite, eval_studio.export_suite, "eval-studio-suite"),
    "eval-studio-testlab": _only(TestLab, eval_studio.export_lab, "eval-studio-testlab"),
    "mlflow": lambda obj, path, model_key: mlflow.export_mlflow(obj, path, model_key=model_key),
    "ragas": lambda obj, path, model_key: ragas.export_ragas(obj, path, model_key=model_key),
    "assay": lambda obj, path, _: native.export_native(obj, path),
}

FORMATS: frozenset[str] = frozenset(_IMPORTERS)
IMPORT_ONLY: frozenset[str] = FORMATS - set(_EXPORTERS)


def _check_format(format: str, path: Path, known: frozenset[str] = FORMATS) -> None:
    if format not in known:
        expected = ", ".join(sorted(known))
        reason = " (it is read, not written)" if format in IMPORT_ONLY else ""
        raise FormatError(path, "", f"unknown format {format!r}{reason}; expected one of {expected}")


def _looks_like(path: Path, named: str) -> str | None:
    """The format ``path`` reads as when it failed to read as ``named``; None unless one reads it whole."""
    try:
        detected = detect_format(path)
        if detected == named:
            return None
        _IMPORTERS[detected](path, ImportOptions())
    except ValueError:  # FormatError, or a suite or lab model refusing what it was given
        return None
    return detected


def read_file(
    path: Path | str, format: str = AUTO, *, model_key: str = "imported", prompt_var: str | None = None
) -> Imported:
    """Read ``path`` as ``format`` (`AUTO`: detected from the content). ``model_key`` names the model whose
    answers a flat file (mlflow, ragas...) holds when it imports as a lab; ``prompt_var`` the field holding the
    question where a record has several (promptfoo vars, MLflow 3 inputs)."""
    path = Path(path)
    detected = format == AUTO
    if detected:
        format = detect_format(path)
    _check_format(format, path)
    options = ImportOptions(model_key=model_key, prompt_var=prompt_var)
    try:
        content = _IMPORTERS[format](path, options)
    except FormatError as error:
        if detected or (other := _looks_like(path, format)) is None:
            raise
        hint = f"this looks like {other}: read it as that format instead"
        raise FormatError(error.path, error.location, f"{error.message}; {hint}") from None
    return Imported(content, format, detected, options.listed_notes())


def import_file(
    path: Path | str, format: str = AUTO, *, model_key: str = "imported", prompt_var: str | None = None
) -> TestSuite | TestLab:
    """The suite or lab `read_file` reads."""
    return read_file(path, format, model_key=model_key, prompt_var=prompt_var).content


def export_file(obj: TestSuite | TestLab, path: Path | str, format: str, *, model_key: str | None = None) -> None:
    """Write ``obj`` to ``path`` as ``format``; ``model_key`` picks the model when a lab with several models
    is written to a format that holds one model's answers (mlflow, ragas)."""
    path = Path(path)
    _check_format(format, path, frozenset(_EXPORTERS))
    _EXPORTERS[format](obj, path, model_key)
