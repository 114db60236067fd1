"""What Prefect's logging shows on the terminal of an ``assay`` command.

When a step fails, Prefect logs the exception with its traceback (25 lines and more) to the console, before
the command has a chance to say in one line what went wrong. The command line keeps Prefect's log lines but
drops their tracebacks from the terminal unless ``--debug`` is given; the Prefect server and UI still
receive the full record.
"""

import logging
import sys

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


class _CurrentStderr:
    """A stream that is always whatever ``sys.stderr`` is at the moment of writing."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()

    def fileno(self) -> int:
        return sys.stderr.fileno()

    @property
    def encoding(self) -> str:
        return getattr(sys.stderr, "encoding", None) or "utf-8"


def console_to_current_stderr() -> None:
    """Make Prefect's console handlers write to ``sys.stderr`` as it is when they write. Prefect builds them
    once per process with the stream of that moment; a second command run in the same process (a notebook, a
    test runner that swaps the streams per command) would otherwise log into a stream the first one closed."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler) and not isinstance(handler.stream, _CurrentStderr):
            stream = _CurrentStderr()
            handler.stream = stream  # not setStream(): it flushes the old stream, which may be closed
            handler.console.file = stream  # type: ignore[assignment]
