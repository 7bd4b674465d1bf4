"""GitLab merge requests end to end, at the wire: GitLab's documented merge request and push event
examples delivered to /api/hooks/gitlab, Recheck's commit status `recheck` and its one merge
request note as the fake GitLab receives them."""
import pytest

from findings.models import VerificationRun, WebhookDelivery
from forge.models import ForgeCall
from reviews.models import PinnedCommit, PullRequest
from tests.forge.gitlab_world import (
    IID,
    PROJECT_ID,
    SLUG,
    deliver_hook,
    example,
    merge_request_event,
)
from tests.forge.scenario import deliver as send_due

pytestmark = pytest.mark.django_db


def hook(client, capture, payload, **options):
    with capture(execute=True):
        response = deliver_hook(client, payload, **options)
    send_due()
    return response


def statuses(fake, sha=None):
    return [status for status in fake.statuses if sha is None or status["sha"] == sha]


def test_a_new_head_is_verified_once_and_reported_as_one_status(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    gitlab_repo.write("config.yaml", "debug: false\n")
    head = gitlab_repo.commit("turn debug off")
    payload = merge_request_event("update", head, oldrev=gitlab_repo.reviewed)

    first = hook(client, django_capture_on_commit_callbacks, payload, event_uuid="uuid-1")
    again = hook(client, django_capture_on_commit_callbacks, payload, event_uuid="uuid-2")

    assert first.status_code == 202, first.json()
    assert again.status_code == 200 and "already" in again.json()["detail"]
    assert PinnedCommit.objects.filter(pull_request=merge_request, commit__sha=head, role="head").count() == 1
    assert VerificationRun.objects.filter(pull_request=merge_request, commit__sha=head).count() == 1
    final = [status for status in statuses(fake_gitlab, head) if status["status"] not in ("running", "pending")]
    # The tolerance blocker is still there at the new head: the gate refuses the merge.
    assert [(status["name"], status["status"]) for status in final] == [("recheck", "failed")]
    assert final[0]["target_url"] == f"https://recheck.example.com/{SLUG}/pull/{IID}/blockers/"
    assert [status["status"] for status in statuses(fake_gitlab, head)] == ["running", "failed"]
    # Addressed by its id, which the hook told: a rename on GitLab does not lose it.
    assert fake_gitlab.calls("POST", rf"^/api/v4/projects/{PROJECT_ID}/statuses/{head}$")


def test_the_sticky_note_is_edited_not_duplicated(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    fake_gitlab.add_note(PROJECT_ID, IID, "LGTM from a person")
    heads = []
    for change in ("debug: false\n", "debug: maybe\n"):
        previous = heads[-1] if heads else gitlab_repo.reviewed
        gitlab_repo.write("config.yaml", change)
        heads.append(gitlab_repo.commit(change))
        response = hook(client, django_capture_on_commit_callbacks,
                        merge_request_event("update", heads[-1], oldrev=previous))
        assert response.status_code == 202, response.json()

    notes = fake_gitlab.mr_notes(PROJECT_ID, IID)
    ours = [note for note in notes if "recheck:pull-request-comment" in note["body"]]
    assert len(notes) == 2 and len(ours) == 1
    assert f"Verified at {heads[-1]}" in ours[0]["body"]
    assert len(fake_gitlab.calls("POST", rf"/merge_requests/{IID}/notes$")) == 1
    assert len(fake_gitlab.calls("PUT", rf"/merge_requests/{IID}/notes/{ours[0]['id']}$")) == 1


def test_a_note_left_by_an_earlier_recheck_is_found_by_its_marker_and_edited(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    # Recheck posted it, and its row is gone (the database restored from before): its marker finds it.
    marked = fake_gitlab.add_note(PROJECT_ID, IID, "<!-- recheck:pull-request-comment -->\nold")
    gitlab_repo.write("config.yaml", "debug: false\n")
    head = gitlab_repo.commit("change")
    hook(client, django_capture_on_commit_callbacks, merge_request_event("update", head, oldrev=gitlab_repo.reviewed))

    assert [note["id"] for note in fake_gitlab.mr_notes(PROJECT_ID, IID)] == [marked]
    assert "old" not in fake_gitlab.notes[marked]["body"]


def test_the_documented_open_example_pins_its_head(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    gitlab_repo.write("config.yaml", "debug: false\n")
    head = gitlab_repo.commit("opened with this")
    payload = example("merge_request")
    payload["object_attributes"]["last_commit"]["id"] = head
    response = hook(client, django_capture_on_commit_callbacks, payload)

    assert response.status_code == 202, response.json()
    assert merge_request.pins.filter(role="head", commit__sha=head).exists()


def test_an_update_without_new_commits_moves_nothing(client, merge_request, fake_gitlab,
                                                     django_capture_on_commit_callbacks):
    response = hook(client, django_capture_on_commit_callbacks, merge_request_event("update", "a" * 40))

    assert response.status_code == 200 and "does not move the head" in response.json()["detail"]
    assert not merge_request.pins.filter(role="head").exists()


def test_merge_and_close_record_the_state(client, merge_request, fake_gitlab, django_capture_on_commit_callbacks):
    hook(client, django_capture_on_commit_callbacks, merge_request_event("close", "a" * 40))
    merge_request.refresh_from_db()
    assert merge_request.state == PullRequest.State.CLOSED
    hook(client, django_capture_on_commit_callbacks, merge_request_event("reopen", "a" * 40))
    merge_request.refresh_from_db()
    assert merge_request.state == PullRequest.State.OPEN
    hook(client, django_capture_on_commit_callbacks, merge_request_event("merge", "a" * 40))
    merge_request.refresh_from_db()
    assert merge_request.state == PullRequest.State.MERGED


def test_a_duplicate_event_uuid_is_ignored(client, merge_request, gitlab_repo, fake_gitlab,
                                           django_capture_on_commit_callbacks):
    payload = merge_request_event("close", "a" * 40)
    first = hook(client, django_capture_on_commit_callbacks, payload, event_uuid="same-uuid")
    PullRequest.objects.filter(pk=merge_request.pk).update(state=PullRequest.State.OPEN)
    again = hook(client, django_capture_on_commit_callbacks, payload, event_uuid="same-uuid")

    assert first.status_code == 200 and again.status_code == 200
    assert again.json()["duplicate"] is True and first.json()["detail"] in again.json()["detail"]
    merge_request.refresh_from_db()
    assert merge_request.state == PullRequest.State.OPEN
    assert WebhookDelivery.objects.filter(delivery_id="gitlab:same-uuid").count() == 1


def test_a_merge_request_from_a_fork_is_pinned_and_said_so(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    gitlab_repo.write("config.yaml", "debug: false\n")
    head = gitlab_repo.commit("from a fork")
    payload = merge_request_event("update", head, oldrev=gitlab_repo.reviewed, source_project_id=9999)
    response = hook(client, django_capture_on_commit_callbacks, payload)

    assert response.status_code == 202 and "fork project 9999" in response.json()["detail"]
    assert merge_request.pins.filter(role="head", commit__sha=head).exists()


def test_a_hook_for_an_untracked_project_or_merge_request_is_acknowledged_and_ignored(
    client, merge_request, fake_gitlab, django_capture_on_commit_callbacks
):
    other = merge_request_event("open", "a" * 40)
    other["project"].update(id=777, path_with_namespace="someone/else")
    response = hook(client, django_capture_on_commit_callbacks, other)
    assert response.status_code == 200 and "someone/else is not tracked" in response.json()["detail"]

    untracked = hook(client, django_capture_on_commit_callbacks, merge_request_event("open", "a" * 40, iid=99))
    assert untracked.status_code == 200 and f"{SLUG}!99 is not tracked" in untracked.json()["detail"]


def test_a_project_moved_on_gitlab_is_still_found_by_its_id(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    hook(client, django_capture_on_commit_callbacks, merge_request_event("close", "a" * 40))
    moved = merge_request_event("reopen", gitlab_repo.reviewed)
    moved["project"]["path_with_namespace"] = "platform/renamed-tools/recheck-demo"
    response = hook(client, django_capture_on_commit_callbacks, moved)

    assert response.status_code == 202, response.json()
    assert "platform/renamed-tools/recheck-demo now" in response.json()["detail"]
    merge_request.refresh_from_db()
    assert merge_request.state == PullRequest.State.OPEN


def test_a_push_hook_refreshes_the_mirror(client, merge_request, fake_gitlab, django_capture_on_commit_callbacks,
                                          monkeypatch):
    fetched = []
    monkeypatch.setattr("forge.gitlab.webhooks.enqueue", lambda name, *args: fetched.append((name, args)))
    monkeypatch.setattr("forge.gitlab.webhooks.tasks_run_in_process", lambda: False)
    response = hook(client, django_capture_on_commit_callbacks, example("push"), event="Push Hook")

    assert response.status_code == 200 and "mirror is fetched" in response.json()["detail"]
    assert fetched == [("findings.tasks.fetch_repository", (merge_request.repository_id,))]


def test_a_push_hook_without_a_worker_fetches_nothing_in_the_request(
    client, merge_request, fake_gitlab, django_capture_on_commit_callbacks, monkeypatch
):
    fetched = []
    monkeypatch.setattr("forge.gitlab.webhooks.enqueue", lambda name, *args: fetched.append((name, args)))
    response = hook(client, django_capture_on_commit_callbacks, example("push"), event="Push Hook")

    assert response.status_code == 200 and "by the next verification" in response.json()["detail"]
    assert fetched == []


@pytest.mark.parametrize(("token", "status", "words"), [
    (None, 401, "No X-Gitlab-Token"),
    ("wrong", 403, "Wrong X-Gitlab-Token"),
])
def test_a_missing_or_wrong_token_is_refused_and_changes_nothing(client, merge_request, fake_gitlab, token, status,
                                                                 words, django_capture_on_commit_callbacks):
    response = hook(client, django_capture_on_commit_callbacks, merge_request_event("close", "a" * 40), token=token)

    assert response.status_code == status and words in response.json()["detail"]
    assert "RECHECK_GITLAB_WEBHOOK_SECRET" in response.json()["detail"]
    assert not WebhookDelivery.objects.exists()
    merge_request.refresh_from_db()
    assert merge_request.state == PullRequest.State.OPEN


def test_no_secret_configured_refuses_every_delivery(client, merge_request, fake_gitlab, settings,
                                                     django_capture_on_commit_callbacks):
    settings.RECHECK_GITLAB_WEBHOOK_SECRET = ""
    response = hook(client, django_capture_on_commit_callbacks, merge_request_event("close", "a" * 40), token="")

    assert response.status_code == 403 and "not configured" in response.json()["detail"]


def test_a_body_that_is_not_an_event_is_a_clear_400(client, merge_request, fake_gitlab,
                                                    django_capture_on_commit_callbacks):
    response = hook(client, django_capture_on_commit_callbacks, {}, body=b"not json")
    assert response.status_code == 400 and "not a GitLab event payload" in response.json()["detail"]
    no_project = hook(client, django_capture_on_commit_callbacks, {"object_kind": "merge_request"})
    assert no_project.status_code == 400 and "project.id" in no_project.json()["detail"]
    assert not ForgeCall.objects.exists()


def test_other_events_are_acknowledged(client, merge_request, fake_gitlab, django_capture_on_commit_callbacks):
    response = hook(client, django_capture_on_commit_callbacks, example("push"), event="Deployment Hook")
    assert response.status_code == 200 and "not Deployment Hook events" in response.json()["detail"]


def test_a_head_the_gate_allows_is_reported_as_success(client, merge_request, gitlab_repo, fake_gitlab,
                                                       django_capture_on_commit_callbacks):
    from findings.services.review_import import review_import

    # A second merge request of the project, with no blocker recorded: the gate lets it merge.
    review_import(data={"repository": {"slug": SLUG, "forge": "gitlab", "clone_url": str(gitlab_repo.path)},
                        "pull_request": {"number": 13, "title": "Docs only"},
                        "commits": [{"sha": gitlab_repo.reviewed, "role": "reviewed"}]}, actor=None)
    fake_gitlab.projects[PROJECT_ID].merge_requests.add(13)
    gitlab_repo.write("README.md", "docs\n")
    head = gitlab_repo.commit("docs")
    response = hook(client, django_capture_on_commit_callbacks,
                    merge_request_event("update", head, oldrev=gitlab_repo.reviewed, iid=13))

    assert response.status_code == 202, response.json()
    assert [status["status"] for status in statuses(fake_gitlab, head)] == ["running", "success"]


def test_every_conclusion_of_the_gate_has_a_gitlab_state_and_only_success_passes():
    from forge import content
    from forge.gitlab.integration import STATUS_STATES

    assert set(STATUS_STATES) == set(content.STATUS_STATES)
    assert [conclusion for conclusion, state in STATUS_STATES.items() if state == "success"] == [content.SUCCESS]


def test_a_github_delivery_never_touches_a_gitlab_project_of_the_same_path(
    client, settings, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    from findings.services.review_import import review_import
    from tests.api.test_webhooks import SECRET as GITHUB_SECRET
    from tests.api.test_webhooks import deliver as deliver_github
    from tests.api.test_webhooks import pull_request_event

    settings.RECHECK_GITHUB_WEBHOOK_SECRET = GITHUB_SECRET
    review_import(data={"repository": {"slug": "acme/loader", "forge": "gitlab", "clone_url": str(gitlab_repo.path)},
                        "pull_request": {"number": 7, "title": "Loader"}}, actor=None)
    with django_capture_on_commit_callbacks(execute=True):
        pushed = deliver_github(client, pull_request_event(slug="acme/loader", number=7, sha=gitlab_repo.reviewed))
        closed = deliver_github(client, pull_request_event("closed", slug="acme/loader", number=7), delivery="d-2")

    assert pushed.status_code == 200 and "not tracked" in pushed.json()["detail"]
    assert closed.status_code == 200 and "not tracked" in closed.json()["detail"]
    pull_request = PullRequest.objects.get(repository__slug="acme/loader", number=7)
    assert not pull_request.pins.exists() and pull_request.state == PullRequest.State.OPEN
