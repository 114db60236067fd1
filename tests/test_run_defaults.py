"""One set of run defaults (``RunDefaults``) behind the CLI's options, the flows' parameters and the
deployments' Run forms: changing one changes all three."""

import inspect

import typer
from assay.flows.mrm import mrm_workflow

from assay.apps.cli import mrm as mrm_command
from assay.hosts.files import DEFAULT_HOSTS, host_configs
from assay.models.workflow import RUN_DEFAULTS


def _option_default(function: object, name: str) -> object:
    default = inspect.signature(function).parameters[name].default
    return default.default if isinstance(default, typer.models.OptionInfo) else default


def test_the_cli_and_the_flow_start_an_mrm_run_from_the_same_defaults() -> None:
    flow = inspect.signature(mrm_workflow.fn).parameters
    command = mrm_command.run
    assert (flow["name"].default, flow["seed"].default) == (RUN_DEFAULTS.mrm_name, RUN_DEFAULTS.seed)
    assert (_option_default(command, "name"), _option_default(command, "seed")) == (
        RUN_DEFAULTS.mrm_name,
        RUN_DEFAULTS.seed,
    )


def test_a_run_that_names_no_host_asks_the_default_ones() -> None:
    assert RUN_DEFAULTS.hosts == DEFAULT_HOSTS
    assert [config.type for config in host_configs(None)] == list(RUN_DEFAULTS.hosts)


def test_a_revalidation_and_its_baseline_default_to_one_name() -> None:
    from assay.flows.baseline import approve_baseline_flow
    from assay.flows.revalidate import revalidation_flow

    from assay.apps.cli import baseline as baseline_command

    defaults = {
        inspect.signature(revalidation_flow.fn).parameters["name"].default,
        inspect.signature(approve_baseline_flow.fn).parameters["name"].default,
        _option_default(baseline_command.approve, "name"),
        _option_default(baseline_command.show, "name"),
    }
    assert defaults == {RUN_DEFAULTS.revalidation_name}
