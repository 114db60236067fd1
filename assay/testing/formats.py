"""Every (format, file suffix) an importer accepts, "auto" included: the one list hostile-input tests and the
fuzz suite run over."""

JSON_FORMAT_SUFFIXES = [
    ("assay", ".json"),
    ("eval-studio-suite", ".json"),
    ("eval-studio-testlab", ".json"),
    ("mlflow", ".json"),
    ("mlflow", ".jsonl"),
    ("ragas", ".json"),
    ("ragas", ".jsonl"),
    ("auto", ".json"),
    ("auto", ".jsonl"),
]
ALL_FORMAT_SUFFIXES = [*JSON_FORMAT_SUFFIXES, ("ragas", ".csv"), ("auto", ".csv")]
