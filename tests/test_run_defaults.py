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
