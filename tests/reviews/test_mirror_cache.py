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
