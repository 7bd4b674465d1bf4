"""The inbox as the API and the site show it (the same threads, states and problems), the site's
"Sync threads" button and triage forms, and the finding page's link to its thread and its replies,
sanitised as all Markdown is."""
import pytest
from django.urls import reverse

from access.models import AuditEntry

from forge.threads.models import ReviewThread
from forge.threads.triage import review_thread_triage
from tests.forge.threads_scenario import comment_on, inbox, sync
from tests.personas import api_client, member_of, site_client, user_with_role

pytestmark = pytest.mark.django_db

INBOX = "/acme/loader/pull/7/threads/"


@pytest.fixture
def reviewer(pull_request):
    return member_of(pull_request.repository, user_with_role("no_role", username="rita"), "reviewer")


@pytest.fixture
def threads(pull_request, repo, fake_github):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    comment_on(fake_github, pull_request, repo.reviewed, body="<script>alert(1)</script>**sure**", reply_to=first)
    beyond = comment_on(fake_github, pull_request, repo.reviewed, body="Way down", line=99)
    sync(pull_request)
    return first, beyond


def test_the_api_and_the_site_list_the_same_threads_in_the_same_states(
    pull_request, threads, reviewer, django_assert_max_num_queries
):
    first, beyond = threads
    review_thread_triage(thread=inbox(pull_request)[beyond], actor=reviewer, outcome="cleanup")

    with django_assert_max_num_queries(12):
        answer = api_client(reviewer).get("/api/repos/acme/loader/pulls/7/threads/")
    page = site_client(reviewer).get(INBOX).content.decode()

    assert answer.status_code == 200
    data = answer.json()
    assert data["sync_status"] == "ok"
    listed = {thread["id"]: thread for thread in data["threads"]}
    assert set(listed) == {first, beyond}
    assert (listed[first]["state"], listed[first]["state_label"], len(listed[first]["comments"])) == (
        "new", "New", 2)
    assert (listed[beyond]["state"], listed[beyond]["problem"], listed[beyond]["finding"]) == (
        "finding", "line_beyond", 4)
    for thread in listed.values():
        assert f'id="thread-{thread["id"]}"' in page
        assert thread["state_label"] in page
    assert "Line beyond the file" in page
    assert "<script>alert(1)</script>" not in page and "<strong>sure</strong>" in page


def test_the_inbox_lists_many_threads_in_a_bounded_number_of_queries(
    pull_request, repo, fake_github, reviewer, django_assert_max_num_queries
):
    for n in range(30):
        first = comment_on(fake_github, pull_request, repo.reviewed, body=f"comment {n}", line=1 + n % 20)
        comment_on(fake_github, pull_request, repo.reviewed, body="reply", reply_to=first)
    sync(pull_request)
    client = site_client(reviewer)

    with django_assert_max_num_queries(20):
        assert client.get(INBOX).status_code == 200


def test_the_site_triages_a_thread_and_syncs_for_a_reviewer_only(pull_request, threads, reviewer, fake_github,
                                                                 django_capture_on_commit_callbacks):
    first, _ = threads
    reader = member_of(pull_request.repository, user_with_role("no_role", username="rex"), "reader")
    triage = f"{INBOX}{first}/triage/"

    assert site_client(reader).post(triage, {"outcome": "blocker"}).status_code == 403
    assert "Sync threads" not in site_client(reader).get(INBOX).content.decode()
    response = site_client(reviewer).post(triage, {"outcome": "blocker"})

    assert response.status_code == 302 and response["Location"].endswith(f"#thread-{first}")
    assert inbox(pull_request)[first].finding.kind == "blocker"
    assert site_client(reader).post(f"{INBOX}sync/").status_code == 403
    fake_github.edit_review_comment(first, "Edited on GitHub")
    with django_capture_on_commit_callbacks(execute=True):
        assert site_client(reviewer).post(f"{INBOX}sync/").status_code == 302
    assert inbox(pull_request)[first].first_comment.body == "Edited on GitHub"
    assert AuditEntry.objects.filter(action="review_threads.sync", actor=reviewer).exists()


def test_attaching_to_a_finding_from_the_site(pull_request, threads, reviewer):
    first, _ = threads

    site_client(reviewer).post(f"{INBOX}{first}/triage/", {"outcome": "attach", "attach": "2"})

    thread = inbox(pull_request)[first]
    assert (thread.state, thread.finding.number) == (ReviewThread.State.ATTACHED, 2)


def test_the_finding_page_links_to_its_thread_and_shows_its_replies_sanitised(pull_request, threads, reviewer):
    first, _ = threads
    thread = review_thread_triage(thread=inbox(pull_request)[first], actor=reviewer, outcome="blocker")
    url = reverse("findings:finding", args=["acme", "loader", 7, thread.finding.number])

    page = site_client(reviewer).get(url).content.decode()

    assert thread.html_url in page and "The thread on GitHub" in page
    assert "<strong>sure</strong>" in page and "<script>alert(1)</script>" not in page


def test_the_thread_settings_are_changed_by_an_admin_of_the_repository_only(pull_request, reviewer):
    admin = member_of(pull_request.repository, user_with_role("no_role", username="ada"), "admin")
    url = "/api/repos/acme/loader/thread-settings"

    refused = api_client(reviewer, scopes=("settings",)).patch(url, {"publish_verdicts": True}, format="json")
    client = api_client(admin, scopes=("settings",))
    answer = client.patch(url, {"publish_verdicts": True}, format="json")
    empty = client.patch(url, {}, format="json")

    assert refused.status_code == 403 and empty.status_code == 400
    assert answer.status_code == 200 and answer.json() == {"publish_verdicts": True, "resolve_when_verified": False}
    settings = pull_request.repository.thread_settings
    assert settings.publish_verdicts and not settings.resolve_when_verified
    entry = AuditEntry.objects.get(action="repository.settings", actor=admin)
    assert entry.changes == {"publish_verdicts": [False, True]}


def test_the_api_triages_a_thread_for_a_reviewer_and_refuses_twice_and_a_reader(pull_request, threads, reviewer):
    first, beyond = threads
    reader = member_of(pull_request.repository, user_with_role("no_role", username="rex"), "reader")
    url = f"/api/repos/acme/loader/pulls/7/threads/{first}/triage"
    client = api_client(reviewer, scopes=("import",))

    refused = api_client(reader, scopes=("import",)).post(url, {"outcome": "blocker"}, format="json")
    done = client.post(url, {"outcome": "blocker"}, format="json")
    again = client.post(url, {"outcome": "cleanup"}, format="json")
    attached = client.post(f"/api/repos/acme/loader/pulls/7/threads/{beyond}/triage", {"outcome": "attach", "finding": 2},
                           format="json")

    assert refused.status_code == 403
    assert done.status_code == 200 and (done.json()["state"], done.json()["finding"]) == ("finding", 4)
    assert again.status_code == 400 and "already" in again.json()["detail"]
    assert attached.status_code == 200 and attached.json()["finding"] == 2
