"""With only a token: a `recheck` commit status. And the one pull request comment, found again by
its hidden marker and edited in place."""
import pytest

from forge.content import COMMENT_MARKER
from forge.models import ForgeCall
from tests.findings.services.test_verification import LOADER
from tests.forge.scenario import deliver, verify

pytestmark = pytest.mark.django_db


def test_with_only_a_token_it_posts_pending_then_the_gates_state_as_a_commit_status(
    pull_request, repo, token_only, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    assert token_only.check_runs == {}
    assert [(s["sha"], s["context"], s["state"]) for s in token_only.statuses] == [
        (repo.reviewed, "recheck", "pending"),
        (repo.reviewed, "recheck", "failure"),
    ]
    final = token_only.statuses[-1]
    assert final["description"] == f"Two open blockers still present at {repo.reviewed[:8]}"
    assert final["target_url"] == "https://recheck.example.com/acme/loader/pull/7/blockers/"
    # No App, so no installation or installation token was asked for.
    assert token_only.calls("POST", r"/access_tokens$") == []


def test_a_status_is_pending_when_a_maintainer_must_decide(
    pull_request, repo, token_only, django_capture_on_commit_callbacks
):
    fixed = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "    tolerance = 1e-6\n"))
    fixed = fixed.delete("config.yaml").commit("fix both")

    verify(pull_request, fixed, django_capture_on_commit_callbacks)

    final = token_only.statuses[-1]
    assert (final["sha"], final["state"]) == (fixed, "pending")
    assert len(final["description"]) <= 140


def test_a_token_without_status_permission_is_reported_with_what_to_grant(
    pull_request, repo, token_only, django_capture_on_commit_callbacks
):
    token_only.fail("POST", r"/statuses/", 403, "Resource not accessible by personal access token", times=5)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    call = ForgeCall.objects.filter(kind="commit_status").latest("id")
    assert call.status == "failed"
    assert call.hint.startswith("The token (RECHECK_GITHUB_TOKEN) lacks commit statuses: write on acme/loader")


@pytest.fixture
def commenting(pull_request):
    pull_request.repository.publish_comment = True
    pull_request.repository.save()
    return pull_request


def test_the_comment_is_created_once_and_then_edited(
    commenting, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(commenting, repo.reviewed, django_capture_on_commit_callbacks)
    [comment] = fake_github.comments.values()
    assert comment["number"] == 7 and comment["body"].startswith(COMMENT_MARKER)
    assert "still present" in comment["body"]

    fixed = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "    tolerance = 1e-6\n"))
    fixed = fixed.commit("fix the tolerance")
    verify(commenting, fixed, django_capture_on_commit_callbacks)

    assert len(fake_github.calls("POST", r"/issues/7/comments$")) == 1
    assert len(fake_github.calls("PATCH", rf"/issues/comments/{comment['id']}$")) == 1
    [edited] = fake_github.comments.values()
    assert f"Verified at {fixed}." in edited["body"]
    assert "likely fixed" in edited["body"]


def test_an_existing_comment_is_found_by_its_marker(
    commenting, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.comments[5] = {"id": 5, "repo": "acme/loader", "number": 7, "body": "Looks good to me"}
    fake_github.comments[6] = {"id": 6, "repo": "acme/loader", "number": 7, "body": f"{COMMENT_MARKER}\nold"}

    verify(commenting, repo.reviewed, django_capture_on_commit_callbacks)

    assert fake_github.calls("POST", r"/comments$") == []
    assert fake_github.comments[5]["body"] == "Looks good to me"
    assert "still present" in fake_github.comments[6]["body"]


def test_a_fixed_blocker_is_struck_through_in_the_comment(
    commenting, repo, fake_github, django_capture_on_commit_callbacks, staff_maintainer
):
    from findings.models import Finding
    from findings.services.resolution import finding_resolve
    from reviews.models import Commit

    commit = Commit.objects.get(sha=repo.reviewed)
    finding = Finding.objects.get(pull_request=commenting, number=2)
    finding_resolve(finding=finding, status="fixed", actor=staff_maintainer, source="admin", commit=commit)

    verify(commenting, repo.reviewed, django_capture_on_commit_callbacks)

    [comment] = fake_github.comments.values()
    assert "~~[B2 Debug flag left on](https://recheck.example.com/acme/loader/pull/7/blockers/#finding-2)~~ fixed" \
        in comment["body"]


def test_the_comment_follows_the_latest_head_not_an_older_commit_verified_again(
    commenting, repo, fake_github, django_capture_on_commit_callbacks
):
    from findings.services.tracking import pull_request_record_head

    head = repo.write("README.md", "pushed\n").commit("pushed")
    with django_capture_on_commit_callbacks(execute=True):
        pull_request_record_head(pull_request=commenting, sha=head)
    deliver()
    [comment] = fake_github.comments.values()
    assert f"Verified at {head}." in comment["body"]

    verify(commenting, repo.reviewed, django_capture_on_commit_callbacks)

    assert f"Verified at {head}." in fake_github.comments[comment["id"]]["body"]
    assert fake_github.calls("PATCH", r"/issues/comments/") == []
