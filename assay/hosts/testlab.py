"""Precomputed answers: a host that replays the answers of an imported test lab."""

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from assay.calls.errors import HostError
from assay.hosts.base import Host, HostAnswer
from assay.models import HostSetting, HostSpec, TestCase, TestLab, TestLabRow


class TestLabHost(Host):
    """Settings: ``lab`` (path), ``format`` (default ``auto``: detected from the content), ``source_model_key``
    (which model's answers to replay when the lab holds several; default: the only one). Cases match by key,
    else by prompt."""

    __test__ = False
    spec: ClassVar[HostSpec] = HostSpec(
        id="testlab",
        display_name="Precomputed answers (test lab)",
        description="Replays precomputed answers from an imported test lab (no system is called).",
        model_type="rag",
        protocol="Test lab file (no calls)",
        settings=[
            HostSetting(name="lab", description="Path of the test lab file with the answers.", required=True),
            HostSetting(name="format", description="Format of the lab file; auto detects it.", default="auto"),
            HostSetting(
                name="source_model_key", description="Which model's answers to replay when the lab holds several."
            ),
        ],
        returns_context=True,
        returns_tokens=True,
        returns_cost=True,
        multi_turn=True,
    )

    def _load(self) -> None:
        if getattr(self, "_by_key", None) is not None:
            return
        from assay.formats import import_file

        settings = self.config.settings
        if "lab" not in settings:
            raise HostError(f"host {self.config.key}: setting 'lab' (path of a test lab file) is required")
        path = Path(settings["lab"])
        lab = import_file(path, settings.get("format", "auto"))
        if not isinstance(lab, TestLab):
            raise HostError(f"host {self.config.key}: {path} holds a test suite, not a test lab with answers")
        rows = _rows_of(lab, settings.get("source_model_key"), path)
        self._source = path
        self._by_key = {row.test_case.key: row for row in rows}
        self._by_prompt = {row.test_case.prompt: row for row in rows}

    async def prepare(self, cases: Sequence[TestCase]) -> None:
        self._load()

    async def answer(self, case: TestCase) -> HostAnswer:
        self._load()
        row = self._by_key.get(case.key) or self._by_prompt.get(case.prompt)
        if row is None:
            raise HostError(f"no precomputed answer for test case {case.key!r} in {self._source}")
        if row.error is not None or row.actual_output is None:
            raise HostError(f"the lab {self._source} recorded no answer for {case.key!r}: {row.error}")
        return HostAnswer(
            actual_output=row.actual_output,
            context=row.context,
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            cost=row.cost,
            tool_calls=row.tool_calls,
        )


def _rows_of(lab: TestLab, model_key: str | None, path: Path) -> list[TestLabRow]:
    keys = [model.key for model in lab.models]
    if model_key is None:
        if len(keys) != 1:
            raise HostError(f"{path} holds answers of models {keys}: set 'source_model_key' to pick one")
        model_key = keys[0]
    if model_key not in keys:
        raise HostError(f"{path} has no model {model_key!r}; it has {keys}")
    return lab.rows_for(model_key)
