"""Every command's ``--help`` at 80 columns names every option in full (rich's tables cut them: "--per-topic-per…")."""

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from assay.apps.cli.main import app


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, group
    if hasattr(group, "commands"):
        for name, command in group.commands.items():
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(path) or "assay" for path, _ in COMMANDS])
def test_help_at_80_columns_names_every_option_in_full(path: tuple[str, ...], command: Any) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    words = set(result.output.replace(",", " ").replace("/", " ").split())
    for parameter in command.params:
        for name in [*parameter.opts, *parameter.secondary_opts]:
            if name.startswith("--"):
                assert name in words, f"{name} is cut in `assay {' '.join(path)} --help`:\n{result.output}"
