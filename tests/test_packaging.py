"""One namespace (issue 26): the design card's top-level folders install as ``assay.evaluators``, ``assay.flows``,
... and claim no top-level name of their own, so a package called ``tasks`` or ``flows`` elsewhere cannot
collide with them."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("evaluators", "perturbators", "artifacts", "tasks", "flows", "deployments")


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_folder_with_python_code_is_a_listed_package_of_the_namespace() -> None:
    folders = {path.parent for path in (ROOT / "assay").rglob("__init__.py")}
    folders |= {path.parent for name in FOLDERS for path in (ROOT / name).rglob("*.py")}
    expected = {
        "assay." + ".".join(folder.relative_to(ROOT).parts) if folder.relative_to(ROOT).parts[0] != "assay"
        else ".".join(folder.relative_to(ROOT).parts)
        for folder in folders if "__pycache__" not in folder.parts
    }  # fmt: skip
    assert set(_setuptools()["packages"]) == expected
    assert _setuptools()["package-dir"] == {"assay": "assay", **{f"assay.{name}": name for name in FOLDERS}}


def test_outside_the_repository_the_folders_import_only_inside_the_namespace(tmp_path: Path) -> None:
    probe = (
        "import importlib, importlib.util\n"
        f"for name in {FOLDERS!r}:\n"
        "    assert importlib.util.find_spec(name) is None, name\n"
        "    module = importlib.import_module('assay.' + name)\n"
        "    print(name, module.__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:-1] == [f"{name} assay.{name}" for name in FOLDERS]


def test_no_module_imports_a_folder_by_its_old_top_level_name() -> None:
    """Two names for one module would load it twice (two registries, two sets of Prefect tasks)."""
    old = tuple(f"{verb} {name}" for name in FOLDERS for verb in ("from", "import"))
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for top in ("assay", *FOLDERS, "tests", "bench")
        for path in (ROOT / top).rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.lstrip().startswith(old) and line.lstrip().split()[1].split(".")[0] in FOLDERS
    ]
    assert offenders == []
