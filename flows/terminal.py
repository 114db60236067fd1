"""What Prefect's logging shows on the terminal of an ``assay`` command.

When a step fails, Prefect logs the exception with its traceback (25 lines and more) to the console, before
the command has a chance to say in one line what went wrong. The command line keeps Prefect's log lines but
drops their tracebacks from the terminal unless ``--debug`` is given; the Prefect server and UI still
receive the full record.
"""

import logging

from prefect.logging.handlers import PrefectConsoleHandler


class _WithoutTraceback(logging.Formatter):
    """Formats a record as ``inner`` would, leaving out its exception and stack information."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        saved = (record.exc_info, record.exc_text, record.stack_info)
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return self.inner.format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved


def hide_tracebacks_on_terminal() -> None:
    """Drop tracebacks from every Prefect console handler (call once Prefect has set up its logging)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler) and not isinstance(handler.formatter, _WithoutTraceback):
            handler.setFormatter(_WithoutTraceback(handler.formatter))


def console_to_current_stderr() -> None:
    """Point Prefect's console handlers at the current ``sys.stderr``. Prefect builds them once per process
    with the stream of that moment; a second command run in the same process (a notebook, a test runner that
    swaps the streams) would otherwise log into a stream the first one closed, and fail."""
    import sys

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler) and handler.stream is not sys.stderr:
            handler.stream = sys.stderr  # not setStream(): it flushes the old stream, which may be closed
            handler.console.file = sys.stderr
