"""promptfoo test files: a config's ``tests`` (YAML or JSON), a tests file (YAML list, JSON list, JSONL) or a
tests CSV (vars as columns, ``__expected`` columns as assertions).

A test's ``vars`` fill promptfoo's prompt template; Assay asks the system under test one question, so one var
is the prompt (``--prompt-var``, else `assay.formats.prompt_field`'s choice) and every var is kept as a text
variable for ``{{var}}`` templates in assertions. Vars holding lists expand into one case per combination, as
promptfoo expands them (unless the test's ``options.disableVarExpansion``). A config's ``defaultTest`` vars,
assertions and metadata apply to every test, as in promptfoo. ``assert`` entries map onto Assay's
deterministic checks where one exists (`assay.formats.promptfoo_asserts`); the others are listed as not
mapped. ``metadata`` becomes ``key:value`` categories; ``providerOutput`` is a precomputed answer, which makes
the file a lab. YAML is read as promptfoo reads it, by YAML 1.2 (`assay.formats.yaml12`): ``body: Yes`` is
the text ``Yes``.

Tests loaded from other files (``tests: file://tests.csv``) are refused with the file to import instead, and
prompt options (``prefix``, ``suffix``) are listed as not mapped.
"""

import itertools
from pathlib import Path
from typing import Any

from assay.formats.errors import (
    FormatError,
    Locator,
    at_path,
    json_path,
    load_json,
    load_records,
    preview,
    stable_key,
)
from assay.formats.mlflow import FlatRecord, assemble
from assay.formats.options import ImportOptions
from assay.formats.prompt_field import no_prompt_field, prompt_field, var_text
from assay.formats.promptfoo_asserts import Checks, add_assertion, assertion_from_string
from assay.formats.tables import csv_records
from assay.formats.yaml12 import load_yaml
from assay.models import TestCase, TestLab, TestSuite

SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".csv")
_CSV_SPECIAL = {"__description": "description", "__providerOutput": "providerOutput", "__metric": "metric"}
_CSV_NOTED = ("__prefix", "__suffix", "__threshold", "__config")

Located = tuple[Locator, Any]


def _metadata_cell(column: str, text: str) -> tuple[str, str | list[str]]:
    """``__metadata:KEY`` is text; ``__metadata:KEY[]`` a list split on commas (``\\,`` keeps one)."""
    key = column.removeprefix("__metadata:")
    if not key.endswith("[]"):
        return key, text
    parts = [part.replace("\\,", ",").strip() for part in _split_unescaped(text)]
    return key[:-2], [part for part in parts if part]


def _split_unescaped(text: str) -> list[str]:
    parts, current, index = [], "", 0
    while index < len(text):
        if text.startswith("\\,", index):
            current, index = current + "\\,", index + 2
        elif text[index] == ",":
            parts, current, index = [*parts, current], "", index + 1
        else:
            current, index = current + text[index], index + 1
    return [*parts, current]


def _test_from_row(cells: dict[str, str], options: ImportOptions) -> dict[str, Any]:
    """A CSV row as promptfoo's ``testCaseFromCsvRow`` reads it."""
    test: dict[str, Any] = {"vars": {}, "assert": [], "metadata": {}}
    for column, text in cells.items():
        if column.startswith("__expected"):
            if text.strip():
                test["assert"].append(assertion_from_string(text))
        elif column.startswith("__metadata:"):
            key, value = _metadata_cell(column, text)
            test["metadata"][key] = value
        elif column in _CSV_SPECIAL:
            test[_CSV_SPECIAL[column]] = text
        elif column.startswith(_CSV_NOTED):
            options.note(f"column {column} not mapped")
        else:
            test["vars"][column] = text
    return test


def _row_locator(where: Locator) -> Locator:
    return lambda loc: where(() if loc[:1] == ("vars",) else loc)


def _tests(path: Path, options: ImportOptions) -> tuple[list[Located], dict[str, Any], Any]:
    """The tests with their locators, the ``defaultTest`` and the document ``$ref``s resolve against."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = csv_records(path, ())
        # a CSV row's vars are its plain columns: a problem with them is the row's, not a column's
        return [(_row_locator(where), _test_from_row(cells, options)) for where, cells in rows], {}, None
    if suffix == ".jsonl":
        return load_records(path), {}, None
    document = load_yaml(path) if suffix in (".yaml", ".yml") else load_json(path)
    if isinstance(document, list):
        return [(lambda loc, i=i: json_path(i, *loc), test) for i, test in enumerate(document)], {}, document
    if not isinstance(document, dict) or "tests" not in document:
        found = sorted(document) if isinstance(document, dict) else preview(document)
        raise FormatError(path, "", f"expected a promptfoo config with tests, or a list of tests (found {found})")
    tests = document["tests"]
    refs = [item for item in (tests if isinstance(tests, list) else [tests]) if isinstance(item, str)]
    if refs:
        raise FormatError(path, "tests", f"loads tests from {refs[0]!r}; import that file itself")
    if not isinstance(tests, list):
        raise FormatError(path, "tests", f"expected a list of tests (got {preview(tests)})")
    default = document.get("defaultTest") or {}
    if not isinstance(default, dict):
        raise FormatError(path, "defaultTest", f"expected an object (got {preview(default)}); inline it to import")
    return [(lambda loc, i=i: json_path("tests", i, *loc), test) for i, test in enumerate(tests)], default, document


def _expansions(variables: dict[str, Any], expand: bool) -> list[dict[str, Any]]:
    """One set of vars per combination of the list-valued vars (promptfoo's var expansion)."""
    listed = [name for name, value in variables.items() if isinstance(value, list) and value] if expand else []
    if not listed:
        return [variables]
    combos = itertools.product(*(variables[name] for name in listed))
    return [variables | dict(zip(listed, combo, strict=True)) for combo in combos]


def _categories(metadata: Any) -> list[str]:
    if not isinstance(metadata, dict):
        return []
    return [f"{key}:{var_text(item)}" for key, value in metadata.items()
            for item in (value if isinstance(value, list) else [value])]  # fmt: skip


def _object(value: Any, path: Path, where: Locator, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FormatError(path, where((field,)), f"expected an object (got {preview(value)})")
    return value


def _records(index: int, test: Any, located: tuple[Path, Locator], default: dict[str, Any], root: Any,
             options: ImportOptions) -> list[FlatRecord]:  # fmt: skip
    path, where = located
    if not isinstance(test, dict):
        raise FormatError(path, where(()), f"expected a test object with vars (got {preview(test)})")
    test_options = _object(test.get("options"), path, where, "options")
    for name in ("prefix", "suffix"):
        if name in test_options:
            options.note(f"options.{name} not mapped")
    variables = _object(default.get("vars"), path, at_path, "defaultTest.vars") | _object(
        test.get("vars"), path, where, "vars"
    )
    asserts = test.get("assert") or []
    if not isinstance(asserts, list):
        raise FormatError(path, where(("assert",)), f"expected a list of assertions (got {preview(asserts)})")
    if not test_options.get("disableDefaultAsserts"):
        asserts = [*asserts, *(default.get("assert") or [])]
    checks = Checks()
    for item in asserts:
        add_assertion(checks, item, root, options)
    metadata = _object(default.get("metadata"), path, at_path, "defaultTest.metadata") | _object(
        test.get("metadata"), path, where, "metadata"
    )
    answer = test.get("providerOutput")
    if answer is not None and not isinstance(answer, str):
        answer = var_text(answer)
    records = []
    for number, chosen in enumerate(_expansions(variables, not test_options.get("disableVarExpansion"))):
        name = prompt_field(set(chosen), options.prompt_var)
        if name is None:
            raise FormatError(path, where(("vars",)), no_prompt_field(set(chosen), options.prompt_var, "vars"))
        texts = {key: var_text(value) for key, value in chosen.items()}
        case = TestCase(
            key=stable_key("promptfoo", index, number, texts[name]),
            prompt=texts[name],
            variables=texts,
            assertions=list(checks.assertions),
            output_condition=checks.output_condition,
            response_format="json" if checks.json_response else "text",
            constraints=list(checks.schemas),
            categories=_categories(metadata),
        )
        records.append(FlatRecord(case, answer))
    return records


def import_promptfoo(path: Path, options: ImportOptions) -> TestSuite | TestLab:
    """Read a promptfoo config or tests file; a lab (answered by ``options.model_key``) when tests carry
    ``providerOutput``."""
    if path.suffix.lower() not in SUFFIXES:
        expected = ", ".join(SUFFIXES)
        raise FormatError(path, "", f"expected a {expected} file for promptfoo (got {path.suffix!r})")
    located, default, root = _tests(path, options)
    records: list[FlatRecord] = []
    for index, (where, test) in enumerate(located):
        records.extend(_records(index, test, (path, where), default, root, options))
    return assemble(path.stem, records, options.model_key)
