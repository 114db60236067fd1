import json
from pathlib import Path

import pytest

from assay.formats.errors import FormatError
from assay.formats.native import (
    detect_kind,
    export_native,
    import_native,
    import_native_lab,
    import_native_suite,
)
from assay.models import SCHEMA_VERSION, TestLab, TestSuite


def test_suite_and_lab_round_trip(rich_suite: TestSuite, rich_lab: TestLab, tmp_path: Path) -> None:
    export_native(rich_suite, tmp_path / "suite.json")
    export_native(rich_lab, tmp_path / "lab.json")
    assert import_native(tmp_path / "suite.json") == rich_suite
    assert import_native(tmp_path / "lab.json") == rich_lab
    assert import_native_suite(tmp_path / "suite.json") == rich_suite
    assert import_native_lab(tmp_path / "lab.json") == rich_lab
    assert (
        (tmp_path / "suite.json").read_text().startswith('{\n  "schema_version": 1,\n  "name": "Geography"')
    )


def test_detect_kind(rich_suite: TestSuite, rich_lab: TestLab, tmp_path: Path) -> None:
    export_native(rich_suite, tmp_path / "suite.json")
    export_native(rich_lab, tmp_path / "lab.json")
    assert detect_kind(tmp_path / "suite.json") == "suite"
    assert detect_kind(tmp_path / "lab.json") == "lab"
    (tmp_path / "other.json").write_text('{"records": []}')
    with pytest.raises(FormatError) as caught:
        detect_kind(tmp_path / "other.json")
    assert caught.value.message == (
        "expected an Assay test suite (with tests) or test lab (with models and rows); found keys ['records']"
    )


def test_wrong_kind_is_reported(rich_suite: TestSuite, tmp_path: Path) -> None:
    export_native(rich_suite, tmp_path / "suite.json")
    with pytest.raises(FormatError) as caught:
        import_native_lab(tmp_path / "suite.json")
    assert caught.value.message == "expected a test lab, found a test suite"


def test_field_errors_name_the_json_path(rich_lab: TestLab, tmp_path: Path) -> None:
    data = json.loads(rich_lab.model_dump_json())
    data["rows"][3]["test_case"]["prompt"] = ["not", "a", "string"]
    (tmp_path / "lab.json").write_text(json.dumps(data))
    with pytest.raises(FormatError) as caught:
        import_native(tmp_path / "lab.json")
    assert caught.value.location == "rows[3].test_case.prompt"
    assert caught.value.message == 'expected a string (got ["not", "a", "string"])'


def test_unknown_model_key_is_reported(rich_lab: TestLab, tmp_path: Path) -> None:
    data = json.loads(rich_lab.model_dump_json())
    data["rows"][1]["model_key"] = "ghost"
    (tmp_path / "lab.json").write_text(json.dumps(data))
    with pytest.raises(FormatError) as caught:
        import_native(tmp_path / "lab.json")
    assert caught.value.message == "rows[1].model_key 'ghost' is not one of models[].key ['llm', 'rag']"


def test_newer_schema_version_is_refused(rich_suite: TestSuite, tmp_path: Path) -> None:
    data = json.loads(rich_suite.model_dump_json()) | {"schema_version": SCHEMA_VERSION + 1}
    (tmp_path / "suite.json").write_text(json.dumps(data))
    with pytest.raises(FormatError) as caught:
        import_native(tmp_path / "suite.json")
    assert caught.value.location == "schema_version"
    assert (
        caught.value.message
        == f"{SCHEMA_VERSION + 1} was written by a newer Assay; this one reads up to {SCHEMA_VERSION}"
    )
