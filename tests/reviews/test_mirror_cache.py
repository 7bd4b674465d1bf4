"""A host's mirror is a cache: a verification whose mirror was garbled on this host, or removed,
fetches it again and verifies as it would have."""
import shutil

import pytest

from findings.models import Verification
from findings.services.runs import verification_run_request
from recheck.celery import app
from reviews.mirrors import repository_mirror_dir
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "x: 1\n").commit("reviewed")
    return builder


def garbled(mirror):
    (mirror / "HEAD").write_text("this is not a ref\n")


def removed(mirror):
    shutil.rmtree(mirror)


@pytest.mark.django_db
@pytest.mark.parametrize("damage", [garbled, removed])
def test_a_verification_makes_a_damaged_mirror_again_and_verifies(
    repo, damage, django_capture_on_commit_callbacks, monkeypatch
):
    # The work runs in this process, as without a broker (CI configures one).
    monkeypatch.setitem(app.conf, "task_always_eager", True)
    pull_request = import_review(repo)
    with django_capture_on_commit_callbacks(execute=True):
        verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)
    mirror = repository_mirror_dir(pull_request.repository)
    assert (mirror / "HEAD").is_file(), "the first verification fetched the mirror"
    pushed = repo.write("src/loader.py", "# pushed\n" + LOADER).commit("pushed")
    damage(mirror)

    with django_capture_on_commit_callbacks(execute=True):
        run = verification_run_request(pull_request=pull_request, commit_sha=pushed)
    run.refresh_from_db()

    assert run.status == "done", run.message
    assert Verification.objects.filter(commit__sha=pushed).count() == 3


@pytest.mark.django_db
def test_a_mirror_removed_while_a_verification_reads_it_is_fetched_again_and_verified_again(
    repo, django_capture_on_commit_callbacks, monkeypatch
):
    from findings.services.verification import run as verification_run

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    pull_request = import_review(repo)
    pushed = repo.write("src/loader.py", "# pushed\n" + LOADER).commit("pushed")
    real, lost = verification_run.commits_resolve, []

    def resolve_as_the_mirror_goes(*, repository, reader):
        if not lost:  # another process clears this host's cache just as the commit is read
            lost.append(repository_mirror_dir(repository))
            shutil.rmtree(lost[0])
        return real(repository=repository, reader=reader)

    monkeypatch.setattr(verification_run, "commits_resolve", resolve_as_the_mirror_goes)
    with django_capture_on_commit_callbacks(execute=True):
        run = verification_run_request(pull_request=pull_request, commit_sha=pushed)
    run.refresh_from_db()

    assert lost and (lost[0] / "HEAD").is_file(), "the mirror went, and was fetched again"
    assert run.status == "done", run.message
    verdicts = dict(Verification.objects.filter(commit__sha=pushed).values_list("finding__number", "verdict"))
    assert len(verdicts) == 3 and "error" not in verdicts.values(), verdicts
