"""Real CI reports made in a test: the project's own pytest writing JUnit XML over a tiny test
file in a real repository, and ruff writing SARIF over its files."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUFF = Path(sys.executable).with_name("ruff")

CALC = "def div(a, b):\n    return a / b\n"
CALC_FIXED = "def div(a, b):\n    return a / b if b else 0\n"
# Two passing and two failing (one of them parametrised) at the first commit.
TESTS = '''import pytest

from calc import div


@pytest.mark.parametrize(("a", "b", "quotient"), [(6, 3, 2), (1, 0, 0)])
def test_div(a, b, quotient):
    assert div(a, b) == quotient


class TestDiv:
    def test_zero(self):
        assert div(0, 5) == 0

    def test_by_zero(self):
        assert div(5, 0) == 0
'''


def calc_repository(tmp_path: Path):
    """acme/calc: a tiny package with its tests, two of which fail, and a config with a secret in
    it; recorded and fetched into its mirror. The repository's `repo` is the git repository built."""
    from reviews.mirrors import repository_fetch
    from tests.factories import RepositoryFactory
    from tests.gitrepo import GitRepoBuilder

    repo = GitRepoBuilder(tmp_path, "calc")
    repo.sha = (repo.write("calc.py", CALC).write("tests/__init__.py", "").write("tests/test_calc.py", TESTS)
                .write("config/soak.py", 'password = "hunter2"\n').commit("calc"))
    repository = RepositoryFactory(slug="acme/calc", clone_url=repo.url)
    repository_fetch(repository=repository)
    repository.repo = repo
    return repository


def pytest_junit(checkout: Path, out: Path) -> bytes:
    """Run pytest over `checkout`'s tests as a CI job does, writing JUnit XML to `out`."""
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={out}", "tests"],
        cwd=checkout, capture_output=True, check=False, timeout=120,
        env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"},
    )
    return out.read_bytes()


def pytest_node_ids(checkout: Path) -> list[str]:
    """The node ids pytest prints for `checkout`'s tests: what a person copies from its output."""
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "tests"],
        cwd=checkout, capture_output=True, text=True, check=False, timeout=120,
        env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"},
    )
    return [line for line in listed.stdout.splitlines() if "::" in line]


def ruff_sarif(checkout: Path, *paths: str) -> bytes:
    """ruff's SARIF over `paths` of `checkout`, with the absolute file URIs it writes."""
    run = subprocess.run(
        [str(RUFF), "check", "--isolated", "--select", "F,S105", "--output-format", "sarif", *paths],
        cwd=checkout, capture_output=True, check=False, timeout=120,
    )
    return run.stdout
