"""deployments/prefect.yaml checked as Prefect and a user would meet it, without a server: the deploy loader
accepts it, its anchors resolve, every entrypoint is a flow, every deployment's parameters validate against
that flow's parameter schema, schedules are valid crons, and serve's options shape what it registers."""

import inspect
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from assay.deployments import sync
from assay.deployments.definitions import PREFECT_FILE, REPOSITORY_ROOT, load_deployments, load_prefect_file
from assay.deployments.serve import build_deployments, main, parse_args
from assay.flows.mrm import mrm_workflow

from assay.corpora import sample_data_path
from assay.models import workflow as step_models

SPECS = {spec.name: spec for spec in load_deployments()}
STEP_MODELS = {name: field.annotation for name, field in step_models.MrmParameters.model_fields.items()}


def test_prefect_deploy_loader_accepts_the_file_and_sees_every_deployment() -> None:
    from prefect.cli.deploy._models import PrefectYamlModel

    # The deploy CLI skips a file that fails this model with only a yellow warning, so check it strictly.
    model = PrefectYamlModel.model_validate(load_prefect_file())
    assert [(d.entrypoint, d.name) for d in model.deployments] == [
        ("flows/mrm.py:mrm_workflow", "interactive"),
        ("flows/mrm.py:mrm_workflow", "unattended"),
        ("flows/evaluate.py:evaluate_flow", "evaluate"),
        ("flows/revalidate.py:revalidation_flow", "revalidation"),
        ("flows/production.py:production_revalidation_flow", "production-revalidation"),
        ("flows/baseline.py:approve_baseline_flow", "approve-baseline"),
    ]
    assert {d.work_pool.name for d in model.deployments if d.work_pool} == {"assay-process"}
    assert model.pull == [{"prefect.deployments.steps.set_working_directory": {"directory": "{{ repository.stdout }}"}}]


def test_anchors_resolve_to_the_shared_definitions() -> None:
    document = load_prefect_file()
    shared = document["definitions"]["parameters"]
    for name in ("interactive", "unattended"):
        parameters = SPECS[name].parameters
        assert "<<" not in parameters
        assert {key: parameters[key] for key in STEP_MODELS} == shared["mrm_steps"]
        assert parameters["hosts"] == shared["sample_hosts"] == ["sample-rag"]
        assert parameters["seed"] == shared["seed"]
    assert SPECS["interactive"].parameters["interactive"] is True
    assert SPECS["unattended"].parameters["interactive"] is False
    for name in ("evaluate", "revalidation"):
        assert SPECS[name].parameters["evaluators"] == shared["offline_evaluators"]
    assert SPECS["revalidation"].schedules[0].cron == document["definitions"]["schedules"]["mondays_0600"]["cron"]


@pytest.mark.parametrize("step", sorted(STEP_MODELS))
def test_mrm_step_parameters_start_from_the_models_defaults(step: str) -> None:
    assert SPECS["interactive"].parameters[step] == STEP_MODELS[step]().model_dump(mode="json")


def test_relative_paths_resolve_from_the_repository_root() -> None:
    suite = REPOSITORY_ROOT / SPECS["revalidation"].parameters["suite"]
    assert suite.resolve() == (sample_data_path() / "suite.json").resolve()
    for spec in SPECS.values():
        assert (REPOSITORY_ROOT / spec.entrypoint.partition(":")[0]).is_file(), spec.entrypoint
        out = spec.parameters.get("out")
        assert out is None or out.startswith(".assay/"), "exports belong in Assay's git-ignored home"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_parameters_validate_against_the_flows_parameter_schema(name: str) -> None:
    from prefect.utilities.callables import parameter_schema
    from prefect.utilities.schema_tools import validate

    spec = SPECS[name]
    flow = spec.load_flow()
    schema = parameter_schema(flow).model_dump_for_openapi()
    validate(spec.parameters, schema, raise_on_error=True, ignore_required=False)
    flow.validate_parameters(spec.parameters)
    required = set(schema.get("required", []))
    assert required <= set(spec.parameters), (
        f"{name}: the Run form would start without {required - set(spec.parameters)}"
    )


def test_the_mrm_flow_schema_shows_step_parameters_as_nested_fields() -> None:
    from prefect.utilities.callables import parameter_schema

    schema = parameter_schema(SPECS["interactive"].load_flow()).model_dump_for_openapi()
    for step, model in STEP_MODELS.items():
        reference = schema["properties"][step]
        definition = reference.get("$ref", (reference.get("allOf") or [{}])[0].get("$ref", ""))
        fields = schema["definitions"][definition.rsplit("/", 1)[-1]]["properties"]
        shown = {name for name, field in model.model_fields.items() if not field.exclude}  # not a deprecated name
        assert set(fields) == shown, step


def test_schedules_are_valid_crons_that_fire_when_documented() -> None:
    from prefect._vendor.croniter import croniter
    from prefect.client.schemas.schedules import CronSchedule

    scheduled = {name: spec.schedules for name, spec in SPECS.items() if spec.schedules}
    assert set(scheduled) == {"unattended", "revalidation", "production-revalidation"}
    for schedules in scheduled.values():
        for item in schedules:
            CronSchedule(cron=item.cron, timezone=item.timezone)
    monday = croniter(SPECS["revalidation"].schedules[0].cron, datetime(2026, 11, 24, tzinfo=UTC)).get_next(datetime)
    assert (monday.weekday(), monday.hour, monday.minute) == (0, 6, 0)
    daily = croniter(SPECS["production-revalidation"].schedules[0].cron, datetime(2026, 11, 24, 6, tzinfo=UTC))
    assert daily.get_next(datetime) == datetime(2026, 11, 25, 5, tzinfo=UTC)


def test_a_schedule_with_both_cron_and_interval_is_refused_naming_the_file(tmp_path: Path) -> None:
    broken = yaml.safe_load(PREFECT_FILE.read_text())
    broken["deployments"][3]["schedules"] = [{"cron": "0 6 * * 1", "interval": 60}]
    path = tmp_path / "prefect.yaml"
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(ValueError, match=r"prefect\.yaml: deployments\[3\]\.schedules"):
        load_deployments(path)


def test_serve_overrides_cron_and_out_root_for_the_selected_deployment(tmp_path: Path) -> None:
    deployments = build_deployments(
        parse_args(["--deployment", "revalidation/revalidation", "--cron", "0 7 * * *", "--out", str(tmp_path)])
    )
    assert [(d.flow_name, d.name) for d in deployments] == [("revalidation", "revalidation")]
    (revalidation,) = deployments
    assert [item.schedule.cron for item in revalidation.schedules] == ["0 7 * * *"]
    assert revalidation.schedules[0].schedule.timezone == "UTC"
    assert revalidation.parameters["out"] == str(tmp_path / "revalidation" / "{run_id}")  # a folder per run
    assert revalidation.parameters["suite"] == SPECS["revalidation"].parameters["suite"]


def test_serve_refuses_unknown_names_and_a_cron_for_unscheduled_deployments() -> None:
    with pytest.raises(SystemExit, match="no deployment named 'nightly'"):
        build_deployments(parse_args(["--deployment", "nightly"]))
    with pytest.raises(SystemExit, match="none of the selected deployments has one"):
        build_deployments(parse_args(["--deployment", "evaluate", "--cron", "0 7 * * *"]))


def test_serve_registers_all_deployments_with_their_yaml_parameters_by_default() -> None:
    deployments = {f"{d.flow_name}/{d.name}": d for d in build_deployments(parse_args([]))}
    assert set(deployments) == {
        "mrm-workflow/interactive",
        "mrm-workflow/unattended",
        "evaluate/evaluate",
        "revalidation/revalidation",
        "production-revalidation/production-revalidation",
        "approve-baseline/approve-baseline",
    }
    for deployment in deployments.values():
        assert deployment.parameters == SPECS[deployment.name].parameters
    assert deployments["mrm-workflow/interactive"].schedules == []
    assert [s.schedule.cron for s in deployments["mrm-workflow/unattended"].schedules] == ["0 2 * * 0"]


def test_serve_list_prints_what_would_be_served(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # serve works from any folder; the fixture restores it after main's chdir
    main(["--list", "--deployment", "revalidation", "--deployment", "mrm-workflow/interactive", "--cron", "0 7 * * *"])
    assert capsys.readouterr().out.splitlines() == [
        "revalidation/revalidation\t0 7 * * * (UTC)",
        "mrm-workflow/interactive\tno schedule",
    ]


def test_the_defaults_block_is_generated_from_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert sync.main(["--check"]) == 0, capsys.readouterr().out
    block = sync.render(sync.defaults())
    assert block[0] in PREFECT_FILE.read_text().splitlines()
    assert f"    seed: &seed {inspect.signature(mrm_workflow.fn).parameters['seed'].default}" in block


def test_a_stale_defaults_block_is_reported_then_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "prefect.yaml"
    stale.write_text(PREFECT_FILE.read_text().replace("        per_topic: 3\n", "        per_topic: 4\n"))

    assert sync.main(["--check"], path=stale) == 1
    captured = capsys.readouterr()
    assert "-        per_topic: 4" in captured.out and "+        per_topic: 3" in captured.out
    assert "run `python -m assay.deployments.sync`" in captured.err

    assert sync.main([], path=stale) == 0
    assert stale.read_text() == PREFECT_FILE.read_text()
    assert sync.main(["--check"], path=stale) == 0


def test_a_file_without_the_markers_is_named_and_left_as_it_is(tmp_path: Path) -> None:
    edited = tmp_path / "prefect.yaml"
    edited.write_text(PREFECT_FILE.read_text().replace(sync.BEGIN + "\n", ""))
    before = edited.read_text()
    with pytest.raises(SystemExit, match=rf"{edited}: the marker lines of the generated block are missing"):
        sync.main([], path=edited)
    assert edited.read_text() == before
