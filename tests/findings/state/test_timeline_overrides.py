"""An override of the gate, and its revoke, are events of the pull request's timeline: each once,
with who, why, the note and the commit, in the timeline, the API, the feed and a signed webhook
delivered to a local receiver (pytest-httpserver on 127.0.0.1)."""
import pytest
from standardwebhooks import Webhook

from access.models import Membership
from core.vocabulary import events as ev
from findings.services.policy import gate_override_create, gate_override_revoke
from findings.state.timeline import EMPTY, diff, replay, replayed
from notify.webhooks.sending import webhooks_send_due
from notify.webhooks.services import webhook_endpoint_create
from tests import personas
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db
OVERRIDE_KINDS = (ev.GATE_OVERRIDDEN, ev.GATE_OVERRIDE_REVOKED)


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]  # the receiver, pytest-httpserver
    settings.RECHECK_SITE_URL = "https://recheck.example"
    world = TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada"))
    world.imported()
    return world


def test_an_override_and_its_revoke_are_each_one_event_on_every_channel(world, httpserver):
    admin = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="adam"),
                               Membership.Role.ADMIN)
    _, secret = webhook_endpoint_create(repository=world.pull_request.repository, actor=admin,
                                        url=httpserver.url_for("/hooks/recheck"), kinds=list(OVERRIDE_KINDS))
    httpserver.expect_request("/hooks/recheck", method="POST").respond_with_data("ok")
    world.first_push()  # blocker 1 still holds at the head: not mergeable
    assert not world.read()["gates"][world.head.sha]["mergeable"]
    override = gate_override_create(pull_request=world.pull_request, sha=world.head.sha, reason="accepted_risk",
                                    note="Release tonight; fixed in #8.", actor=world.actor)
    world.read()
    revoker = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="mo"),
                                 Membership.Role.MAINTAINER)
    gate_override_revoke(override=override, actor=revoker)
    world.read()
    world.read()  # read again: nothing doubles

    events = list(world.events().filter(kind__in=OVERRIDE_KINDS))
    assert [(event.kind, event.actor, event.cause, event.sha) for event in events] == [
        (ev.GATE_OVERRIDDEN, world.actor, ev.CAUSE_PERSON, world.head.sha),
        (ev.GATE_OVERRIDE_REVOKED, revoker, ev.CAUSE_PERSON, world.head.sha),
    ]
    made = events[0].payload["override"]
    assert (made["id"], made["by"], made["reason"], made["note"], made["commit"]) == (
        override.pk, "ada", "accepted_risk", "Release tonight; fixed in #8.", world.head.sha)
    assert events[1].payload["override"] == made and events[1].payload["revoked_by"] == "mo"
    # The gate's own answer moved with each: mergeable by the override, then not again.
    gates = [event.payload["to"]["mergeable"] for event in world.events().filter(kind=ev.GATE_CHANGED)]
    assert gates[-2:] == [True, False]

    api = personas.api_client(admin).get("/api/repos/acme/loader/pulls/7/events/",
                                         {"kind": ",".join(OVERRIDE_KINDS), "page_size": 50}).json()["results"]
    # Newest first, as the timeline lists them.
    assert sorted((row["id"], row["kind"], row["actor"], row["payload"]) for row in api) == [
        (event.pk, event.kind, event.actor.username, event.payload) for event in events]

    feed = personas.site_client().get("/acme/loader/pull/7/timeline/feed.atom").content.decode()
    assert "Overridden by ada at" in feed and "was revoked by mo" in feed

    assert webhooks_send_due() == 2
    bodies = [Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
              for request, _ in httpserver.log]
    assert [body["type"] for body in bodies] == list(OVERRIDE_KINDS)
    delivered = [body["data"]["events"] for body in bodies]
    assert [[(row["id"], row["actor"], row["payload"]["override"]["reason"]) for row in rows] for rows in delivered] \
        == [[(events[0].pk, "ada", "accepted_risk")], [(events[1].pk, "mo", "accepted_risk")]]


def test_the_replay_carries_the_overrides_and_an_older_mark_is_their_baseline():
    override = {"by": "ada", "reason": "other", "note": "n", "commit": "a" * 40, "at": "2026-01-01T00:00:00+00:00"}
    with_one = {**EMPTY, "overrides": {"5": override}}
    made = diff(EMPTY, with_one)
    assert [change["kind"] for change in made] == [ev.GATE_OVERRIDDEN]
    assert replay(EMPTY, made) == replayed(with_one)
    revoked = diff(with_one, EMPTY)
    assert [change["kind"] for change in revoked] == [ev.GATE_OVERRIDE_REVOKED]
    assert replay(with_one, revoked) == replayed(EMPTY)
    # A snapshot stored before overrides were on the timeline: the ones in force are not news.
    older = {key: value for key, value in EMPTY.items() if key != "overrides"}
    assert diff(older, with_one) == []


def test_a_watcher_is_mailed_the_override_and_its_revoke(world, django_capture_on_commit_callbacks):
    from django.core import mail

    from notify.mail.sending import mails_send_due
    from notify.mail.services import subscription_set

    watcher = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="wes"),
                                 Membership.Role.READER)
    watcher.email = "wes@example.com"
    watcher.save()
    subscription_set(actor=watcher, repository=world.pull_request.repository, kinds=list(OVERRIDE_KINDS))
    world.first_push()
    # Nobody reads the state between: each is derived, with its events, once the write commits.
    with django_capture_on_commit_callbacks(execute=True):
        override = gate_override_create(pull_request=world.pull_request, sha=world.head.sha, reason="urgent_fix",
                                        note="Hotfix.", actor=world.actor)
    assert world.events().filter(kind=ev.GATE_OVERRIDDEN).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        gate_override_revoke(override=override, actor=world.actor)
    assert world.events().filter(kind=ev.GATE_OVERRIDE_REVOKED).count() == 1
    mails_send_due()
    # No batch window here: one message each, in order.
    made, revoked = [message.body for message in mail.outbox if message.to == ["wes@example.com"]]
    assert f"Overridden by ada at {world.head.sha[:8]} (urgent fix): Hotfix." in made
    assert f"The override of the merge gate at {world.head.sha[:8]} was revoked by ada" in revoked
