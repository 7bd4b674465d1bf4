"""A flood: a push that moves 5,000 verdicts is one webhook per kind of event within the batch
window, never 5,000, and a state derived twice is delivered once."""
import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from access.models import Membership
from core.vocabulary import events as ev
from findings.models import Finding, ReviewEvent, Verification
from findings.state.stored import pull_request_state, pull_request_state_derive
from notify.models import WebhookMessage
from notify.webhooks.sending import webhooks_send_due
from notify.webhooks.services import webhook_endpoint_create
from reviews.models import PinnedCommit
from reviews.services import pull_request_changed
from tests import personas
from tests.factories import CommitFactory, large_reviewed_pull_request, make_sha

pytestmark = pytest.mark.django_db
FLOOD = 5000


def test_five_thousand_verdicts_moved_in_one_push_are_one_webhook_per_kind(settings, httpserver):
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 60
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]
    pull_request = large_reviewed_pull_request(findings=FLOOD)
    admin = personas.member_of(pull_request.repository, personas.user_with_role("no_role", username="adam"),
                               Membership.Role.ADMIN)
    endpoint, secret = webhook_endpoint_create(
        repository=pull_request.repository, actor=admin, url=httpserver.url_for("/hook"),
        kinds=[ev.FINDING_VERDICT_CHANGED, ev.GATE_CHANGED])
    httpserver.expect_request("/hook").respond_with_data("ok")
    # The push: a new head where every finding's code is gone.
    head = CommitFactory(repository=pull_request.repository, sha=make_sha("flood-head"))
    PinnedCommit.objects.create(pull_request=pull_request, commit=head, role="head")
    Verification.objects.bulk_create(
        Verification(finding_id=pk, commit=head, verdict="likely_fixed", checked_at=timezone.now())
        for pk in Finding.objects.filter(pull_request=pull_request).values_list("pk", flat=True))
    pull_request_changed(pull_request_id=pull_request.pk)
    pull_request_state(pull_request_id=pull_request.pk)
    moved = ReviewEvent.objects.filter(pull_request=pull_request, kind=ev.FINDING_VERDICT_CHANGED)
    assert moved.count() == FLOOD
    messages = WebhookMessage.objects.filter(endpoint=endpoint)
    # One per kind the endpoint wants: the verdicts, and the gate's answer at the new head.
    assert sorted(messages.values_list("kind", flat=True)) == [ev.FINDING_VERDICT_CHANGED, ev.GATE_CHANGED]
    # Derived again, at the same generation and a newer one: nothing more is written or sent.
    pull_request_state_derive(pull_request_id=pull_request.pk)
    pull_request_changed(pull_request_id=pull_request.pk)
    pull_request_state(pull_request_id=pull_request.pk)
    assert moved.count() == FLOOD and messages.count() == 2
    webhooks_send_due(now=timezone.now() + timezone.timedelta(seconds=61))
    assert len(httpserver.log) == 2
    bodies = [Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
              for request, _ in httpserver.log]
    assert [(body["type"], len(body["data"]["events"])) for body in bodies] == [
        (ev.FINDING_VERDICT_CHANGED, FLOOD), (ev.GATE_CHANGED, 1)]
