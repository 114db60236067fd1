"""Where a plugin comes from, and why an installed one could not be used.

Every plugin kind (evaluators, perturbators, hosts, question generators, judge templates) reports its origin in
this one shape, so a listing, a catalogue or a results reader names the package behind a plugin the same way
for all of them."""

from pydantic import Field

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
