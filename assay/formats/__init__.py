"""Import and export of test suites and test labs in Assay's and other tools' file formats.

``import_file(path, "mlflow")`` reads a file into a `TestSuite` or `TestLab`; ``export_file(obj, path,
"ragas")`` writes one; ``import_file(path)`` detects the format from the content first (`detect_format`).
Every problem with a file raises `FormatError` naming the file, the field or line, and what was expected.
Line-based variants (JSONL vs JSON, CSV) are chosen by the file's extension.
"""

from collections.abc import Callable
from pathlib import Path

from assay.formats import eval_studio, mlflow, native, ragas
from assay.formats.detect import AUTO, detect_format
from assay.formats.errors import FormatError
from assay.formats.native import detect_kind
from assay.models import TestLab, TestSuite

__all__ = ["AUTO", "FORMATS", "FormatError", "detect_format", "detect_kind", "export_file", "import_file"]

Importer = Callable[[Path, str], TestSuite | TestLab]
Exporter = Callable[[TestSuite | TestLab, Path, str | None], None]

_IMPORTERS: dict[str, Importer] = {
    "eval-studio-suite": lambda path, _: eval_studio.import_suite(path),
    "eval-studio-testlab": lambda path, _: eval_studio.import_lab(path),
    "mlflow": lambda path, model_key: mlflow.import_mlflow(path, model_key=model_key),
    "ragas": lambda path, model_key: ragas.import_ragas(path, model_key=model_key),
    "assay": lambda path, _: native.import_native(path),
}


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


def _check_format(format: str, path: Path) -> None:
    if format not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise FormatError(path, "", f"unknown format {format!r}; expected one of {known}")


def import_file(path: Path | str, format: str = AUTO, *, model_key: str = "imported") -> TestSuite | TestLab:
    """Read ``path`` as ``format`` (`AUTO`: detected from the content); ``model_key`` names the model whose
    answers a flat file (mlflow, ragas) holds when it imports as a lab."""
    path = Path(path)
    if format == AUTO:
        format = detect_format(path)
    _check_format(format, path)
    return _IMPORTERS[format](path, model_key)


def export_file(
    obj: TestSuite | TestLab, path: Path | str, format: str, *, model_key: str | None = None
) -> None:
    """Write ``obj`` to ``path`` as ``format``; ``model_key`` picks the model when a lab with several models
    is written to a format that holds one model's answers (mlflow, ragas)."""
    path = Path(path)
    _check_format(format, path)
    _EXPORTERS[format](obj, path, model_key)
