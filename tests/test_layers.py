"""The layering written in pyproject.toml (``[tool.importlinter]``) holds, checked by import-linter on the
installed layout: ``assay/`` with the design card's folders inside it, as the wheel lays them out (import-linter
finds modules by walking a package's folder, so it cannot see ``package-dir`` mappings in place)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("evaluators", "perturbators", "artifacts", "tasks", "flows", "deployments")
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")


def _installed_layout(tmp_path: Path) -> Path:
    python_only = shutil.ignore_patterns("__pycache__", "data", "templates", "*.pyc", "*.json", "*.toml", "*.html")
    shutil.copytree(ROOT / "assay", tmp_path / "assay", ignore=python_only)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / "assay" / folder, ignore=python_only)
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_every_import_points_down_the_layers_and_no_library_module_imports_prefect(tmp_path: Path) -> None:
    result = _lint(_installed_layout(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("planted", "source", "broken"),
    [
        ("assay/flows/_planted.py", "from assay.apps.cli import inputs\n",
         "assay.flows is not allowed to import assay.apps"),
        ("assay/evaluators/_planted.py", "def later():\n    import prefect\n", "assay.evaluators._planted -> prefect"),
    ],
)
def test_an_import_against_the_layers_is_reported(tmp_path: Path, planted: str, source: str, broken: str) -> None:
    tree = _installed_layout(tmp_path)
    (tree / planted).write_text(source)
    result = _lint(tree)
    assert result.returncode == 1 and broken in result.stdout, result.stdout[-4000:]
