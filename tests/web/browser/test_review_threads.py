"""A Reviewer triages a pull request's review threads in a real headless Chromium: one becomes a
blocker with its snippet, one is attached to a finding, one is not a finding; a reader sees the
inbox without the buttons. No Content-Security-Policy refusal on the way."""
import pytest

from forge.threads.models import ReviewComment, ReviewThread
from tests.factories import UserFactory
from tests.findings.decision_data import fetched_review
from tests.personas import member_of
from tests.web.browser.test_companion_pages import chromium, shoot, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def a_thread(pull_request, root_id: int, body: str, sha: str, line: int) -> ReviewThread:
    """A thread as a sync of GitHub records it."""
    thread = ReviewThread.objects.create(
        pull_request=pull_request, root_comment_id=root_id, path="src/loader.py", side="RIGHT", subject_type="line",
        original_commit_id=sha, original_line=line, commit_id=sha, line=line, author_login="alice",
        html_url=f"https://github.com/acme/loader/pull/7#discussion_r{root_id}")
    ReviewComment.objects.create(thread=thread, github_id=root_id, author_login="alice", body=body)
    ReviewComment.objects.create(thread=thread, github_id=root_id + 1, in_reply_to_id=root_id, author_login="bob",
                                 body="Agreed, **and** `<b>` stays text")
    return thread


def test_a_reviewer_triages_the_inbox_and_a_reader_only_reads_it(live_server, tmp_path):
    review = fetched_review(tmp_path)
    pull_request = review.pull_request
    reviewer = member_of(pull_request.repository, UserFactory(username="rita"), "reviewer")
    reader = member_of(pull_request.repository, UserFactory(username="rex"), "reader")
    first = a_thread(pull_request, 9001, "Tolerance 0 never stops", review.reviewed, 10)
    second = a_thread(pull_request, 9101, "Same as finding 2", review.reviewed, 1)
    third = a_thread(pull_request, 9201, "Nice name", review.reviewed, 3)
    inbox = f"{live_server.url}{pull_request.get_absolute_url()}threads/"

    with chromium() as browser:
        page = signed_in(browser, live_server, reviewer).new_page()
        page.goto(f"{live_server.url}{pull_request.get_absolute_url()}")
        assert page.locator(".threads-sync-form").count() == 0  # on the inbox, not the overview
        page.click("text=Review threads")
        assert page.url == inbox
        assert page.locator(".thread").count() == 3
        assert page.locator("#thread-9001 .thread-comment strong", has_text="and").count() == 1
        shoot(page, "threads-inbox")

        page.locator("#thread-9001 button", has_text="Blocker").click()
        page.wait_for_selector(".message-success")
        assert "Recorded as finding 4" in page.locator(".message-success").inner_text()
        assert "Triaged as a finding" in page.locator("#thread-9001 .thread-state").inner_text()
        assert "A snippet of src/loader.py:10" in page.locator("#thread-9001 .thread-finding").inner_text()

        page.select_option("#thread-9101 select[name=attach]", "2")
        page.locator("#thread-9101 button", has_text="Attach").click()
        page.wait_for_selector(".message-success")
        page.locator("#thread-9201 button", has_text="Not a finding").click()
        page.wait_for_selector(".message-success")
        assert page.locator(".thread-triage").count() == 0
        shoot(page, "threads-triaged")

        page.locator("#thread-9001 .thread-finding a").click()
        page.wait_for_selector(".finding-threads")  # the finding's page, not the inbox still
        assert page.locator(".finding-threads .thread-comment").count() == 2
        assert "The thread on GitHub" in page.locator(".finding-threads").inner_text()

        as_reader = signed_in(browser, live_server, reader).new_page()
        as_reader.goto(inbox)
        assert as_reader.locator(".thread").count() == 3
        assert as_reader.locator(".thread-triage, .threads-sync-form").count() == 0

    first.refresh_from_db(), second.refresh_from_db(), third.refresh_from_db()
    assert (first.state, first.finding.evidence.get().kind) == ("finding", "snippet")
    assert (second.state, second.finding.number) == ("attached", 2)
    assert third.state == "not_a_finding"
