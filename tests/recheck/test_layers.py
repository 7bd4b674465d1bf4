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
PACKAGES = ("recheck", "web", "api", "backoffice", "cli", "forge", "notify", "presentation", "findings", "reviews", "access",
            "engine", "core", "recheck_gate")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def tree(tmp_path):
    for package in PACKAGES:
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
        # Layers: a lower package importing a higher one, and two interfaces importing each other.
        ("findings/services/runs.py", "from forge.outbox import services", "import only the layers below"),
        ("findings/selectors/findings.py", "from presentation import pages", "import only the layers below"),
        ("reviews/models.py", "from findings import models", "import only the layers below"),
        ("access/tokens.py", "from reviews.models import Repository", "import only the layers below"),
        ("presentation/pages.py", "from forge import content", "import only the layers below"),
        ("api/views/findings.py", "from web.views import pages", "import only the layers below"),
        ("backoffice/findings.py", "from cli.management.commands import verify", "import only the layers below"),
        # Plain layers: neither Django nor Celery, however deep.
        ("engine/git/objects.py", "from django.conf import settings", "plain Python: no Django"),
        ("engine/verification/textcaches.py", "import celery", "plain Python: no Django"),
        ("core/vocabulary/checks.py", "from django.db import models", "plain Python: no Django"),
        ("core/scopes.py", "from rest_framework import serializers", "plain Python: no Django"),
        # Interfaces are leaves: only the root URLconf imports them.
        ("recheck/settings/work.py", "import api.permissions", "Nothing imports an interface"),
        # Tasks: found by package, not listed; only their app's registration imports them.
        ("findings/services/runs.py", "from findings.tasks import run_verification", "nothing imports a tasks module"),
        ("forge/outbox/services.py", "from forge.tasks import send_github_call", "nothing imports a tasks module"),
        ("presentation/companion.py", "import presentation.tasks", "nothing imports a tasks module"),
        # Inside forge: the forges stand alone, and the outbox and the threads reach them through the interface.
        ("forge/gitlab/calls.py", "from forge.github import client", "Inside forge"),
        ("forge/github/calls.py", "import forge.gitlab.client", "Inside forge"),
        ("forge/outbox/sending.py", "from forge.github import hints", "Inside forge"),
        ("forge/threads/sync.py", "from forge.gitlab.threads import discussions_read", "Inside forge"),
        # Cycles between the modules of a package.
        ("findings/models/findings.py", "from findings.selectors import findings", "No import cycles"),
        ("recheck_gate/cli.py", "import findings", "recheck-gate is plain Python"),
    ],
)
def test_an_import_across_a_layer_breaks_its_contract(tree, module, line, contract):
    add_line(tree / module, line)
    result = lint_imports(tree)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts")[-1]
    assert contract in broken, result.stdout
