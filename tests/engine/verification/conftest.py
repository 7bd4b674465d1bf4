"""A real repository to check evidence in, and its first commit holding the view the snippet
tests follow (tests.engine.verification.snippet_repo)."""
import pytest

from tests.engine.verification.snippet_repo import VIEW
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return repo.write("app/views.py", VIEW).write("app/urls.py", "urls = []\n").commit("base")
