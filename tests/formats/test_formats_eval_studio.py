import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.formats.errors import FormatError, stable_key
from assay.formats.eval_studio import export_lab, export_suite, import_lab, import_suite, lab_to_json
from assay.models import ModelHost, RetrievedChunk, TestLab, TestSuite

SEED_MODEL_KEY = "d4a7c0dd-a3ff-487e-86e5-57718b812b54"
SEED_CASE_KEY = "9c3a7df3-67df-4819-babb-20636611f077"


def _write(tmp_path: Path, data: object, name: str = "file.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _lab_data(**overrides: object) -> dict:
    item = {"key": "c1", "input": "Q?", "actual_output": "A.", "model_key": "m1"}
    data = {"name": "lab", "dataset": {"inputs": [item]}, "models": [{"key": "m1", "model_type": "llm"}]}
    return data | overrides


def test_seed_test_suite_imports(data_dir: Path) -> None:
    suite = import_suite(data_dir / "eval_studio_suite.json")
    assert suite.name == "Sample Test Suite"
    assert suite.description == "This is a sample test suite."
    assert len(suite.tests) == 1
    test = suite.tests[0]
    assert test.key == stable_key("Sample Test Suite", 0)
    assert test.documents == []
    assert [case.prompt for case in test.test_cases] == [
        "Sample prompt 1.",
        "Sample prompt 2.",
        "Sample prompt 3.",
    ]
    assert [case.expected_output for case in test.test_cases] == [
        "Expected output for sample prompt 1.",
        "Expected output for sample prompt 2.",
        "Expected output for sample prompt 3.",
    ]
    assert all(case.categories == ["privacy", "security"] for case in test.test_cases)
    assert all(case.constraints == [] for case in test.test_cases)
    assert [case.key for case in test.test_cases] == [stable_key("Sample Test Suite", 0, i) for i in range(3)]


def test_generated_keys_are_stable_across_imports(data_dir: Path) -> None:
    assert import_suite(data_dir / "eval_studio_suite.json") == import_suite(
        data_dir / "eval_studio_suite.json"
    )


def test_seed_test_lab_imports_resolved_answers(data_dir: Path) -> None:
    lab = import_lab(data_dir / "eval_studio_testlab.json")
    assert lab.name == "Fact Checking TestLab"
    assert lab.description == "Test lab for RAG / LLM / agent evaluation."
    assert lab.models == [
        ModelHost(
            key=SEED_MODEL_KEY,
            type="h2ogpte_llm",
            name="LLM model h2oai/h2ogpt-4096-llama2-70b-chat",
            llm_model_name="h2oai/h2ogpt-4096-llama2-70b-chat",
            settings={"connection": "c8c036a0-659b-4d3c-9309-1d2a47042950"},
        )
    ]
    [row] = lab.rows
    assert row.model_key == SEED_MODEL_KEY
    assert row.test_case.key == SEED_CASE_KEY
    assert row.test_case.prompt == "What is the boiling temperature of H2O?"
    assert row.test_case.categories == ["question-answering"]
    assert (
        row.actual_output
        == "The boiling point of water (H2O) is 100 degrees Celsius (212 degrees Fahrenheit)."
    )
    assert row.actual_duration == 4.015823125839233
    assert row.cost == 0.0022799999999999487
    assert row.context == []


def test_suite_round_trip_keeps_every_field(rich_suite: TestSuite, tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    export_suite(rich_suite, path)
    assert import_suite(path) == rich_suite
    written = json.loads(path.read_text())
    case = written["tests"][0]["test_cases"][0]
    assert case["prompt"] == "What is the capital of France?"
    assert "turns" not in case  # Assay-only fields are written only when set
    assert written["tests"][0]["test_cases"][1]["relationships"] == [
        {"type": "perturbation", "target": "capital"}
    ]


def test_lab_round_trip_keeps_every_field(rich_lab: TestLab, tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    export_lab(rich_lab, path)
    assert import_lab(path) == rich_lab


def test_lab_export_writes_eval_studio_shape(rich_lab: TestLab) -> None:
    data = lab_to_json(rich_lab)
    assert data["llm_model_names"] == ["llama-3-70b", "gpt-4o"]
    rag = data["models"][0]
    assert rag["connection"] == "conn-1"
    assert rag["model_type"] == "h2ogpte"
    assert rag["model_cfg"] == {"temperature": 0.0}
    resolved, raw = data["dataset"]["inputs"][0], data["raw_dataset"]["inputs"][0]
    assert resolved["corpus"] == ["france.md"]
    assert resolved["actual_output"] == "RAG answer to capital"
    assert resolved["input_tokens"] == 120
    assert (raw["actual_output"], raw["actual_duration"], raw["cost"], raw["context"]) == ("", 0.0, 0.0, [])
    assert "input_tokens" not in raw
    assert data["dataset"]["inputs"][1]["context"] == ["plain chunk"]


def test_context_accepts_strings_and_objects(tmp_path: Path) -> None:
    data = _lab_data()
    data["dataset"]["inputs"][0]["context"] = ["first", {"content": "second", "source": "b.md", "score": 0.5}]
    [row] = import_lab(_write(tmp_path, data)).rows
    assert row.context == [
        RetrievedChunk(text="first", rank=0),
        RetrievedChunk(text="second", doc_uri="b.md", rank=1, score=0.5),
    ]


def test_corpus_and_unknown_model_keys_go_to_settings(tmp_path: Path) -> None:
    data = _lab_data()
    data["dataset"]["inputs"][0]["corpus"] = ["a.pdf", "b.pdf"]
    data["models"][0] |= {"collection_id": "col-7", "connection": "http-conn"}
    [model] = import_lab(_write(tmp_path, data)).models
    assert model.settings == {
        "collection_id": "col-7",
        "connection": "http-conn",
        "documents": ["a.pdf", "b.pdf"],
    }


def test_raw_dataset_is_used_when_dataset_is_absent(tmp_path: Path) -> None:
    data = _lab_data()
    data["raw_dataset"] = data.pop("dataset")
    [row] = import_lab(_write(tmp_path, data)).rows
    assert row.actual_output == "A."


def test_missing_prompt_names_the_field(data_dir: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_suite(data_dir / "suite_missing_prompt.json")
    expected = "tests[0].test_cases[2].prompt: field required (expected a string)"
    assert str(caught.value) == f"{data_dir / 'suite_missing_prompt.json'}: {expected}"


def test_bad_json_names_line_and_column(data_dir: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_suite(data_dir / "suite_bad_json.json")
    assert caught.value.path == data_dir / "suite_bad_json.json"
    assert caught.value.location == "line 6 column 36"


def test_unknown_model_key_names_the_row(data_dir: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_lab(data_dir / "testlab_unknown_model.json")
    assert caught.value.location == "dataset.inputs[0].model_key"
    assert caught.value.message == f"'no-such-model' is not one of models[].key ['{SEED_MODEL_KEY}']"


@pytest.mark.parametrize(
    ("mutate", "location", "message"),
    [
        (
            lambda d: d["dataset"]["inputs"][0].update(categories="qa"),
            "dataset.inputs[0].categories",
            'expected a list of strings (got "qa")',
        ),
        (
            lambda d: d["dataset"]["inputs"][0].update(context=[7]),
            "dataset.inputs[0].context[0]",
            "expected a string or an object with text (got 7)",
        ),
        (
            lambda d: d["dataset"]["inputs"][0].update(cost=-1),
            "dataset.inputs[0].cost",
            "input should be greater than or equal to 0 (got -1)",
        ),
        (
            lambda d: d["models"][0].pop("model_type"),
            "models[0].model_type",
            "field required (expected a string)",
        ),
        (
            lambda d: d["models"].append({"key": "m1", "model_type": "x"}),
            "models[1].key",
            "duplicate model key 'm1'",
        ),
        (lambda d: d.pop("dataset"), "dataset", "field required (expected an object with inputs)"),
        (
            lambda d: d["dataset"]["inputs"].append(dict(d["dataset"]["inputs"][0])),
            "dataset.inputs[1]",
            "test case 'c1' is answered twice by model 'm1'",
        ),
    ],
)
def test_malformed_labs_name_the_field(
    tmp_path: Path, mutate: Callable[[dict], object], location: str, message: str
) -> None:
    data = _lab_data()
    mutate(data)
    with pytest.raises(FormatError) as caught:
        import_lab(_write(tmp_path, data))
    assert (caught.value.location, caught.value.message) == (location, message)


def test_duplicate_case_keys_name_both_places(tmp_path: Path) -> None:
    data = {
        "name": "s",
        "tests": [
            {"test_cases": [{"key": "k", "prompt": "a"}]},
            {"test_cases": [{"key": "k", "prompt": "b"}]},
        ],
    }
    with pytest.raises(FormatError) as caught:
        import_suite(_write(tmp_path, data))
    assert caught.value.location == "tests[1].test_cases[0].key"
    assert caught.value.message == "duplicate key 'k' (first used at tests[0].test_cases[0].key)"


def test_a_lab_given_as_suite_says_tests_are_missing(data_dir: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_suite(data_dir / "eval_studio_testlab.json")
    assert (caught.value.location, caught.value.message) == (
        "tests",
        "field required (expected a list of objects)",
    )


def test_export_refuses_settings_that_clash_with_model_fields(tmp_path: Path) -> None:
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="llm", settings={"name": "shadow"})])
    with pytest.raises(FormatError, match=r"models\[0\]\.settings uses \['name'\]"):
        export_lab(lab, tmp_path / "lab.json")


def test_a_file_that_is_not_an_object_is_reported(tmp_path: Path) -> None:
    path = _write(tmp_path, [1, 2])
    with pytest.raises(FormatError) as caught:
        import_suite(path)
    assert str(caught.value) == f"{path}: expected an object (got [1, 2])"
