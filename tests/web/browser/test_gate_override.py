"""Overriding the merge gate in a real headless Chromium, against a real repository fetched into
its mirror and verified at a head where a blocker still holds: "other" without a note is refused
on the page, then the override with a note opens the gate (the page and the API say who and why),
and revoking it closes the gate again. A reader sees no override button. Screenshots land in
tests/artifacts/."""
import pytest
from rest_framework.test import APIClient

from findings.services.verification.run import pull_request_verify
from reviews.models import Commit
from reviews.services import pull_request_pin_commit
from tests.factories import UserFactory
from tests.findings.decision_data import fetched_review
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_maintainer_overrides_the_gate_and_revokes_it_and_a_reader_sees_no_button(live_server, tmp_path):
    review = fetched_review(tmp_path)
    head_sha = review.repo.write("README.md", "A push after the review.\n").commit("push")
    head = Commit.objects.create(repository=review.pull_request.repository, sha=head_sha, resolved=True)
    pull_request_pin_commit(pull_request=review.pull_request, commit=head, role="head")
    pull_request_verify(pull_request=review.pull_request, commit=head)
    UserFactory(username="mona", groups=["Maintainer"])
    UserFactory(username="rhea", groups=["Reader"])
    blockers = review.pull_request.get_absolute_url() + "blockers/"
    gate_url = f"/api/repos/acme/loader/pulls/{review.pull_request.number}/gate"

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "mona", blockers, sent_there=False)
        heading = page.locator("#merge-gate-title")
        assert heading.inner_text() == f"Merge gate at {head_sha[:8]}: may not merge"

        # "Other" without a note: refused, said on the page, the gate still closed.
        page.locator("#merge-gate summary", has_text="Override the gate").click()
        page.select_option("#override-reason", "other")
        page.locator("#merge-gate button", has_text="Override the gate").click()
        page.wait_for_selector(".message-error")
        assert "needs a note" in page.locator(".message-error").inner_text()
        assert heading.inner_text().endswith("may not merge")

        # With a note: overridden, and the page says by whom and why.
        page.locator("#merge-gate summary", has_text="Override the gate").click()
        page.select_option("#override-reason", "other")
        page.fill("#override-note", "The flag is read by nothing since #4110.")
        page.locator("#merge-gate button", has_text="Override the gate").click()
        page.wait_for_selector(".message-success")
        assert heading.inner_text() == f"Merge gate at {head_sha[:8]}: overridden"
        box = page.locator("#merge-gate").inner_text()
        assert "Other, by mona" in box and "The flag is read by nothing since #4110." in box
        shoot(page, "gate-overridden")
        answer = APIClient().get(gate_url).json()
        assert (answer["mergeable"], answer["overridden"]["by"], answer["overridden"]["commit"]) == (
            True, "mona", head_sha)

        # A reader sees the override, and no button to make or revoke one.
        reader = browser.new_page(viewport=DESKTOP)
        sign_in(reader, live_server, "rhea", blockers, sent_there=False)
        assert reader.locator("#merge-gate-title").inner_text().endswith("overridden")
        assert reader.locator("#merge-gate button").count() == 0

        # Revoked: the gate is closed again, on the page and in the API.
        page.locator("#merge-gate button", has_text="Revoke the override").click()
        page.wait_for_selector(".message-success")
        assert heading.inner_text().endswith("may not merge")
        shoot(page, "gate-override-revoked")
        answer = APIClient().get(gate_url).json()
        assert (answer["mergeable"], answer["overridden"]) == (False, None)
