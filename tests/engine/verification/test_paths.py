import pytest

from engine.verification import EvidenceSpec, check_evidence
from engine.git import GitReader
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return repo.write("debug.log", "secret\n").write("deploy/key.pem", "KEY\n").commit("base")


def path_spec(path, expect=None, commit=None):
    return EvidenceSpec("path", commit=commit, path=path, expect=expect)


def check(repo, spec, target):
    with GitReader(repo.git_dir) as reader:
        return check_evidence(reader, spec, target)


def test_an_existing_file_holds(repo, base):
    result = check(repo, path_spec("debug.log", "exists"), base)

    assert (result.state, result.path, result.detail) == ("holds", "debug.log", "debug.log exists")


def test_an_existing_directory_holds(repo, base):
    assert check(repo, path_spec("deploy/"), base).state == "holds"


def test_a_deleted_file_is_gone(repo, base):
    target = repo.delete("debug.log").commit("remove log")

    result = check(repo, path_spec("debug.log"), target)

    assert (result.state, result.detail) == ("gone", "debug.log no longer exists")


def test_a_renamed_file_is_gone_and_the_new_name_is_reported(repo, base):
    target = repo.rename("debug.log", "logs/debug.log").commit("move log")

    result = check(repo, path_spec("debug.log", commit=base), target)

    assert (result.state, result.detail) == ("gone", "debug.log was renamed to logs/debug.log")


def test_a_missing_path_holds_while_it_stays_missing(repo, base):
    result = check(repo, path_spec("SECURITY.md", "missing"), base)

    assert (result.state, result.detail) == ("holds", "SECURITY.md is still missing")


def test_a_missing_path_is_gone_once_it_is_added(repo, base):
    target = repo.write("SECURITY.md", "Report to security@example.com\n").commit("policy")

    result = check(repo, path_spec("SECURITY.md", "missing"), target)

    assert (result.state, result.detail) == ("gone", "SECURITY.md now exists")


def test_an_unknown_expectation_is_an_error(repo, base):
    result = check(repo, path_spec("debug.log", "present"), base)

    assert result.state == "error" and "'exists' or 'missing'" in result.detail
