"""The production re-validation's Run form describes every parameter (Prefect reads the flow's Google-style
``Args:`` section into the form's field descriptions)."""

import pytest
from assay.flows.production import production_revalidation_flow
from prefect.exceptions import ParameterTypeError

from assay.models.workflow import RUN_DEFAULTS


def test_every_production_revalidation_parameter_has_a_description() -> None:
    properties = production_revalidation_flow.parameters.model_dump()["properties"]
    undescribed = [name for name, field in properties.items() if len(field.get("description") or "") < 20]
    assert undescribed == []
    assert "otlp-json" in properties["format"]["description"] and "10%" in properties["sample"]["description"]


def test_the_failed_requests_limit_is_its_own_described_and_bounded_parameter() -> None:
    """The Run form says what the limit is and what an empty field means (the default, as RunDefaults has it),
    and refuses a share outside 0..1 before the run starts."""
    properties = production_revalidation_flow.parameters.model_dump()["properties"]
    field = properties["max_failed_requests_share"]
    assert field["default"] is None and f"the default, {RUN_DEFAULTS.max_failed_requests_share}" in " ".join(
        field["description"].split()
    )
    assert "max_failed_requests_share" in properties["fail_on"]["description"]  # fail_on says it leaves them out
    assert production_revalidation_flow.validate_parameters({"traces": "t", "max_failed_requests_share": 0.1})
    with pytest.raises(ParameterTypeError, match="less than or equal to 1"):
        production_revalidation_flow.validate_parameters({"traces": "t", "max_failed_requests_share": 5})
