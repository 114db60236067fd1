"""Every example host file is a valid host configuration of a registered type, names its credential by
reference only, and every host type has an example; the hosts how-to (docs/how-to/hosts.md) names each example."""

import json
from pathlib import Path

import pytest

from assay.apps.cli.inputs import host_file
from assay.hosts import create_host
from assay.hosts.registry import BUILTIN_HOSTS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "hosts").glob("*.json"))
IN_PROCESS = {"sample-rag", "sample-rag-keyword", "testlab"}  # used by name (--host sample-rag), no file needed


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_an_example_loads_as_the_cli_loads_it_and_creates_its_host(path: Path) -> None:
    config = host_file(path, "--host")
    assert create_host(config).config is config
    raw = json.loads(path.read_text())
    assert not any(word in json.dumps(raw).lower() for word in ("sk-", "password", "api_key\": \"")), path


def test_every_host_type_has_an_example_named_in_the_docs() -> None:
    types = {json.loads(path.read_text())["type"] for path in EXAMPLES}
    assert set(BUILTIN_HOSTS) - IN_PROCESS <= types
    guide = (ROOT / "docs" / "how-to" / "hosts.md").read_text()
    missing = [path.name for path in EXAMPLES if f"examples/hosts/{path.name}" not in guide]
    assert missing == []
