"""Files written whole or not at all: a command killed while writing leaves the previous file as it was.

Every output a command writes (labs, reports, results, artifacts, exports) goes to a temporary file in the
target's folder and replaces the target in one rename (``os.replace``, atomic on POSIX within a file system).
Readers, and a rerun after a kill, see the old file or the new one, never half of one; the temporary file is
removed when writing fails. No fsync: the guarantee is against a killed process, not a lost machine, and a run
writes hundreds of small files.
"""

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()
"""What ``open`` would have given a new file (``mkstemp`` makes it private to the owner)."""


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace ``path`` by ``data`` (text is written as UTF-8 with ``\\n`` line ends), creating its folder."""
    write_all_atomic([(path, data)])


def write_all_atomic(files: Sequence[tuple[Path, str | bytes]]) -> None:
    """Write several files that belong together (a lab and its import report): each goes to a temporary file
    first, and only when all are on disk do the renames run, back to back, so a kill while writing leaves the
    previous set, never a new file beside a stale one."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files:
            staged.append((_staged(path, data), path))
        for temporary, path in staged:
            os.replace(temporary, path)
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)


def _staged(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(temporary, FILE_MODE)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary
