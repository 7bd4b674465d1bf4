"""A burst of pushes to one pull request: the newest head is verified, and the runs queued for the
heads it replaced are recorded as superseded, never lost, and never run."""
import pytest

from access.models import AuditEntry
from findings.models import Verification, VerificationRun
from findings.services.runs import verification_run_request
from findings.services.tracking import pull_request_record_head
from findings.tasks import run_verification
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder
from tests.personas import api_client, site_client, superuser
from tests.queued import record_queued


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "x: 1\n").commit("reviewed")
    return builder


@pytest.fixture
def queued(monkeypatch):
    """The run messages the pushes hand to the broker, in order, with no worker taking them yet."""
    return record_queued(monkeypatch, run_verification)


def push(repo, pull_request, n: int, capture) -> tuple[str, object]:
    sha = repo.write("src/loader.py", f"# push {n}\n" + LOADER).commit(f"push {n}")
    with capture(execute=True):
        recorded = pull_request_record_head(pull_request=pull_request, sha=sha)
    return sha, recorded


@pytest.mark.django_db
def test_a_burst_of_pushes_verifies_the_newest_head_and_records_the_others_as_superseded(
    repo, queued, django_capture_on_commit_callbacks
):
    pull_request = import_review(repo)
    heads, recorded = [], []
    for n in range(5):
        sha, result = push(repo, pull_request, n, django_capture_on_commit_callbacks)
        heads.append(sha)
        recorded.append(result)
    runs = [result.run for result in recorded]
    assert queued == [run.pk for run in runs], "every push's run was handed on"
    for older, newer in zip(runs, runs[1:], strict=False):
        older.refresh_from_db()
        assert (older.status, older.superseded_by_id) == ("superseded", newer.pk)
        assert older.finished_at and f"run {newer.pk}" in older.message
    assert recorded[-1].superseded == (runs[-2].pk,)
    assert f"supersedes queued run(s) {runs[-2].pk}" in recorded[-1].describe()

    # The worker takes the messages in order: the superseded runs' do nothing.
    outcomes = [run_verification.apply(args=[pk]).get() for pk in queued]
    assert outcomes[:-1] == [{"run": run.pk, "status": "superseded"} for run in runs[:-1]]
    runs[-1].refresh_from_db()
    assert runs[-1].status == "done", runs[-1].message
    verified = set(Verification.objects.values_list("commit__sha", flat=True))
    assert verified == {heads[-1]}
    # Every head stays pinned, and every run stays on record.
    assert set(heads) <= set(pull_request.pins.values_list("commit__sha", flat=True))
    assert VerificationRun.objects.filter(pull_request=pull_request).count() == 5
    assert AuditEntry.objects.filter(action="verification.supersede").count() == 4


@pytest.mark.django_db
def test_a_run_a_worker_already_claimed_is_left_to_finish(repo, queued, django_capture_on_commit_callbacks):
    pull_request = import_review(repo)
    _, first = push(repo, pull_request, 1, django_capture_on_commit_callbacks)
    VerificationRun.objects.filter(pk=first.run.pk).update(status="running")
    _, second = push(repo, pull_request, 2, django_capture_on_commit_callbacks)
    first.run.refresh_from_db()
    assert first.run.status == "running" and second.superseded == ()


@pytest.mark.django_db
def test_a_persons_run_at_another_commit_and_a_run_over_every_pin_are_not_superseded(
    repo, queued, django_capture_on_commit_callbacks
):
    pull_request = import_review(repo)
    with django_capture_on_commit_callbacks(execute=True):
        everything = verification_run_request(pull_request=pull_request)
        reviewed = verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)
    push(repo, pull_request, 1, django_capture_on_commit_callbacks)
    assert set(VerificationRun.objects.filter(pk__in=[everything.pk, reviewed.pk]).values_list("status", flat=True)) == {
        "queued"
    }


@pytest.mark.django_db
def test_a_head_pushed_again_after_a_newer_one_is_verified_without_superseding_the_newer(
    repo, queued, django_capture_on_commit_callbacks
):
    pull_request = import_review(repo)
    first_sha, first = push(repo, pull_request, 1, django_capture_on_commit_callbacks)
    _, second = push(repo, pull_request, 2, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        again = pull_request_record_head(pull_request=pull_request, sha=first_sha)
    assert again.queued and again.superseded == ()
    second.run.refresh_from_db()
    assert second.run.status == "queued"


@pytest.mark.django_db
def test_a_superseded_run_is_shown_as_such_in_the_api_and_the_admin(repo, queued, django_capture_on_commit_callbacks):
    pull_request = import_review(repo)
    _, first = push(repo, pull_request, 1, django_capture_on_commit_callbacks)
    _, second = push(repo, pull_request, 2, django_capture_on_commit_callbacks)
    runs = api_client(superuser(), scopes=("read",)).get("/api/runs/", {"status": "superseded"}).json()
    listed = runs["results"] if isinstance(runs, dict) else runs
    assert [(run["id"], run["status"], run["is_active"]) for run in listed] == [(first.run.pk, "superseded", False)]
    admin = site_client(superuser("admin")).get("/admin/findings/verificationrun/?status__exact=superseded")
    assert admin.status_code == 200
    html = admin.content.decode()
    assert "Superseded" in html and f"/admin/findings/verificationrun/{first.run.pk}/" in html
    assert f"/admin/findings/verificationrun/{second.run.pk}/" not in html
