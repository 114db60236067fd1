"""Helpers shared by CLI commands: settings and clean error exits."""

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

console = Console()
errors = Console(stderr=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Expected failures (bad input, missing files, storage errors) print one clear line and exit 2."""
    from assay.storage.errors import StorageError

    try:
        yield
    except (ValueError, FileNotFoundError, KeyError, OSError, StorageError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        errors.print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
        raise typer.Exit(code=2) from error
