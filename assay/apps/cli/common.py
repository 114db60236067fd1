"""Helpers shared by CLI commands: the consoles, clean error exits, and the one place where errors no command
expected end (one line and exit 1; the traceback only with ``--debug``)."""

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from assay.escaping import for_terminal

console = Console()
errors = Console(stderr=True)
DEBUG_HINT = "run with --debug for the traceback"


class Options:
    """Global options of the ``assay`` command, set by its callback before any command runs."""

    debug = False


options = Options()


def show_error(message: object) -> None:
    """One line on standard error; the message is data (a file name may hold ``[``), never markup."""
    one_line = " ".join(str(message).split())
    errors.print(f"[bold red]error:[/] {for_terminal(one_line)}", highlight=False, soft_wrap=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Expected failures (bad input, missing files, storage errors) print one clear line and exit 2."""
    from assay.storage.errors import StorageError

    try:
        yield
    except (ValueError, FileNotFoundError, KeyError, OSError, StorageError) as error:
        if options.debug:
            traceback.print_exception(error)
        show_error(error.args[0] if isinstance(error, KeyError) and error.args else error)
        raise typer.Exit(code=2) from error


def command_group(help: str, **settings: Any) -> typer.Typer:
    """A group of commands with Assay's help layout: click's plain one, which wraps the text and never cuts an
    option's name (rich's tables cut ``--per-topic-per-generator`` to ``--per-topic-per…`` at 80 columns)."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None, **settings)


class AssayGroup(TyperGroup):
    """The top-level command group: a failure no command anticipated is shown as one line and a hint, and
    exits 1; with ``--debug`` it propagates with its traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Exception as error:
            if options.debug:
                raise
            show_error(f"{type(error).__name__}: {error} ({DEBUG_HINT})")
            raise typer.Exit(code=1) from error
