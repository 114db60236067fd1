"""Where a plugin comes from, and why an installed one could not be used.

Every plugin kind (evaluators, perturbators, hosts, question generators, judge templates) reports its origin in
this one shape, so a listing, a catalogue or a results reader names the package behind a plugin the same way
for all of them. The choice types (``EvaluatorId``, ``EvaluatorSelection``, ``PerturbatorId``) are what a flow's
parameters and the MRM step parameters declare, so that the Prefect Run form offers the registered ids."""

from dataclasses import dataclass
from importlib import import_module
from typing import Annotated, Any

from pydantic import Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from assay.models.base import DomainModel

ASSAY_PACKAGE = "assay"


class PluginOrigin(DomainModel):
    """The distribution a plugin came from: Assay itself for a built-in, another package for a plugin found
    through an entry point (``[project.entry-points."assay.evaluators"]`` and the like)."""

    package: str = Field(description="Distribution name, as pip knows it; 'assay' for the built-ins.")
    version: str | None = Field(default=None, description="The distribution's version, when it has one.")
    entry_point: str | None = Field(
        default=None, description="'name = module:attribute' for a plugin of another package; None for a built-in."
    )

    @property
    def label(self) -> str:
        """'package version', e.g. 'assay-example-plugin 0.1.0', as listings show it."""
        return self.package if self.version is None else f"{self.package} {self.version}"


class UnavailablePlugin(DomainModel):
    """An installed plugin that could not be registered: it failed to import or its registration check."""

    kind: str = Field(description="What it was meant to be: 'evaluator', 'perturbator', 'host type', ...")
    id: str = Field(description="The entry point's name, which is the id the plugin would have had.")
    origin: PluginOrigin
    error: str = Field(description="What went wrong: the exception's type and message.")

    @property
    def qualified_id(self) -> str:
        """'package/id', as listings name it (after inspect_ai): never the same as a registered plugin's id, even
        when the plugin was refused for taking one."""
        return f"{self.origin.package}/{self.id}"


def _named(reference: str) -> Any:
    """The attribute a "module:attribute" reference names, its module imported now."""
    module, _, attribute = reference.partition(":")
    return getattr(import_module(module), attribute)


@dataclass(frozen=True)
class RegisteredIds:
    """``Annotated[str, RegisteredIds(...)]``: a string naming a registered plugin, which the JSON schema (the
    Prefect Run form) offers as a choice among ``keywords`` and every id registered when the schema is built:
    built-ins and the loadable plugins of other packages (one that fails to load is not registered, so not
    offered). Only the schema changes: a value is validated as any string, and the flow refuses an unknown id
    with its own message, naming it.

    ``ids`` names the function that lists the ids and ``keywords`` the tuple of words accepted beside them, as
    "module:attribute": the plugins sit above the models (the layers contract), so they are imported when a
    schema is built, as the registry imports its built-ins, never when this module is."""

    ids: str
    keywords: str | None = None

    def choices(self) -> list[str]:
        return [*(_named(self.keywords) if self.keywords else ()), *_named(self.ids)()]

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["enum"] = self.choices()
        return schema


EvaluatorId = Annotated[str, RegisteredIds("assay.evaluators.registry:evaluator_ids")]
"""An evaluator id."""
EvaluatorSelection = Annotated[
    str, RegisteredIds("assay.evaluators.registry:evaluator_ids", "assay.evaluators.selection:SELECTION_KEYWORDS")
]
"""An evaluator id, or a selection keyword (all, recommended) where a flow's evaluator list accepts one."""
PerturbatorId = Annotated[str, RegisteredIds("assay.perturbators.registry:perturbator_ids")]
"""A perturbator id."""
