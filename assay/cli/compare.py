"""``assay compare BASELINE CURRENT``: what changed between two runs."""


def compare() -> None:
    """Compare two runs (by run id or folder)."""
    raise NotImplementedError("being written")
