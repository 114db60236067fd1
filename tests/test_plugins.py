"""Plugins of other packages, found through entry points (``assay.evaluators``, ``assay.perturbators``,
``assay.hosts``, ``assay.judges``; see ``assay.registry``).

The example plugin (``examples/plugin``) is really installed, with pip and offline, into a scratch virtual
environment that sees Assay's packages through a ``.pth`` file; beside it sit two hand-made distributions (a
dist-info folder with ``entry_points.txt``, as pip leaves one) whose plugins are broken. The ``assay`` command
and the conformance suite then run in that environment, as they would for a user who installed the plugin."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.models import ModelHost, Test, TestCase, TestLab, TestLabRow, TestSuite
from assay.registry import Registry
from tests.support.docs_examples import python_examples

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "plugin"
QUESTION = "What is the fee for a replacement debit card?"

DOUBLES = '''
"""Plugins that fail their registration checks, and one judge template that passes."""

from dataclasses import dataclass

from assay.evaluators.bleu import Bleu
from assay.judges.templates import JudgeTemplate
from assay.perturbators import Perturbator


@dataclass
class NoPrimary(Bleu):
    spec = Bleu.spec.model_copy(update={
        "id": "no_primary",
        "metrics": [metric.model_copy(update={"is_primary": False}) for metric in Bleu.spec.metrics],
    })


class TakesBleu(Bleu):
    """Declares the id of a built-in."""


class Shrinking(Perturbator):
    id = "shrinking"
    display_name = "Shrinking"
    description = "Its amounts shrink from low to high."
    kind = "input_variation"
    amounts = {"low": 0.5, "medium": 0.2, "high": 0.1}
    amount_unit = "share of nothing"

    def apply(self, text, amount, rng):
        return text


class NotAHost:
    type = "not-a-host"


POLITE = JudgeTemplate.build(
    id="polite_answer",
    version="1",
    description="Is the answer polite?",
    system="You judge politeness.",
    user="<answer>{{ answer }}</answer> Is this answer polite?",
    inputs=["answer"],
    schema={"type": "object", "properties": {"polite": {"type": "boolean"}}, "required": ["polite"]},
)
MISMATCHED = JudgeTemplate("mismatched", "1", "Its inputs are not the text's.", "", "Rate {{ answer }}",
                           ("question",), {"type": "object"})
'''


def write_distribution(
    site: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str] | None = None
) -> None:
    """An installed distribution as pip leaves one: a dist-info folder with METADATA and entry_points.txt."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    sections = [f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
                for group, points in entry_points.items()]  # fmt: skip
    (info / "entry_points.txt").write_text("\n".join(sections), encoding="utf-8")
    for file_name, source in (modules or {}).items():
        (site / file_name).write_text(textwrap.dedent(source), encoding="utf-8")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch environment's python, with the example plugin and the broken distributions installed."""
    root = tmp_path_factory.mktemp("plugins")
    environment = root / "venv"
    venv.create(environment, with_pip=False)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(environment), "platbase": str(environment)}))
    assay_site = sysconfig.get_path("purelib")  # Assay's environment, with its editable install's import hook
    (site / "assay_environment.pth").write_text(f"import site; site.addsitedir({assay_site!r})\n", encoding="utf-8")
    python = environment / "bin" / "python"
    source = shutil.copytree(EXAMPLE, root / "example", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    pip = [str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "--no-cache-dir"]
    subprocess.run([*pip, "--quiet", str(source)], check=True, capture_output=True, timeout=120)
    write_distribution(site, "assay-missing-module", {"assay.evaluators": {"ghost": "assay_no_such_module:Ghost"}})
    write_distribution(
        site,
        "assay-test-doubles",
        {
            "assay.evaluators": {"no_primary": "assay_test_doubles:NoPrimary", "bleu": "assay_test_doubles:TakesBleu"},
            "assay.perturbators": {"shrinking": "assay_test_doubles:Shrinking"},
            "assay.hosts": {"not-a-host": "assay_test_doubles:NotAHost"},
            "assay.judges": {
                "polite_answer": "assay_test_doubles:POLITE",
                "mismatched": "assay_test_doubles:MISMATCHED",
            },
        },
        {"assay_test_doubles.py": DOUBLES},
    )
    return python


PROGRAM = "import sys; from assay.apps.cli.launch import main; sys.argv[0] = 'assay'; main()"
"""What the ``assay`` executable runs, here run by the scratch environment's python."""
ENVIRONMENT = {**os.environ, "COLUMNS": "200", "ASSAY_WARM_WORKER": "off"}


def assay(python: Path, *arguments: str, cwd: Path | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), "-c", PROGRAM, *arguments], capture_output=True, text=True, env=ENVIRONMENT, cwd=cwd,
        timeout=timeout,
    )  # fmt: skip


LISTINGS = {
    "evaluators": ("evaluators", "list", "--json"),
    "perturbators": ("perturbators", "list", "--json"),
    "hosts": ("hosts", "list", "--json"),
    "judges": ("judges", "templates", "--json"),
    "table": ("evaluators", "list"),
}


@pytest.fixture(scope="module")
def listings(scratch: Path) -> dict[str, Any]:
    """Each listing of ``LISTINGS`` (all at once: each command takes seconds), by id; the table as its lines.
    Every one exits 0 with the broken plugins installed."""
    running = {
        name: subprocess.Popen([str(scratch), "-c", PROGRAM, *command], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=ENVIRONMENT)
        for name, command in LISTINGS.items()
    }  # fmt: skip
    found: dict[str, Any] = {}
    for name, process in running.items():
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, f"{LISTINGS[name]}: {err}"
        found[name] = out.splitlines() if name == "table" else {entry["id"]: entry for entry in json.loads(out)}
    return found


def test_the_example_plugin_is_listed_with_its_package(listings: dict[str, Any]) -> None:
    evaluators, perturbators = listings["evaluators"], listings["perturbators"]
    plugin = evaluators["mentions_question_terms"]
    assert plugin["available"] is True and plugin["metrics"][0]["key"] == "question_term_coverage"
    assert plugin["origin"] == {
        "package": "assay-example-plugin",
        "version": "0.1.0",
        "entry_point": "mentions_question_terms = assay_example_plugin.evaluators:MentionsQuestionTerms",
    }
    assert evaluators["bleu"]["origin"]["package"] == "assay" and evaluators["bleu"]["origin"]["entry_point"] is None
    assert perturbators["uppercase_words"]["origin"]["package"] == "assay-example-plugin"
    assert perturbators["uppercase_words"]["kind"] == "input_variation"
    row = next(line for line in listings["table"] if line.startswith("mentions_question_terms "))
    assert row.split()[-1] == "assay-example-plugin"


def test_broken_plugins_are_listed_as_unavailable_with_the_reason(listings: dict[str, Any]) -> None:
    evaluators = listings["evaluators"]
    ghost = evaluators["assay-missing-module/ghost"]
    assert ghost["available"] is False and ghost["origin"]["package"] == "assay-missing-module"
    assert ghost["error"] == "ModuleNotFoundError: No module named 'assay_no_such_module'"
    assert "exactly one primary metric" in evaluators["assay-test-doubles/no_primary"]["error"]
    assert evaluators["bleu"]["available"] is True  # the built-in keeps its id; the plugin that wanted it is refused
    assert "registered twice (by assay" in evaluators["assay-test-doubles/bleu"]["error"]
    shrinking = listings["perturbators"]["assay-test-doubles/shrinking"]
    assert "amounts must be positive and must not shrink" in shrinking["error"]
    not_a_host = listings["hosts"]["assay-test-doubles/not-a-host"]
    assert "is not a subclass of assay.hosts.base.Host" in not_a_host["error"]
    templates = listings["judges"]
    assert templates["polite_answer"]["origin"]["package"] == "assay-test-doubles"
    assert templates["polite_answer"]["source"] == "assay-test-doubles 1.0"
    mismatched = templates["assay-test-doubles/mismatched"]["error"]
    assert "field 'inputs' lists ['question'] but the texts use ['answer']" in mismatched

    refused = [line for line in listings["table"] if line.startswith("unavailable")]
    assert len(refused) == 3, refused
    assert any(
        "evaluator assay-test-doubles/bleu (assay-test-doubles 1.0, entry point bleu = assay_test_doubles:TakesBleu): "
        "ValueError: evaluator 'bleu' is registered twice (by assay" in line
        for line in refused
    ), refused


def test_the_plugins_pass_the_conformance_suite(scratch: Path) -> None:
    """The example's own tests: ``assay.testing.conformance`` as a plugin author runs it."""
    tests = scratch.parents[2] / "example" / "tests"
    done = subprocess.run(
        [str(scratch), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        capture_output=True, text=True, cwd=tests.parent, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 passed" in done.stdout


def test_the_docs_conformance_examples_pass_for_the_example_plugin(scratch: Path, tmp_path: Path) -> None:
    """The Python examples of the plugins and architecture pages, as a plugin author copies them into a test
    file and runs it with the plugin installed."""
    examples = [*python_examples("how-to/plugins.md"), *python_examples("explanation/architecture.md")]
    assert len(examples) == 2
    for number, example in enumerate(examples):
        (tmp_path / f"test_docs_example_{number}.py").write_text(example, encoding="utf-8")
    done = subprocess.run(
        [str(scratch), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout


RUN_FORM_CHOICES = """
import json
from prefect.utilities.callables import parameter_schema
from assay.flows.evaluate import evaluate_flow
from assay.flows.mrm import mrm_workflow

def items(field):
    return next(option for option in field.get("anyOf", [field]) if option.get("type") == "array")["items"]

found = {}
for flow in (mrm_workflow, evaluate_flow):
    schema = parameter_schema(flow.fn).model_dump(mode="json")
    found[flow.name] = {"evaluators": items(schema["properties"]["evaluators"])}
robustness = parameter_schema(mrm_workflow.fn).model_dump(mode="json")["definitions"]["RobustnessParameters"]
for name in ("variation_perturbators", "adversarial_perturbators"):
    found[name] = items(robustness["properties"][name])
print(json.dumps(found))
"""
"""The items of the evaluator and perturbator lists in the Run forms of the MRM and evaluate flows, as
``prefect deploy`` and ``python -m assay.deployments.serve`` register them (``parameter_schema``)."""


def test_the_run_form_offers_the_plugin_ids_and_not_the_broken_ones(scratch: Path) -> None:
    done = subprocess.run([str(scratch), "-c", RUN_FORM_CHOICES], capture_output=True, text=True, env=ENVIRONMENT,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    lists = [found["mrm-workflow"]["evaluators"], found["evaluate"]["evaluators"],
             found["variation_perturbators"], found["adversarial_perturbators"]]  # fmt: skip
    assert all(field["type"] == "string" for field in lists)  # an array of strings with an enum: a multi-select
    for evaluators in lists[:2]:
        offered = evaluators["enum"]
        assert "mentions_question_terms" in offered and {"all", "recommended", "bleu"} <= set(offered)
        assert offered.count("bleu") == 1 and not {"ghost", "no_primary"} & set(offered)
    for perturbators in lists[2:]:
        assert "uppercase_words" in perturbators["enum"] and "comma" in perturbators["enum"]
        assert "shrinking" not in perturbators["enum"]


def test_the_plugin_perturbator_perturbs_a_suite_through_the_cli(scratch: Path, tmp_path: Path) -> None:
    suite = TestSuite(name="s", tests=[Test(key="t", test_cases=[TestCase(key="fee", prompt=QUESTION)])])
    (tmp_path / "suite.json").write_text(suite.model_dump_json(), encoding="utf-8")
    done = assay(
        scratch, "perturb", "suite.json", "-p", "uppercase_words", "-i", "high", "-o", "out.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    cases = json.loads((tmp_path / "out.json").read_text())["tests"][0]["test_cases"]
    twin = next(case["prompt"] for case in cases if case["key"] != "fee")
    assert twin != QUESTION and twin.lower() == QUESTION.lower()


@pytest.mark.slow
def test_the_plugin_evaluator_scores_a_lab_through_the_cli(scratch: Path, tmp_path: Path) -> None:
    """``assay evaluate --lab`` in a temporary Prefect server, with the broken plugins installed beside it."""
    answers = {"fee": "A replacement debit card costs a fee of £5.", "hours": "Our branches open at nine."}
    rows = [TestLabRow(test_case=TestCase(key=key, prompt=QUESTION), model_key="rag", actual_output=answer)
            for key, answer in answers.items()]  # fmt: skip
    lab = TestLab(name="plugin lab", models=[ModelHost(key="rag", type="testlab")], rows=rows)
    (tmp_path / "lab.json").write_text(lab.model_dump_json(), encoding="utf-8")
    done = assay(scratch, "evaluate", "--lab", "lab.json", "--evaluators", "mentions_question_terms", "--out", "out",
                 cwd=tmp_path, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "out" / "mentions_question_terms" / "results.json").read_text())
    assert {row["test_case_key"]: row["question_term_coverage"] for row in results["results"]} == {
        "fee": 1.0,
        "hours": 0.0,
    }
    assert results["evaluator"]["id"] == "mentions_question_terms"
    entry_point = "mentions_question_terms = assay_example_plugin.evaluators:MentionsQuestionTerms"
    origin = {"package": "assay-example-plugin", "version": "0.1.0", "entry_point": entry_point}
    assert results["evaluator"]["origin"] == origin
    report = (tmp_path / "out" / "interpretation.html").read_text(encoding="utf-8")
    assert "Code: assay-example-plugin 0.1.0, another package than Assay (entry point" in report


@pytest.fixture
def importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` for distributions made in this process; their modules are forgotten after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith("assay_registry_double")]:
        del sys.modules[name]


class _Plugin:
    id = "plain"


def _registry() -> Registry[_Plugin]:
    return Registry("widget", lambda cls: cls.id, entry_point_group="assay.registry_doubles", base=_Plugin)


def test_entry_points_load_once_on_first_listing_and_never_raise(importable: Path) -> None:
    module = f"""
        from {__name__} import _Plugin
        LOADS = []
        LOADS.append(1)

        class Good(_Plugin):
            id = "good"

        class Misnamed(_Plugin):
            id = "other"
    """
    points = {"good": "assay_registry_double:Good", "misnamed": "assay_registry_double:Misnamed",
              "stranger": "assay_registry_double:LOADS", "gone": "assay_registry_double_gone:Gone"}  # fmt: skip
    write_distribution(importable, "registry-double", {"assay.registry_doubles": points},
                       {"assay_registry_double.py": module})  # fmt: skip
    plugins = _registry()
    plugins.register(_Plugin)
    assert "assay_registry_double" not in sys.modules  # nothing is imported until a listing or an unknown id
    assert plugins.get("plain") is _Plugin and "assay_registry_double" not in sys.modules
    assert plugins.ids() == ["good", "plain"] and plugins.ids() == ["good", "plain"]
    assert sys.modules["assay_registry_double"].LOADS == [1]
    assert plugins.origin("good").entry_point == "good = assay_registry_double:Good"
    assert plugins.origin("good").label == "registry-double 1.0" and plugins.origin("plain").package == "tests"
    errors = {plugin.id: plugin.error for plugin in plugins.unavailable()}
    assert errors == {
        "gone": "ModuleNotFoundError: No module named 'assay_registry_double_gone'",
        "misnamed": "ValueError: widget plugin 'misnamed = assay_registry_double:Misnamed' of package registry-double "
        "declares id 'other', not 'misnamed'",
        "stranger": f"TypeError: widget [1] is not a subclass of {__name__}._Plugin",
    }
    with pytest.raises(ValueError, match=r"^widget 'gone' of package registry-double 1.0 is unavailable: Module"):
        plugins.get("gone")


def test_an_unknown_id_looks_among_the_entry_points_first(importable: Path) -> None:
    module = f"from {__name__} import _Plugin\n\nclass Late(_Plugin):\n    id = 'late'\n"
    points = {"assay.registry_doubles": {"late": "assay_registry_double:Late"}}
    write_distribution(importable, "registry-double", points, {"assay_registry_double.py": module})
    plugins = _registry()
    assert plugins.get("late").__name__ == "Late" and plugins.unavailable() == []
    with pytest.raises(ValueError, match=r"^unknown widget 'nope'; known widgets: late$"):
        plugins.get("nope")


def test_a_plugin_may_not_take_the_id_of_a_built_in_not_yet_loaded(importable: Path) -> None:
    module = f"from {__name__} import _Plugin\n\nclass Impostor(_Plugin):\n    id = 'plain'\n"
    points = {"assay.registry_doubles": {"plain": "assay_registry_double:Impostor"}}
    write_distribution(importable, "registry-double", points, {"assay_registry_double.py": module})
    plugins = Registry(
        "widget",
        lambda cls: cls.id,
        builtins={"plain": f"{__name__}:_Plugin"},
        entry_point_group="assay.registry_doubles",
    )
    assert plugins.ids() == ["plain"] and plugins.get("plain") is _Plugin
    [refused] = plugins.unavailable()
    assert refused.qualified_id == "registry-double/plain"
    assert refused.error == "ValueError: widget 'plain' is registered twice (by tests)"
