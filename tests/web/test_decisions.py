"""Deciding on the site: Mark fixed, Dismiss and Reopen beside each finding and on a full form,
through finding_resolve, against a real repository and its fetched mirror; and the "Needs a
decision" pages."""
from datetime import timedelta
import re
import shutil

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from access.models import AuditEntry
from findings.models import FindingEvent
from reviews.mirrors import repository_fetch, repository_mirror_dir
from reviews.models import Commit
from tests.factories import store_state
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    UserFactory,
    VerificationFactory,
)
from tests.findings.decision_data import fetched_review

pytestmark = pytest.mark.django_db


@pytest.fixture
def review(tmp_path):
    return fetched_review(tmp_path)


@pytest.fixture
def maintainer():
    return UserFactory(username="mona", groups=["Maintainer"])


@pytest.fixture
def reader():
    return UserFactory(username="rhea", groups=["Reader"])


def decide_url(finding) -> str:
    return finding.get_absolute_url() + "decide/"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


# --- The buttons ----------------------------------------------------------------------------


def test_a_maintainer_sees_the_buttons_on_the_finding_the_blockers_and_the_cleanups_pages(client, review, maintainer):
    client.force_login(maintainer)
    pull_request = review.pull_request
    finding_page = client.get(review.fixed_one.get_absolute_url()).content.decode()
    assert f'action="{decide_url(review.fixed_one)}"' in finding_page
    assert ">Mark fixed</summary>" in finding_page and ">Dismiss</summary>" in finding_page
    # Prefilled with the latest verified pin: the fix.
    assert f'name="commit" value="{review.fix}"' in finding_page

    blockers = client.get(pull_request.get_absolute_url() + "blockers/").content.decode()
    assert blockers.count('aria-label="Decide about finding') == 2
    assert f'action="{decide_url(review.still_there)}"' in blockers
    assert 'name="next" value="/acme/loader/pull/7/blockers/#finding-1"' in blockers
    cleanups = client.get(pull_request.get_absolute_url() + "cleanups/").content.decode()
    assert f'action="{decide_url(pull_request.findings.get(number=3))}"' in cleanups
    assert "Reopen" not in cleanups


def test_a_reader_and_a_visitor_see_no_decision_buttons(client, review, reader):
    pages = [review.fixed_one.get_absolute_url(), review.pull_request.get_absolute_url() + "blockers/",
             review.pull_request.get_absolute_url() + "cleanups/"]
    for who in (None, reader):
        if who:
            client.force_login(who)
        for url in pages:
            html = client.get(url).content.decode()
            assert "/decide/" not in html and "Decide about finding" not in html and "Mark fixed" not in html
        assert "Needs a decision</a>" not in client.get("/").content.decode()


def test_a_fixed_finding_offers_reopen_and_dismiss_but_not_mark_fixed(client, review, maintainer):
    client.force_login(maintainer)
    client.post(decide_url(review.fixed_one), {"status": "fixed", "commit": review.fix})
    html = client.get(review.fixed_one.get_absolute_url()).content.decode()
    assert ">Reopen</button>" in html and ">Dismiss</summary>" in html and ">Mark fixed</summary>" not in html


# --- Marking fixed -------------------------------------------------------------------------


def test_the_full_form_prefills_the_latest_verified_pin_and_shows_the_evidence_there(client, review, maintainer):
    client.force_login(maintainer)
    page = client.get(decide_url(review.fixed_one))
    html = page.content.decode()
    assert page.status_code == 200
    assert f'id="id_commit" name="commit" value="{review.fix}"' in html
    assert f"The latest verified commit of this pull request is <code>{review.fix[:8]}</code>" in html
    assert f"Evidence at <code>{review.fix[:8]}</code>" in html and "Gone" in html


def test_mark_fixed_at_the_right_commit_records_it_from_the_site(client, review, maintainer):
    client.force_login(maintainer)
    response = client.post(
        decide_url(review.fixed_one),
        {"status": "fixed", "commit": review.fix[:8], "note": "Tolerance back to 100.",
         "next": "/acme/loader/pull/7/blockers/#finding-1"},
    )
    assert response.status_code == 302 and response["Location"] == "/acme/loader/pull/7/blockers/#finding-1"
    finding = review.fixed_one
    assert (finding.status, finding.resolved_by, finding.resolved_commit.sha) == ("fixed", maintainer, review.fix)
    event = FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get()
    assert (event.source, event.actor, event.note) == ("site", maintainer, "Tolerance back to 100.")
    page = client.get(finding.get_absolute_url()).content.decode()
    assert f"Finding 1 (Tolerance 0 never stops) marked fixed at {review.fix[:8]}." in page
    history = text_of(page.split('class="history"', 1)[1].split("</ol>", 1)[0])
    assert re.search(rf"Open → Fixed at {review.fix[:8]} by mona \(site\) ?: Tolerance back to 100\.", history)


def test_an_unknown_sha_shows_the_form_again_saying_so_and_writes_nothing(client, review, maintainer):
    client.force_login(maintainer)
    response = client.post(decide_url(review.fixed_one), {"status": "fixed", "commit": "deadbeef", "note": "x"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "Not changed." in html and "No commit deadbeef in acme/loader: check the SHA" in html
    assert 'name="commit" value="deadbeef"' in html and 'aria-invalid="true"' in html
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()
    assert not Commit.objects.filter(sha="deadbeef").exists()


def test_an_ambiguous_sha_names_the_candidates(client, review, maintainer):
    first, second = review.repo.colliding_commits()
    review.repo.update_ref("refs/heads/one", first).update_ref("refs/heads/two", second)
    repository_fetch(repository=review.pull_request.repository)
    client.force_login(maintainer)
    html = client.post(decide_url(review.fixed_one), {"status": "fixed", "commit": first[:7]}).content.decode()
    candidates = html.split('class="candidates"', 1)[1].split("</ul>", 1)[0]
    assert f"<code>{min(first, second)}</code>" in candidates and f"<code>{max(first, second)}</code>" in candidates
    assert review.fixed_one.status == "open"


def test_a_missing_mirror_is_refused_saying_to_fetch_first(client, review, maintainer):
    shutil.rmtree(repository_mirror_dir(review.pull_request.repository))
    client.force_login(maintainer)
    html = client.post(decide_url(review.fixed_one), {"status": "fixed", "commit": review.fix}).content.decode()
    assert "has not been fetched yet" in html and "fetch the repository first" in html
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()


def test_where_the_evidence_still_holds_the_form_asks_for_anyway_and_a_note(client, review, maintainer):
    client.force_login(maintainer)
    url = decide_url(review.still_there)
    warned = client.post(url, {"status": "fixed", "commit": review.fix}).content.decode()
    assert f"The evidence still holds at <code>{review.fix[:12]}</code>: mark fixed anyway?" in warned
    assert "Still present" in warned and 'name="anyway"' in warned and "Mark fixed anyway" in warned

    no_note = client.post(url, {"status": "fixed", "commit": review.fix, "anyway": "on"}).content.decode()
    assert "needs a note" in no_note and 'name="anyway" checked' in no_note
    assert review.still_there.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()

    done = client.post(url, {"status": "fixed", "commit": review.fix, "anyway": "on", "note": "Nothing reads it."})
    assert done.status_code == 302
    assert FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get().note == "Nothing reads it." and review.still_there.status == "fixed"


def test_the_anyway_box_is_not_offered_before_the_evidence_is_known_to_hold(client, review, maintainer):
    client.force_login(maintainer)
    assert 'name="anyway"' not in client.get(decide_url(review.still_there)).content.decode()


# --- Dismissing and reopening --------------------------------------------------------------


def test_dismiss_needs_a_reason_and_reopen_clears_the_resolution(client, review, maintainer):
    client.force_login(maintainer)
    url = decide_url(review.still_there)
    refused = client.post(url, {"status": "dismissed", "note": " "}).content.decode()
    assert "Say why: dismissing a finding needs a reason." in refused
    assert review.still_there.status == "open"

    client.post(url, {"status": "dismissed", "note": "Debug stays on in this fork."})
    assert review.still_there.status == "dismissed"
    client.post(url, {"status": "open", "confirm": "yes"})
    finding = review.still_there
    assert (finding.status, finding.resolved_at, finding.resolution_note) == ("open", None, "")
    assert list(finding.history.filter(kind=FindingEvent.Kind.STATUS).values_list("to_status", "source")) == [("dismissed", "site"), ("open", "site")]


def test_a_form_that_is_not_one_is_a_400_that_writes_nothing(client, review, maintainer):
    client.force_login(maintainer)
    response = client.post(decide_url(review.fixed_one), {"status": "closed"})
    assert response.status_code == 400 and "Fix the form and send it again" in response.content.decode()
    assert not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()


def test_a_next_off_the_site_is_ignored(client, review, maintainer):
    client.force_login(maintainer)
    response = client.post(decide_url(review.fixed_one),
                           {"status": "fixed", "commit": review.fix, "next": "https://evil.example/"})
    assert response["Location"] == review.fixed_one.get_absolute_url()


# --- Who may ---------------------------------------------------------------------------------


def test_a_forged_post_from_a_reader_is_refused_with_403_and_writes_nothing(client, review, reader):
    client.force_login(reader)
    for data in ({"status": "fixed", "commit": review.fix}, {"status": "dismissed", "note": "No."}):
        response = client.post(decide_url(review.fixed_one), data)
        assert response.status_code == 403
        assert "may not mark findings fixed, dismissed or open in acme/loader" in response.content.decode()
    assert client.get(decide_url(review.fixed_one)).status_code == 403
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()
    refusal = AuditEntry.objects.filter(action="finding.resolve").first()
    assert refusal.outcome == "refused" and refusal.actor == reader


def test_a_visitor_who_is_not_logged_in_is_refused(client, review):
    response = client.post(decide_url(review.fixed_one), {"status": "fixed", "commit": review.fix})
    assert response.status_code == 403 and review.fixed_one.status == "open"


def test_an_unknown_finding_or_pull_request_is_a_404(client, review, maintainer):
    client.force_login(maintainer)
    assert client.get("/acme/loader/pull/7/findings/99/decide/").status_code == 404
    assert client.post("/acme/loader/pull/8/findings/1/decide/", {"status": "open"}).status_code == 404


def test_csrf_is_enforced(review, maintainer):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(maintainer)
    forged = browser.post(decide_url(review.fixed_one), {"status": "fixed", "commit": review.fix})
    assert forged.status_code == 403 and review.fixed_one.status == "open"

    form = browser.get(decide_url(review.fixed_one)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    done = browser.post(decide_url(review.fixed_one),
                        {"status": "fixed", "commit": review.fix, "csrfmiddlewaretoken": token})
    assert done.status_code == 302 and review.fixed_one.status == "fixed"


def test_the_decide_form_reads_in_bounded_queries(client, review, maintainer, django_assert_max_num_queries):
    client.force_login(maintainer)
    store_state(review.fixed_one.pull_request)  # as the verification's task stores it
    with django_assert_max_num_queries(18):
        assert client.get(decide_url(review.fixed_one)).status_code == 200


# --- Needs a decision ------------------------------------------------------------------------


def needing_decisions(slug="acme/rl", number=1):
    """One PR, verified at its head: findings that look fixed (likely, partly), one still
    present, one fixed and possibly regressed, one fixed quietly, one dismissed."""
    pull_request = PullRequestFactory(repository=RepositoryFactory(slug=slug), number=number)
    head = CommitFactory(repository=pull_request.repository)
    PinnedCommitFactory(pull_request=pull_request, commit=head, role="head")
    made = {}
    for name, status, verdict, regressed in [
        ("likely", "open", "likely_fixed", False),
        ("partly", "open", "partly_fixed", False),
        ("present", "open", "present", False),
        ("regressed", "fixed", "present", True),
        ("fixed", "fixed", "likely_fixed", False),
        ("dismissed", "dismissed", "likely_fixed", False),
    ]:
        # Possibly regressed: fixed before the head was pinned, and present there.
        resolved_at = timezone.now() - timedelta(days=1) if regressed else timezone.now()
        finding = FindingFactory(
            pull_request=pull_request, title=f"{slug} {name}", status=status,
            resolved_at=None if status == "open" else resolved_at,
        )
        VerificationFactory(finding=finding, commit=head, verdict=verdict)
        made[name] = finding
    return made


def test_the_page_lists_open_findings_that_look_fixed_and_fixed_ones_that_regressed(client, maintainer):
    made = needing_decisions()
    client.force_login(maintainer)
    html = client.get(reverse("findings:decisions")).content.decode()
    for name in ("likely", "partly", "regressed"):
        assert f"acme/rl {name}<" in html
    for name in ("present", "fixed", "dismissed"):
        assert f"acme/rl {name}<" not in html
    assert "marked fixed, but its evidence holds again" in html.lower()
    assert "likely fixed at the latest verified commit" in html
    assert html.count('aria-label="Decide about finding') == 3
    assert f'action="{decide_url(made["regressed"])}"' in html and ">Reopen</button>" in html


def test_the_page_hides_repositories_the_user_may_not_read(client):
    from reviews.models import Repository
    from tests.personas import member_of

    public = needing_decisions("acme/rl")["likely"].pull_request.repository
    needing_decisions("secret/vault", number=2)
    Repository.objects.filter(slug="secret/vault").update(visibility="private")
    maintainer = member_of(public, UserFactory(username="mona-of-rl"), "maintainer")
    client.force_login(maintainer)
    html = client.get(reverse("findings:decisions")).content.decode()
    assert "acme/rl likely" in html and "secret/vault" not in html
    assert client.get(reverse("findings:repository_decisions", args=["secret", "vault"])).status_code == 404


def test_the_repository_page_lists_its_own_findings_and_links_from_the_repository(client, maintainer):
    needing_decisions("acme/rl")
    needing_decisions("acme/other", number=2)
    client.force_login(maintainer)
    html = client.get(reverse("findings:repository_decisions", args=["acme", "rl"])).content.decode()
    assert "acme/rl likely" in html and "acme/other" not in html
    repository_page = client.get(reverse("findings:repository", args=["acme", "rl"])).content.decode()
    assert 'href="/acme/rl/decisions/"' in repository_page
    assert client.get(reverse("findings:repository_decisions", args=["acme", "nothing"])).status_code == 404


def test_a_reader_sees_the_list_without_buttons_and_the_nav_links_it_for_maintainers(client, reader, maintainer):
    needing_decisions()
    client.force_login(reader)
    html = client.get(reverse("findings:decisions")).content.decode()
    assert "acme/rl likely" in html and "Decide about finding" not in html and "A maintainer decides" in html
    assert 'href="/decisions/">Needs a decision' not in html
    client.force_login(maintainer)
    assert 'href="/decisions/">Needs a decision' in client.get("/").content.decode()


def test_nothing_to_decide_says_so(client, maintainer):
    client.force_login(maintainer)
    assert "Nothing waits for a decision" in client.get(reverse("findings:decisions")).content.decode()


def test_the_page_is_paginated(client, maintainer):
    from web.forms.decisions import DECISIONS_PER_PAGE

    pull_request = PullRequestFactory(repository=RepositoryFactory(slug="acme/many"), number=1)
    head = CommitFactory(repository=pull_request.repository)
    PinnedCommitFactory(pull_request=pull_request, commit=head, role="head")
    for index in range(DECISIONS_PER_PAGE + 3):
        VerificationFactory(finding=FindingFactory(pull_request=pull_request, number=index + 1), commit=head,
                            verdict="likely_fixed")
    client.force_login(maintainer)
    first = client.get(reverse("findings:decisions")).content.decode()
    second = client.get(reverse("findings:decisions"), {"page": 2}).content.decode()
    assert first.count('class="finding decision-item') == DECISIONS_PER_PAGE
    assert second.count('class="finding decision-item') == 3
    assert f"of {DECISIONS_PER_PAGE + 3} · page 2 of 2" in second


@pytest.mark.parametrize("pull_requests", [1, 5])
def test_the_page_reads_in_bounded_queries(client, maintainer, django_assert_max_num_queries, pull_requests):
    for index in range(pull_requests):
        made = needing_decisions(f"acme/r{index}", number=index + 1)
        for finding in made.values():
            EvidenceFactory(finding=finding, commit=finding.pull_request.pins.get().commit)
        store_state(made["likely"].pull_request)  # as the verification's task stores it
    client.force_login(maintainer)
    # With the states of the PRs listed, read to pick what needs a decision and for each one shown.
    with django_assert_max_num_queries(16):
        response = client.get(reverse("findings:decisions"))
    assert response.content.decode().count('class="finding decision-item') == 3 * pull_requests


def test_reopening_from_the_button_beside_a_finding_asks_first_and_a_confirmed_reopen_reopens(client, review, maintainer):
    client.force_login(maintainer)
    url = decide_url(review.still_there)
    client.post(url, {"status": "dismissed", "note": "Debug stays on in this fork."})
    asked = client.post(url, {"status": "open"})  # the small Reopen button sends no confirmation
    page = asked.content.decode()
    assert asked.status_code == 200 and "Reopen finding" in page and 'id="confirm-reopen"' in page
    assert "It is marked <strong>Dismissed</strong>" in page
    assert '<input type="hidden" name="confirm" value="yes">' in page
    assert review.still_there.status == "dismissed"
    assert not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS, to_status="open").exists()
    client.post(url, {"status": "open", "confirm": "yes", "note": "It came back."})
    assert review.still_there.status == "open"
