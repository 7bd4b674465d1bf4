"""Why a verdict could not be checked is on the timeline: a CI report arriving at the head, where
the check items were waiting for CI, is one `finding.verdict_changed` that names the reason before
and after, even when the verdict stays an error (waiting for CI, then flaky), in the payload, the
summary, the API, the feed, the email and a signed webhook delivered to a local receiver
(pytest-httpserver on 127.0.0.1). A timeline mark stored before reasons were kept is their
baseline. The repository and its reports are real: acme/calc's own tests run with pytest."""
import re

import pytest
from django.core import mail
from standardwebhooks import Webhook

from access.models import Membership
from core.vocabulary import events as ev
from findings.models import ReviewEvent, TimelineMark
from findings.services.reports import check_report_record
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from findings.state.stored import pull_request_state
from findings.state.timeline import EMPTY, replay, replayed, snapshot
from notify.mail.sending import mails_send_due
from notify.mail.services import subscription_set
from notify.webhooks.sending import webhooks_send_due
from notify.webhooks.services import webhook_endpoint_create
from presentation.events import summarised
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_changed
from tests import personas
from tests.findings.services.test_verification_checks import FLOOR, ZERO, History, arrive

# A report's re-derivation runs in-process even where a broker is configured (CI).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    # Made once: the tests only read the repository and its reports.
    return History(tmp_path_factory.mktemp("history"))


@pytest.fixture
def pull_request(history, settings):
    """acme/calc#1 verified at its head before any report came: both check items wait for CI."""
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]  # the receiver, pytest-httpserver
    settings.RECHECK_SITE_URL = "https://recheck.example"
    review_import(data={
        "repository": {"slug": "acme/calc", "clone_url": history.repo.url},
        "pull_request": {"number": 1, "title": "Calc"},
        "commits": [{"sha": history.reviewed, "role": "reviewed"}, {"sha": history.fixed, "role": "head"}],
        "findings": [
            {"number": 1, "kind": "blocker", "title": "Division is wrong", "caught_by": "ci", "evidence": [
                {"kind": "check", "check": "unit-tests", "tests": [ZERO, FLOOR]}]},
            {"number": 2, "kind": "blocker", "title": "The pin does not fast-forward", "caught_by": "ci",
             "evidence": [{"kind": "check", "check": "fast-forward"}]},
        ],
    })
    pull_request = PullRequest.objects.select_related("repository").get()
    pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=history.fixed))
    state = pull_request_state(pull_request_id=pull_request.pk)
    assert {pk: (finding["verdict"], finding["verdict_reason"]) for pk, finding in state["findings"].items()} \
        == {pk: ("error", "waiting") for pk in state["findings"]}
    return pull_request


def events_after(pull_request, before: int) -> list[ReviewEvent]:
    """The events written since event `before`, once the state is read as a reader reads it."""
    pull_request_state(pull_request_id=pull_request.pk)
    return list(ReviewEvent.objects.filter(pull_request=pull_request, id__gt=before).order_by("id"))


def last_event(pull_request) -> int:
    return ReviewEvent.objects.filter(pull_request=pull_request).order_by("id").values_list("id", flat=True).last()


def reasons(event) -> tuple:
    return tuple(event.payload[name] for name in ("from", "to", "from_reason", "to_reason"))


def test_a_flaky_report_where_ci_was_awaited_is_one_verdict_change_on_every_channel(history, pull_request,
                                                                                    httpserver):
    repository = pull_request.repository
    admin = personas.member_of(repository, personas.user_with_role("no_role", username="adam"),
                               Membership.Role.ADMIN)
    _, secret = webhook_endpoint_create(repository=repository, actor=admin, url=httpserver.url_for("/hooks/recheck"),
                                        kinds=[ev.FINDING_VERDICT_CHANGED])
    httpserver.expect_request("/hooks/recheck", method="POST").respond_with_data("ok")
    watcher = personas.member_of(repository, personas.user_with_role("no_role", username="wes"),
                                 Membership.Role.READER)
    watcher.email = "wes@example.com"
    watcher.save()
    subscription_set(actor=watcher, repository=repository, kinds=[ev.FINDING_VERDICT_CHANGED])
    before = last_event(pull_request)

    # test_floor fails in the first attempt and passes in the second: flaky, still an error.
    check_report_record(repository=repository, sha=history.fixed, check="unit-tests", source="upload",
                        file=history.reports[history.partly]["unit-tests"])
    arrive(repository=repository, sha=history.fixed, check="unit-tests", source="upload",
           file=history.reports[history.fixed]["unit-tests"], attempt=2)

    [event] = events_after(pull_request, before)
    assert (event.kind, event.finding_number, event.sha, event.cause) == (
        ev.FINDING_VERDICT_CHANGED, 1, history.fixed, ev.CAUSE_RECHECK)
    assert reasons(event) == ("error", "error", "waiting", "flaky")
    assert event.payload["finding"]["verdict_reason"] == "flaky"
    summary = f"Finding 1: Waiting for CI → Flaky at {history.fixed[:8]}."
    assert summarised([event])[0].summary == summary

    api = personas.api_client(admin).get("/api/repos/acme/calc/pulls/1/events/",
                                         {"kind": ev.FINDING_VERDICT_CHANGED}).json()["results"]
    assert [(row["id"], row["payload"]) for row in api] == [(event.pk, event.payload)]

    feed = personas.site_client(admin).get("/acme/calc/pull/1/timeline/feed.atom").content.decode()
    assert summary in feed

    assert webhooks_send_due() == 1
    [(request, _)] = httpserver.log
    body = Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
    [delivered] = body["data"]["events"]
    assert (delivered["payload"]["from_reason"], delivered["payload"]["to_reason"]) == ("waiting", "flaky")
    assert (delivered["payload"]["from"], delivered["payload"]["to"]) == ("error", "error")
    assert delivered["summary"] == summary

    mails_send_due()
    [message] = [message for message in mail.outbox if message.to == ["wes@example.com"]]
    assert summary in message.body
    assert f"Finding 1: Waiting for CI -> Flaky at {history.fixed[:8]}" in message.body
    html = message.alternatives[0][0]
    assert re.search(r"<td>1</td>\s*<td>Waiting for CI</td><td>Flaky</td>", html)


def test_each_report_at_the_head_is_one_verdict_change_from_the_reason_before(history, pull_request):
    repository = pull_request.repository
    before = last_event(pull_request)
    # One named test of two still fails: partly fixed, no longer waiting.
    arrive(repository=repository, sha=history.fixed, check="unit-tests", source="upload",
           file=history.reports[history.partly]["unit-tests"])
    [partly] = events_after(pull_request, before)
    assert (partly.kind, partly.finding_number) == (ev.FINDING_VERDICT_CHANGED, 1)
    assert reasons(partly) == ("error", "partly_fixed", "waiting", "")
    assert summarised([partly])[0].summary == f"Finding 1: Waiting for CI → Partly fixed at {history.fixed[:8]}."

    # The same test passes in the second attempt: flaky, an error again, with its reason.
    arrive(repository=repository, sha=history.fixed, check="unit-tests", source="upload",
           file=history.reports[history.fixed]["unit-tests"], attempt=2)
    [flaky] = events_after(pull_request, partly.pk)
    assert reasons(flaky) == ("partly_fixed", "error", "", "flaky")
    assert summarised([flaky])[0].summary == f"Finding 1: Partly fixed → Flaky at {history.fixed[:8]}."

    # The fast-forward check fails: still present, the other finding's own event.
    arrive(repository=repository, sha=history.fixed, check="fast-forward", source="upload", conclusion="failure")
    [present] = [event for event in events_after(pull_request, flaky.pk) if event.kind == ev.FINDING_VERDICT_CHANGED]
    assert (present.finding_number, *reasons(present)) == (2, "error", "present", "waiting", "")
    assert summarised([present])[0].summary == f"Finding 2: Waiting for CI → Still present at {history.fixed[:8]}."

    # The events from the first state on replay to the current one, reasons and all.
    rows = [{"kind": kind, "payload": payload} for kind, payload in
            ReviewEvent.objects.filter(pull_request=pull_request).order_by("id").values_list("kind", "payload")]
    current = snapshot(pull_request_state(pull_request_id=pull_request.pk))
    assert replay(EMPTY, rows) == replayed(current)
    assert {finding["number"]: finding["verdict_reason"] for finding in current["findings"].values()} == {1: "flaky",
                                                                                                          2: ""}


def test_a_mark_stored_before_reasons_were_kept_gives_no_burst_of_events(history, pull_request):
    # The mark as a release before this one stored it: no reason for any finding.
    mark = TimelineMark.objects.get(pk=pull_request.pk)
    for finding in mark.snapshot["findings"].values():
        del finding["verdict_reason"]
    mark.save()
    before = last_event(pull_request)
    # The first state stored after the upgrade (a new generation, nothing else changed).
    pull_request_changed(pull_request_id=pull_request.pk)
    assert events_after(pull_request, before) == []
    assert all(finding["verdict_reason"] == "waiting"
               for finding in TimelineMark.objects.get(pk=pull_request.pk).snapshot["findings"].values())
    # The reasons it found are the baseline the next report's event starts from.
    arrive(repository=pull_request.repository, sha=history.fixed, check="fast-forward", source="upload",
           conclusion="failure")
    [event] = [event for event in events_after(pull_request, before) if event.kind == ev.FINDING_VERDICT_CHANGED]
    assert (event.finding_number, *reasons(event)) == (2, "error", "present", "waiting", "")
