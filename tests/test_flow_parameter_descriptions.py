"""Every field of a deployment's Run form says what it is: Prefect builds the form (the deployment's
``parameter_openapi_schema``) with ``parameter_schema(flow.fn)``, which takes each parameter's description from
the ``Args:`` section of the flow function's Google-style docstring (parsed by griffe). A parameter missing
from that section shows an empty field description in the UI and a "-" in ``docs/reference/flows.md``; an
entry naming a parameter the flow no longer has is stale. No Prefect server is needed."""

import inspect
from typing import Any

import pytest
from assay.deployments.definitions import load_deployments
from griffe import Docstring, DocstringSectionKind, Parser, parse
from prefect.utilities.callables import parameter_schema

ENTRYPOINTS = sorted({spec.entrypoint for spec in load_deployments()})
"""Each deployed flow once (two deployments may share a flow), as ``deployments/prefect.yaml`` names them."""


def deployed_flow(entrypoint: str) -> Any:
    return next(spec for spec in load_deployments() if spec.entrypoint == entrypoint).load_flow()


def documented_parameters(fn: Any) -> list[str]:
    """The names of every parameters section (``Args:``) of ``fn``'s docstring, as griffe reads them."""
    sections = parse(Docstring(inspect.getdoc(fn) or ""), Parser.google, warnings=False)
    return [item.name for section in sections if section.kind == DocstringSectionKind.parameters
            for item in section.value]  # fmt: skip


def test_every_deployment_is_checked() -> None:
    assert len(ENTRYPOINTS) >= 5, ENTRYPOINTS


@pytest.mark.parametrize("entrypoint", ENTRYPOINTS)
def test_every_run_form_field_has_a_description(entrypoint: str) -> None:
    flow = deployed_flow(entrypoint)
    properties = parameter_schema(flow.fn).model_dump(mode="json")["properties"]
    assert set(properties) == set(inspect.signature(flow.fn).parameters)
    undescribed = [name for name, field in properties.items() if not str(field.get("description") or "").strip()]
    assert undescribed == [], f"{entrypoint}: add these to the docstring's Args: section"


@pytest.mark.parametrize("entrypoint", ENTRYPOINTS)
def test_every_args_entry_names_a_parameter_once(entrypoint: str) -> None:
    flow = deployed_flow(entrypoint)
    documented = documented_parameters(flow.fn)
    stale = [name for name in documented if name not in inspect.signature(flow.fn).parameters]
    assert stale == [], f"{entrypoint}: the docstring's Args: section names parameters the flow does not have"
    assert len(documented) == len(set(documented)), f"{entrypoint}: a parameter is documented twice"
