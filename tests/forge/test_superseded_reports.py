"""A burst of pushes at the wire: each head gets "in progress" on the forge when its run is queued,
and a head whose run a newer push superseded gets that ended as superseded (not verified, never
passing), instead of a check left running for ever. GitHub with an App (check runs) and with only a
token (statuses), and GitLab (commit statuses)."""
import pytest

from findings.services.tracking import pull_request_record_head
from findings.tasks import run_verification
from tests.forge.scenario import deliver
from tests.queued import record_queued

pytestmark = pytest.mark.django_db


def burst(repo, pull_request, capture, pushes: int = 3) -> list[str]:
    """`pushes` heads recorded one after another, none taken by a worker yet; the forge told."""
    heads = []
    for n in range(pushes):
        heads.append(repo.write("config.yaml", f"debug: push {n}\n").commit(f"push {n}"))
        with capture(execute=True):
            pull_request_record_head(pull_request=pull_request, sha=heads[-1])
    deliver()
    return heads


def run_the_queued(queued) -> None:
    for run_id in queued:
        run_verification.apply(args=[run_id])
    deliver()


def test_a_superseded_heads_check_run_is_completed_as_superseded_by_the_newer_head(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks, monkeypatch
):
    queued = record_queued(monkeypatch, run_verification)
    heads = burst(repo, pull_request, django_capture_on_commit_callbacks)

    for older, newer in zip(heads, heads[1:], strict=False):
        run = fake_github.latest_run(older)
        assert (run["status"], run["conclusion"]) == ("completed", "cancelled")
        assert run["output"]["title"] == f"Superseded by {newer[:8]}: not verified"
        assert f"Recheck did not verify {older}" in run["output"]["summary"]
        assert len(fake_github.runs_of(older)) == 1, "the run that said in progress is the one completed"
    assert fake_github.latest_run(heads[-1])["status"] == "in_progress"

    run_the_queued(queued)
    newest = fake_github.latest_run(heads[-1])
    assert (newest["status"], newest["conclusion"]) == ("completed", "failure")
    assert [fake_github.latest_run(sha)["conclusion"] for sha in heads[:-1]] == ["cancelled", "cancelled"]


def test_with_only_a_token_a_superseded_heads_pending_status_ends_as_an_error_saying_superseded(
    pull_request, repo, token_only, django_capture_on_commit_callbacks, monkeypatch
):
    queued = record_queued(monkeypatch, run_verification)
    heads = burst(repo, pull_request, django_capture_on_commit_callbacks, pushes=2)
    run_the_queued(queued)

    older = [(status["state"], status["description"]) for status in token_only.statuses if status["sha"] == heads[0]]
    assert older == [("pending", f"Verifying {heads[0][:8]}"), ("error", f"Superseded by {heads[1][:8]}: not verified")]
    assert [status["state"] for status in token_only.statuses if status["sha"] == heads[1]] == ["pending", "failure"]


def test_on_gitlab_a_superseded_heads_running_status_is_canceled(
    merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks, monkeypatch
):
    queued = record_queued(monkeypatch, run_verification)
    heads = burst(gitlab_repo, merge_request, django_capture_on_commit_callbacks, pushes=2)
    run_the_queued(queued)

    older = [status for status in fake_gitlab.statuses if status["sha"] == heads[0]]
    assert [status["status"] for status in older] == ["running", "canceled"]
    assert older[-1]["description"] == f"Superseded by {heads[1][:8]}: not verified"
    assert [status["status"] for status in fake_gitlab.statuses if status["sha"] == heads[1]] == ["running", "failed"]
