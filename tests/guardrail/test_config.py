"""Loading guardrail configurations: both shapes, and one clear error naming the file and field."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.guardrail.config import default_config_data, load_config

EXAMPLE = Path(__file__).parents[2] / "examples" / "guardrails.json"


def test_example_is_the_builders_output_and_loads() -> None:
    assert json.loads(EXAMPLE.read_text()) == default_config_data()
    config = load_config(EXAMPLE)
    assert config.evaluators["groundedness"]["groundedness"].source == "default"
    assert len(config.sha256) == 64


def test_manuals_two_key_shape_takes_direction_from_metadata(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text(
        json.dumps({"calibrated_thresholds": {"toxicity": {"toxicity": 0.25}}, "evaluator_ids": ["toxicity"]})
    )
    metric = load_config(path).evaluators["toxicity"]["toxicity"]
    assert metric.higher_is_better is False and metric.source == "config"
    assert metric.passes(0.2) and not metric.passes(0.3)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"evaluator_ids": ["groundedness", "no_such"]}, "evaluator_ids[1]: unknown evaluator 'no_such'"),
        ({"calibrated_thresholds": {}}, "calibrated_thresholds.groundedness: missing"),
        ({"calibrated_thresholds": {"groundedness": {"groundedness": None}}}, "missing threshold"),
        ({"calibrated_thresholds": {"groundedness": {"nope": 0.5}}}, "groundedness.nope: groundedness has no such"),
        ({"calibrated_thresholds": {"groundedness": {"groundedness": 7}}}, "outside the metric's range"),
        ({"actions": {"groundedness": "drop"}}, "actions.groundedness"),
        ({"parameters": {"groundedness": {"speed": 1}}}, "parameters.groundedness.speed"),
        ({"acton": {}}, "acton: unknown key"),
        (
            {"threshold_details": {"groundedness": {"groundedness": {"higher_is_better": False}}}},
            "contradicts the evaluator's declared direction",
        ),
    ],
)
def test_bad_configuration_names_file_and_field(tmp_path: Path, change: dict, expected: str) -> None:
    data = {"calibrated_thresholds": {"groundedness": {"groundedness": 0.7}}, "evaluator_ids": ["groundedness"]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data | change))
    with pytest.raises(ValueError, match=r"bad\.json") as error:
        load_config(path)
    assert expected in str(error.value)


def test_cli_bad_json_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    result = CliRunner().invoke(app, ["guardrail", "check", "--config", str(path), "--question", "q", "--answer", "a"])
    assert result.exit_code == 2
    assert "broken.json: not valid JSON" in result.output
    assert "Traceback" not in result.output
