"""The production re-validation's Run form describes every parameter (Prefect reads the flow's Google-style
``Args:`` section into the form's field descriptions)."""

from assay.flows.production import production_revalidation_flow


def test_every_production_revalidation_parameter_has_a_description() -> None:
    properties = production_revalidation_flow.parameters.model_dump()["properties"]
    undescribed = [name for name, field in properties.items() if len(field.get("description") or "") < 20]
    assert undescribed == []
    assert "otlp-json" in properties["format"]["description"] and "10%" in properties["sample"]["description"]
