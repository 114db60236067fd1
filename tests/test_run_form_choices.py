"""The Run form of each deployment offers the registered ids as choices: Prefect builds the form from
``parameter_schema(flow.fn)`` (what ``prefect deploy`` and ``python -m assay.deployments.serve`` register), and an
array whose items are strings with an ``enum`` is a multi-select there. The choices are read from the registries
when the schema is built, so they are compared with the registries here, never with a list written down; a
plugin of another package is offered too (``tests/test_plugins.py`` checks that in an environment with one)."""

from typing import Any

import pytest
from assay.deployments.definitions import load_deployments
from assay.evaluators import evaluator_ids
from assay.evaluators.selection import SELECTION_KEYWORDS
from assay.perturbators import perturbator_ids
from prefect.utilities.callables import parameter_schema

from assay.models.workflow import MrmParameters, RobustnessParameters

FLOWS = {spec.entrypoint: spec.load_flow() for spec in load_deployments()}
"""Each deployed flow once, by entrypoint."""
KEYWORDS = {"mrm-workflow": SELECTION_KEYWORDS, "evaluate": SELECTION_KEYWORDS}
"""The flows whose evaluator list takes a selection keyword (``all``, ``recommended``) in place of ids; the
re-validations check their gates against the evaluators named, so they take ids only."""
PERTURBATOR_LISTS = ("variation_perturbators", "adversarial_perturbators")


def choices(schema: dict[str, Any], field: dict[str, Any]) -> list[str]:
    """The enum of a list field's items (``list[...] | None`` is an anyOf with null), in the shape the UI's
    multi-select takes: an array of strings with an enum."""
    field = next((option for option in field.get("anyOf", [field]) if option.get("type") == "array"), field)
    assert field["type"] == "array" and field["items"]["type"] == "string", field
    return field["items"]["enum"]


def definition(schema: dict[str, Any], field: dict[str, Any]) -> dict[str, Any]:
    return schema["definitions"][field["$ref"].rsplit("/", 1)[-1]]


@pytest.mark.parametrize("entrypoint", sorted(FLOWS))
def test_every_evaluator_list_offers_every_registered_evaluator_and_the_keywords_the_flow_takes(
    entrypoint: str,
) -> None:
    flow = FLOWS[entrypoint]
    schema = parameter_schema(flow.fn).model_dump(mode="json")
    if "evaluators" not in schema["properties"]:
        assert flow.name == "approve-baseline"
        return
    offered = choices(schema, schema["properties"]["evaluators"])
    assert offered == [*KEYWORDS.get(flow.name, ()), *evaluator_ids()]


def test_the_mrm_perturbator_lists_offer_every_registered_perturbator() -> None:
    with_robustness = [flow for flow in FLOWS.values() if "robustness" in flow.parameters.properties]
    assert {flow.name for flow in with_robustness} == {"mrm-workflow"}
    for flow in with_robustness:
        schema = parameter_schema(flow.fn).model_dump(mode="json")
        robustness = definition(schema, schema["properties"]["robustness"])
        for name in PERTURBATOR_LISTS:
            assert choices(schema, robustness["properties"][name]) == perturbator_ids(), name
    step_parameters = MrmParameters.model_json_schema()["$defs"]["RobustnessParameters"]["properties"]
    assert all(choices({}, step_parameters[name]) == perturbator_ids() for name in PERTURBATOR_LISTS)


def test_the_choices_add_no_validation_to_the_flows_an_unknown_id_is_left_to_the_flow_to_refuse() -> None:
    """The flows validate their parameters as before: an id outside the enum reaches the flow, whose refusal
    names it and the known ids (called directly, or run from a deployment whose server does not enforce its
    parameter schema; one that does refuses the run first, naming the id and the choices)."""
    evaluate = FLOWS["flows/evaluate.py:evaluate_flow"]
    assert evaluate.validate_parameters({"evaluators": ["no_such_evaluator"]})["evaluators"] == ["no_such_evaluator"]
    mrm = FLOWS["flows/mrm.py:mrm_workflow"]
    parameters = mrm.validate_parameters({"robustness": {"variation_perturbators": ["random_OCR", "nope"]}})
    assert parameters["robustness"] == RobustnessParameters(variation_perturbators=["random_OCR", "nope"])
