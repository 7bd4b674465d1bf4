import json

import pytest

from findings.models import VerificationRun, WebhookDelivery
from forge.github.webhooks import github_signature, github_signature_is_valid
from reviews.models import Commit, PinnedCommit

HOOK = "/api/hooks/github"
SECRET = "webhook-secret-for-tests"

# GitHub's published example (docs: "Validating webhook deliveries").
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_the_signature_matches_github_s_published_example():
    assert github_signature(secret=GITHUB_SECRET, body=GITHUB_BODY) == GITHUB_SIGNATURE
    assert github_signature_is_valid(secret=GITHUB_SECRET, body=GITHUB_BODY, signature=GITHUB_SIGNATURE)


@pytest.mark.parametrize(
    ("secret", "body", "signature"),
    [
        (GITHUB_SECRET, b"Hello, World?", GITHUB_SIGNATURE),
        ("another secret", GITHUB_BODY, GITHUB_SIGNATURE),
        (GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE.replace("sha256=", "sha1=")),
        (GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE[:-1]),
        (GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE.upper()),
        (GITHUB_SECRET, GITHUB_BODY, "sha256=é"),
        (GITHUB_SECRET, GITHUB_BODY, ""),
        (GITHUB_SECRET, GITHUB_BODY, None),
        ("", GITHUB_BODY, GITHUB_SIGNATURE),
    ],
)
def test_any_other_signature_body_or_secret_is_refused(secret, body, signature):
    assert not github_signature_is_valid(secret=secret, body=body, signature=signature)


@pytest.fixture
def hook_secret(settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET
    return SECRET


def pull_request_event(action="synchronize", slug="acme/loader", number=4108, sha="c0ffee" + "1" * 34) -> dict:
    return {
        "action": action,
        "number": number,
        "pull_request": {"number": number, "head": {"sha": sha, "ref": "feature"}},
        "repository": {"full_name": slug},
    }


def deliver(client, payload, *, event="pull_request", delivery="d-1", secret=SECRET, signature=None, body=None):
    body = body if body is not None else json.dumps(payload).encode()
    headers = {"HTTP_X_GITHUB_EVENT": event, "HTTP_X_GITHUB_DELIVERY": delivery}
    signature = signature if signature is not None else github_signature(secret=secret, body=body)
    if signature:
        headers["HTTP_X_HUB_SIGNATURE_256"] = signature
    return client.post(HOOK, body, content_type="application/json", **headers)


pytestmark = pytest.mark.django_db


def test_a_push_to_a_tracked_pull_request_pins_the_head_and_queues_its_verification(
    anonymous_reader, review, hook_secret, queued_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = deliver(anonymous_reader, pull_request_event())
    assert response.status_code == 202
    commit = Commit.objects.get(sha="c0ffee" + "1" * 34)
    pin = PinnedCommit.objects.get(pull_request=review.pull_request, commit=commit)
    assert pin.role == "head" and commit.resolved
    run = VerificationRun.objects.get()
    assert (run.commit, run.pull_request) == (commit, review.pull_request)
    assert queued_tasks == [run.pk]
    body = response.json()
    assert body["run"] == run.pk and body["status_url"] == f"http://testserver/api/runs/{run.pk}/"
    assert WebhookDelivery.objects.get().outcome == body["detail"]


@pytest.mark.parametrize("action", ["opened", "reopened", "synchronize"])
def test_each_action_that_moves_the_head_is_acted_on(anonymous_reader, review, hook_secret, action):
    assert deliver(anonymous_reader, pull_request_event(action=action)).status_code == 202


def test_a_redelivered_event_has_one_effect(anonymous_reader, review, hook_secret, queued_tasks,
                                            django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = deliver(anonymous_reader, pull_request_event(), delivery="same-id")
        again = deliver(anonymous_reader, pull_request_event(), delivery="same-id")
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["duplicate"] is True and first.json()["detail"] in again.json()["detail"]
    assert VerificationRun.objects.count() == 1 and len(queued_tasks) == 1
    assert WebhookDelivery.objects.count() == 1


def test_two_deliveries_of_the_same_head_queue_one_run(anonymous_reader, review, hook_secret, queued_tasks,
                                                     django_capture_on_commit_callbacks):
    """GitHub sends `opened` and then `synchronize` for one head, or someone replays a captured body
    under a new delivery id: the head is verified once."""
    with django_capture_on_commit_callbacks(execute=True):
        first = deliver(anonymous_reader, pull_request_event(action="opened"), delivery="d-1")
        second = deliver(anonymous_reader, pull_request_event(action="synchronize"), delivery="d-2")
        replayed = deliver(anonymous_reader, pull_request_event(action="synchronize"), delivery="d-3")
    assert (first.status_code, second.status_code, replayed.status_code) == (202, 200, 200)
    assert VerificationRun.objects.count() == 1 and len(queued_tasks) == 1
    assert "already being verified" in second.json()["detail"] and second.json()["run"] is None
    assert WebhookDelivery.objects.count() == 3


def test_a_head_that_was_verified_is_not_queued_again(anonymous_reader, review, hook_secret, queued_tasks,
                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        deliver(anonymous_reader, pull_request_event(), delivery="d-1")
    VerificationRun.objects.update(status="done")
    with django_capture_on_commit_callbacks(execute=True):
        again = deliver(anonymous_reader, pull_request_event(), delivery="d-2")
    assert again.status_code == 200 and "already pinned and verified" in again.json()["detail"]
    assert VerificationRun.objects.count() == 1 and len(queued_tasks) == 1


@pytest.mark.parametrize(
    ("signature", "secret"),
    [
        ("", SECRET),  # unsigned
        ("sha256=" + "0" * 64, SECRET),  # badly signed
        (None, "the wrong secret"),  # signed with another secret
    ],
)
def test_an_unsigned_or_badly_signed_delivery_is_a_403_and_changes_nothing(
    anonymous_reader, review, hook_secret, signature, secret
):
    response = deliver(anonymous_reader, pull_request_event(), signature=signature, secret=secret)
    assert response.status_code == 403
    assert "X-Hub-Signature-256" in response.json()["detail"]
    assert not WebhookDelivery.objects.exists() and not VerificationRun.objects.exists()
    assert not Commit.objects.filter(sha__startswith="c0ffee").exists()


def test_without_a_configured_secret_every_delivery_is_refused(anonymous_reader, review, settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = ""
    response = deliver(anonymous_reader, pull_request_event(), secret="")
    assert response.status_code == 403 and "RECHECK_GITHUB_WEBHOOK_SECRET" in response.json()["detail"]
    assert not WebhookDelivery.objects.exists()


def test_the_signature_is_checked_over_the_raw_body(anonymous_reader, review, hook_secret):
    raw = json.dumps(pull_request_event(), indent=4).encode()  # not how json.dumps would re-serialise it
    assert deliver(anonymous_reader, None, body=raw).status_code == 202


def test_a_form_encoded_delivery_is_read_too(anonymous_reader, review, hook_secret):
    from urllib.parse import urlencode

    body = urlencode({"payload": json.dumps(pull_request_event())}).encode()
    response = anonymous_reader.post(
        HOOK, body, content_type="application/x-www-form-urlencoded",
        HTTP_X_GITHUB_EVENT="pull_request", HTTP_X_GITHUB_DELIVERY="form-1",
        HTTP_X_HUB_SIGNATURE_256=github_signature(secret=SECRET, body=body),
    )
    assert response.status_code == 202


def test_ping_answers_200(anonymous_reader, db, hook_secret):
    response = deliver(anonymous_reader, {"zen": "Keep it logically awesome."}, event="ping")
    assert response.status_code == 200 and response.json()["detail"].startswith("pong")


@pytest.mark.parametrize(
    ("event", "payload", "expected"),
    [
        ("star", {"action": "created"}, "not star events"),
        ("pull_request", pull_request_event(action="edited"), "does not move the head"),
        ("pull_request", pull_request_event(action="labeled"), "does not move the head"),
        ("pull_request", pull_request_event(number=1), "acme/loader#1 is not tracked"),
        ("pull_request", pull_request_event(slug="other/repo"), "other/repo#4108 is not tracked"),
    ],
)
def test_other_events_and_untracked_pull_requests_are_acknowledged_and_ignored(
    anonymous_reader, review, hook_secret, event, payload, expected
):
    response = deliver(anonymous_reader, payload, event=event)
    assert response.status_code == 200 and expected in response.json()["detail"]
    assert not VerificationRun.objects.exists()
    assert not PinnedCommit.objects.filter(role="head").exclude(commit=review.head).exists()


def test_a_slug_in_another_case_still_finds_the_pull_request(anonymous_reader, review, hook_secret):
    assert deliver(anonymous_reader, pull_request_event(slug="Acme/Loader")).status_code == 202


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "not a GitHub event payload"),
        (b"[1, 2]", "expected a JSON object"),
        (json.dumps({"action": "opened"}).encode(), "pull_request.head.sha"),
        (json.dumps(pull_request_event(sha="not-a-sha")).encode(), "hexadecimal"),
    ],
)
def test_a_signed_body_that_is_not_an_event_is_a_400(anonymous_reader, review, hook_secret, body, message):
    response = deliver(anonymous_reader, None, body=body)
    assert response.status_code == 400 and message in response.json()["detail"]
    assert not WebhookDelivery.objects.exists()


def test_a_delivery_without_its_id_is_a_400(anonymous_reader, review, hook_secret):
    response = deliver(anonymous_reader, pull_request_event(), delivery="")
    assert response.status_code == 400 and "X-GitHub-Delivery" in response.json()["detail"]


def test_the_webhook_needs_no_csrf_token(review, hook_secret):
    from rest_framework.test import APIClient

    assert deliver(APIClient(enforce_csrf_checks=True), pull_request_event()).status_code == 202


def test_the_verification_a_push_requests_is_in_the_audit_log_once_as_the_webhook_s(
    anonymous_reader, review, hook_secret, queued_tasks
):
    from access.models import AuditEntry

    deliver(anonymous_reader, pull_request_event(), delivery="d-audit")
    deliver(anonymous_reader, pull_request_event(), delivery="d-audit")  # a redelivery: no second request
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.outcome, entry.source, entry.actor) == ("verification.request", "done", "webhook", None)
    assert entry.target.startswith("acme/loader#4108 at c0ffee")


@pytest.mark.django_db(transaction=True)
def test_simultaneous_deliveries_all_succeed_on_every_database(review, hook_secret, queued_tasks):
    """On SQLite one writer at a time: each delivery's transaction takes the write lock when it
    begins and waits its turn, rather than failing with "database is locked" (a 503 GitHub does
    not redeliver). On PostgreSQL they run side by side."""
    import threading

    from django.db import connections
    from django.test import Client

    deliveries = 4
    start = threading.Barrier(deliveries)
    answers = []

    def push(index: int):
        try:
            start.wait()
            sha = f"{index:x}" * 40
            answers.append(deliver(Client(), pull_request_event(sha=sha[:40]), delivery=f"at-once-{index}").status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=push, args=(index,)) for index in range(1, deliveries + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert answers == [202] * deliveries
    assert WebhookDelivery.objects.count() == deliveries
    assert VerificationRun.objects.count() == deliveries
