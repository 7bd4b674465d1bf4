import pytest

from findings.verification import EvidenceSpec, check_evidence
from reviews.git import GitReader
from tests.gitrepo import GitRepoBuilder

OLD_PIN = "3961f399" + "1" * 32
NEW_PIN = "5ed97996" + "2" * 32


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return repo.write("README.md", "hi\n").gitlink("vendor/openssl", OLD_PIN).commit("pin openssl")


def gitlink(sha, path="vendor/openssl"):
    return EvidenceSpec("gitlink", path=path, sha=sha)


def check(repo, spec, target):
    with GitReader(repo.git_dir) as reader:
        return check_evidence(reader, spec, target)


@pytest.mark.parametrize("pin", [OLD_PIN, OLD_PIN[:7], OLD_PIN[:12].upper()])
def test_a_submodule_still_pinned_at_the_sha_holds(repo, base, pin):
    result = check(repo, gitlink(pin), base)

    assert (result.state, result.path, result.detail) == ("holds", "vendor/openssl", "still pinned at 3961f399")


def test_a_moved_pin_is_gone_and_reports_the_new_pin(repo, base):
    target = repo.gitlink("vendor/openssl", NEW_PIN).commit("bump openssl")

    result = check(repo, gitlink(OLD_PIN[:10]), target)

    assert (result.state, result.detail) == ("gone", "pin moved from 3961f399 to 5ed97996")


def test_a_removed_submodule_is_gone(repo, base):
    target = repo.remove_gitlink("vendor/openssl").commit("drop openssl")

    result = check(repo, gitlink(OLD_PIN), target)

    assert (result.state, result.detail) == ("gone", "vendor/openssl no longer exists")


def test_a_submodule_replaced_by_vendored_files_is_gone(repo, base):
    repo.remove_gitlink("vendor/openssl")
    target = repo.write("vendor/openssl/ssl.c", "int main;\n").commit("vendor it")

    result = check(repo, gitlink(OLD_PIN), target)

    assert (result.state, result.detail) == ("gone", "vendor/openssl is no longer a submodule (it is now a directory)")


@pytest.mark.parametrize("pin", [None, "", "3961f3", "not-a-sha", "zz61f399"])
def test_a_malformed_pin_is_an_error(repo, base, pin):
    result = check(repo, gitlink(pin), base)

    assert result.state == "error" and "7 or more hex characters" in result.detail
