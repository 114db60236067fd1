"""Test fixtures shared by the tests that start servers and flows in child processes."""

import os
import shutil
import signal
import subprocess
from pathlib import Path

from assay.corpora import sample_data_path

# Eight sample documents: enough chunks for several topics, small enough for a quick MRM run.
SMALL_CORPUS = (
    "report-a-lost-or-stolen-card.md",
    "easy-access-savings-product-sheet.md",
    "fixed-rate-bond-product-sheet.md",
    "overdraft-fees-policy.md",
    "contact-us.md",
    "personal-loan-product-sheet.md",
    "dispute-a-card-transaction.md",
    "set-up-a-standing-order.md",
)


def small_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in SMALL_CORPUS:
        shutil.copy(sample_data_path() / "corpus" / name, folder / name)
    return folder


def stop_group(process: subprocess.Popen, first: signal.Signals = signal.SIGINT, timeout_s: float = 30) -> None:
    """Stop a child started with ``start_new_session=True`` and everything it started: ``first``, then KILL."""
    if process.poll() is None:
        os.killpg(process.pid, first)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
