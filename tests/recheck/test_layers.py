"""The layer contracts (pyproject's [tool.importlinter]) hold on the tree, and break when an import
that crosses a layer is added: `lint-imports` run on a copy of the packages with one such import."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def tree(tmp_path):
    for package in ("recheck", "reviews", "findings"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_line(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_tree_keeps_every_contract(tree):
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("reviews/git/objects.py", "from django.conf import settings", "plain Python"),
        ("findings/verification/texts.py", "from recheck.errors import RecheckError", "plain Python"),
        ("reviews/git/reader.py", "from findings.verification import verdicts", "sits on the git layer"),
        ("findings/runs.py", "from findings.tasks import run_verification", "Tasks call services"),
        ("findings/vocabulary.py", "from django.db import models", "vocabulary is plain Python"),
        ("findings/selectors.py", "from findings.site import pages", "No import cycles"),
    ],
)
def test_an_import_across_a_layer_breaks_its_contract(tree, module, line, contract):
    add_line(tree / module, line)
    result = lint_imports(tree)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts")[-1]
    assert contract in broken, result.stdout
