"""A GitHub issue per follow-up, at the local fake GitHub that validates every request body with
githubkit's models: opened when the pull request merges, closed with a comment naming the fixing
commit when the follow-up is verified fixed and marked, reopened when the evidence comes back;
an issue deleted or locked on GitHub gives a clear state."""
import pytest

from findings.services.follow_ups.decisions import follow_up_close, follow_up_mark_fixed
from findings.services.follow_ups.opening import follow_ups_open_on_merge
from forge.follow_up_issues.services import follow_up_issue_request, follow_up_issues_update
from forge.models import FollowUpIssue, ForgeCall
from tests.factories import UserFactory
from tests.findings.follow_up_world import SLUG, check, merged_world, push_the_move_and_the_fix
from tests.forge.scenario import deliver

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path, fake_github):
    fake_github.install(SLUG)
    world = merged_world(tmp_path, merge=False)
    follow_up_issues_update(actor=None, repository=world.pull_request.repository, open_issues=True)
    follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    deliver()
    return world


def issue_of(world, number):
    return FollowUpIssue.objects.get(follow_up=world.follow_up(number))


def test_each_follow_up_gets_one_issue_with_its_evidence_at_the_default_branch_and_a_link_back(world, fake_github):
    issues = fake_github.issues_of(SLUG)
    assert len(issues) == 2
    helper = issues[issue_of(world, 2).number]
    assert helper["title"] == "Follow-up: The helper retries forever" and helper["state"] == "open"
    assert "[src/loader.py:13–14](https://github.com/acme/loader/blob/main/src/loader.py#L13-L14)" in helper["body"]
    assert "https://recheck.example.com/acme/loader/pull/7/findings/2/#follow-up" in helper["body"]
    # The same merge reported again writes nothing more.
    follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    follow_up_issue_request(follow_up=world.follow_up(2), change="opened")
    deliver()
    assert len(fake_github.issues_of(SLUG)) == 2 and len(fake_github.calls("POST", r"/issues$")) == 2


def test_the_fixed_one_s_issue_is_closed_with_the_fixing_commit_and_the_moved_one_stays_open(world, fake_github):
    push_the_move_and_the_fix(world)
    check(world)
    deliver()
    assert all(issue["state"] == "open" for issue in fake_github.issues_of(SLUG).values())  # verified, not marked
    follow_up_mark_fixed(actor=UserFactory(username="mona", groups=["Maintainer"]), follow_up=world.follow_up(3))
    deliver()
    issues = fake_github.issues_of(SLUG)
    debug, helper = issues[issue_of(world, 3).number], issues[issue_of(world, 2).number]
    assert (debug["state"], debug["state_reason"]) == ("closed", "completed")
    assert helper["state"] == "open"
    [comment] = [c for c in fake_github.comments.values() if c["number"] == debug["number"]]
    assert f"Fixed in {world.fixed}" in comment["body"] and "marked fixed by mona" in comment["body"]
    assert issue_of(world, 3).state == "closed"
    assert fake_github.calls("PATCH", rf"/issues/{debug['number']}$") == [{"state": "closed",
                                                                             "state_reason": "completed"}]


def test_a_regression_reopens_the_issue(world, fake_github):
    push_the_move_and_the_fix(world)
    check(world)
    follow_up_mark_fixed(actor=None, follow_up=world.follow_up(3))
    deliver()
    world.repo.write("src/loader.py", world.repo.read("src/loader.py") + "\nDEBUG = True\n").commit("oops")
    check(world)
    deliver()
    debug = fake_github.issues_of(SLUG)[issue_of(world, 3).number]
    assert debug["state"] == "open"
    assert any("evidence is back on `main`" in c["body"] for c in fake_github.comments.values())


def test_a_follow_up_closed_with_a_reason_closes_its_issue_as_not_planned(world, fake_github):
    follow_up_close(actor=None, follow_up=world.follow_up(2), reason="Done in #9 instead.")
    deliver()
    helper = fake_github.issues_of(SLUG)[issue_of(world, 2).number]
    assert (helper["state"], helper["state_reason"]) == ("closed", "not_planned")


def test_an_issue_deleted_on_github_is_said_and_nothing_is_retried(world, fake_github):
    fake_github.delete_issue(SLUG, issue_of(world, 2).number)
    follow_up_close(actor=None, follow_up=world.follow_up(2), reason="Not needed.")
    deliver()
    issue = issue_of(world, 2)
    assert issue.state == "deleted" and "deleted on GitHub (410" in issue.problem
    assert ForgeCall.objects.filter(kind="issue", state="close").get().status == "sent"


def test_a_locked_issue_is_said(world, fake_github):
    fake_github.lock_issue(SLUG, issue_of(world, 2).number)
    follow_up_close(actor=None, follow_up=world.follow_up(2), reason="Not needed.")
    deliver()
    issue = issue_of(world, 2)
    assert issue.state == "locked" and "locked on GitHub" in issue.problem and "403" in issue.problem


def test_issues_are_off_unless_the_repository_opts_in(tmp_path, fake_github):
    fake_github.install(SLUG)
    merged_world(tmp_path)
    deliver()
    assert fake_github.issues_of(SLUG) == {} and not ForgeCall.objects.filter(kind="issue").exists()


def test_turning_issues_on_needs_the_admin_role_and_opens_the_missing_ones(tmp_path, fake_github):
    from access.permissions import ActionRefused

    fake_github.install(SLUG)
    world = merged_world(tmp_path)
    with pytest.raises(ActionRefused):
        follow_up_issues_update(actor=UserFactory(groups=["Maintainer"]), repository=world.pull_request.repository,
                                open_issues=True)
    follow_up_issues_update(actor=None, repository=world.pull_request.repository, open_issues=True)
    deliver()
    assert len(fake_github.issues_of(SLUG)) == 2


def test_the_publishing_endpoint_turns_the_issues_on(tmp_path, fake_github):
    from tests.forge.outbox.test_publishing_api import URL, token_client

    fake_github.install(SLUG)
    merged_world(tmp_path)
    client = token_client(UserFactory(username="owner", permissions=["reviews.change_repository"]))
    response = client.patch(URL, {"follow_up_issues": True}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["follow_up_issues"] is True
    deliver()
    assert len(fake_github.issues_of(SLUG)) == 2


def test_the_finding_page_names_its_issue(world, fake_github):
    from tests.personas import site_client

    number = issue_of(world, 2).number
    html = site_client().get("/acme/loader/pull/7/findings/2/").content.decode()
    assert f'href="https://github.com/acme/loader/issues/{number}"' in html and f"Issue #{number}" in html
    follow_up_close(actor=None, follow_up=world.follow_up(2), reason="Done elsewhere.")
    deliver()
    html = site_client().get("/acme/loader/pull/7/findings/2/").content.decode()
    history = html[html.index('class="history follow-up-history"'):]
    steps = [step for step in ("Recorded in review", "Merged with its pull request", f"Issue #{number} opened on GitHub",
                               "Closed", f"Issue #{number} closed on GitHub") if step in history]
    assert len(steps) == 5 and history.index(steps[2]) < history.index(steps[4])


def test_an_issue_made_by_a_create_whose_answer_was_lost_is_found_not_made_twice(tmp_path, fake_github, settings):
    fake_github.install(SLUG)
    world = merged_world(tmp_path, merge=False)
    follow_up_issues_update(actor=None, repository=world.pull_request.repository, open_issues=True)
    # GitHub makes the issue, and answers after the client gave up.
    settings.RECHECK_GITHUB_TIMEOUT = 0.3
    fake_github.answer_slowly("POST", r"/issues$", 0.8, times=2)
    follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    deliver()
    assert len(fake_github.issues_of(SLUG)) == 2
    assert sorted(FollowUpIssue.objects.values_list("number", flat=True)) == sorted(fake_github.issues_of(SLUG))
    assert len(fake_github.calls("POST", r"/issues$")) == 2  # one create each: the retry looked first
    assert fake_github.calls("GET", r"/issues$") and all(c.status == "sent" for c in ForgeCall.objects.all())
