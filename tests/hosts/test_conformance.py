"""Every registered host type declares valid metadata, is listed by ``assay hosts list`` and starts from a
minimal configuration (the rules ship in ``assay.testing.conformance.hosts``); ``register_host`` refuses a
class whose metadata is wrong."""

import json

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.hosts import Host, HostAnswer, host_class, host_types, register_host
from assay.hosts.registry import BUILTIN_HOSTS, host_spec
from assay.models import HostSpec, TestCase
from assay.testing.conformance import Check, parametrize_with_checks
from assay.testing.conformance.hosts import host_checks

runner = CliRunner()
BUILTIN_TYPES = sorted(BUILTIN_HOSTS)  # not host_types(): other tests register doubles


@parametrize_with_checks(host_checks(BUILTIN_TYPES))
def test_every_built_in_host_conforms(check: Check) -> None:
    check()


@pytest.mark.parametrize("host_type", BUILTIN_TYPES)
def test_hosts_list_shows_the_type_with_its_metadata(host_type: str) -> None:
    result = runner.invoke(app, ["hosts", "list", "--json"])
    assert result.exit_code == 0, result.output
    listed = {spec["id"]: spec for spec in json.loads(result.stdout)}
    entry = listed[host_type]
    assert entry.pop("available") is True and entry.pop("origin")["package"] == "assay"  # where it comes from
    assert HostSpec.model_validate(entry) == host_spec(host_type)
    table = runner.invoke(app, ["hosts", "list"])
    assert table.exit_code == 0, table.output
    assert host_type in table.output.split()  # ids never wrap; the other columns do on a narrow terminal


def _double(host_type: str, **attributes: object) -> type[Host]:
    async def answer(self: Host, case: TestCase) -> HostAnswer:
        return HostAnswer(actual_output="x")

    return type("Double", (Host,), {"type": host_type, "description": "test double", "answer": answer, **attributes})


def test_a_double_without_spec_gets_a_minimal_one() -> None:
    cls = register_host(_double("conformance-minimal-double"))
    spec = cls.host_spec()
    assert spec.id == "conformance-minimal-double" and spec.description == "test double"


def test_register_host_refuses_a_spec_for_another_type() -> None:
    spec = host_spec("sample-rag").model_copy(update={"id": "something-else"})
    with pytest.raises(ValueError, match=r"spec\.id 'something-else' differs from its type 'conformance-mismatch'"):
        register_host(_double("conformance-mismatch", spec=spec))
    assert "conformance-mismatch" not in host_types()


def test_register_host_refuses_an_invalid_spec_naming_the_field() -> None:
    bad = HostSpec.model_construct(**{**dict(host_spec("testlab")), "id": "bad-type", "model_type": "db"})
    with pytest.raises(ValueError, match="invalid spec field 'model_type'"):
        register_host(_double("bad-type", spec=bad))
    with pytest.raises(ValueError, match="invalid spec field 'id'"):
        register_host(_double("Not A Slug"))


def test_register_host_refuses_a_second_class_for_a_type() -> None:
    with pytest.raises(ValueError, match="'sample-rag' is registered twice"):
        register_host(_double("sample-rag"))
    assert host_class("sample-rag").__name__ == "SampleRag"


def test_built_in_hosts_load_on_first_use_so_a_lab_replay_imports_no_client_library() -> None:
    """Listing types imports nothing; replaying a lab (the testlab host) imports neither openai, boto3,
    ollama nor scikit-learn, each of which costs a command seconds."""
    import subprocess
    import sys

    probe = (
        "import sys; from assay.hosts import host_types, host_class; host_types(); host_class('testlab'); "
        "print(sorted(m for m in ('openai', 'boto3', 'ollama', 'sklearn', 'h2ogpte') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_a_built_in_whose_class_declares_another_type_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.hosts import registry

    monkeypatch.setitem(registry.BUILTIN_HOSTS, "not-ollama", "assay.hosts.ollama:Ollama")
    with pytest.raises(ValueError, match="declares type 'ollama', not 'not-ollama'"):
        host_class("not-ollama")
