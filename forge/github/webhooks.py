"""GitHub webhooks: checking a delivery's signature, and acting on it once.

A `pull_request` event that moves a tracked PR's head (opened, synchronize, reopened) records the
head through `pull_request_record_head`, the service head tracking uses: a new head is pinned with
role `head` and verified once, however many deliveries name it. Every pull_request delivery is recorded
by its X-GitHub-Delivery id in the same transaction as its effect, so a redelivery (GitHub retries,
or someone presses "Redeliver") finds the row and changes nothing.

The events about Recheck's check (re-runs asked for on GitHub, merge groups, closed pull requests,
the App's installations) are recorded the same way and handed to `forge.github.events`; other
apps' completed check runs and commit statuses, to `forge.github.reports`, as CI reports."""
import hashlib
import hmac
from urllib.parse import parse_qs

from django.db import transaction

from core.documents import DocumentError, load_json
from findings.models import WebhookDelivery
from findings.services.runs import verification_run_request
from findings.services.tracking import pull_request_record_head
from core.errors import RecheckError
from core.forges import GITHUB
from forge.github.events import (
    EventOutcome,
    EventPayloadError,
    check_rerequest_handle,
    installation_handle,
    merge_group_handle,
    pull_request_closed_handle,
    push_handle,
)
from forge.interface import DeliveryOutcome, WebhookPayloadError, delivery_acted_on_once
from forge.github.reports import check_run_completed_handle, status_handle
from forge.github.review_events import THREAD_ACTIONS, THREAD_EVENTS, review_thread_event_handle
from reviews.models import PullRequest
from reviews.services import pull_request_branches_record, pull_request_state_record

HEAD_MOVING_ACTIONS = frozenset({"opened", "synchronize", "reopened"})
SIGNATURE_PREFIX = "sha256="
# PullRequest.number is a PositiveIntegerField: the same range on every database.
MAX_PULL_REQUEST_NUMBER = 2_147_483_647



def github_signature(*, secret: str, body: bytes) -> str:
    """The X-Hub-Signature-256 value GitHub sends for `body`."""
    return SIGNATURE_PREFIX + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def github_signature_is_valid(*, secret: str, body: bytes, signature: str | None) -> bool:
    """Whether `signature` (the X-Hub-Signature-256 header) signs the raw `body` with `secret`.

    Compared in constant time, so response timing does not reveal how much of a forged signature
    was right. No secret means nothing can be valid: an unconfigured hook refuses everything."""
    if not secret or not signature:
        return False
    expected = github_signature(secret=secret, body=body)
    return hmac.compare_digest(expected.encode("ascii"), signature.strip().encode("utf-8", "replace"))


def github_payload_parse(body: bytes, content_type: str) -> dict:
    """The event payload: GitHub sends JSON, or a form with the JSON in `payload`."""
    try:
        text = body.decode("utf-8")
        if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            text = parse_qs(text).get("payload", [""])[0]
        payload = load_json(text)
    except UnicodeDecodeError:
        raise WebhookPayloadError("The body is not a GitHub event payload (JSON, or a form with payload=).") from None
    except DocumentError as error:
        raise WebhookPayloadError(f"The body is not a GitHub event payload: {error}") from None
    if not isinstance(payload, dict):
        raise WebhookPayloadError("The body is not a GitHub event payload: expected a JSON object.")
    return payload


def _pull_request_event(payload: dict) -> tuple[str, str, int, str]:
    try:
        action = str(payload["action"])
        slug = str(payload["repository"]["full_name"])
        number = int(payload["pull_request"]["number"])
        head_sha = str(payload["pull_request"]["head"]["sha"])
        if not 0 < number <= MAX_PULL_REQUEST_NUMBER:
            raise ValueError(number)
    except (KeyError, TypeError, ValueError):
        raise WebhookPayloadError(
            "A pull_request payload needs action, repository.full_name, pull_request.number and "
            "pull_request.head.sha."
        ) from None
    return action, slug, number, head_sha


def _tracked_pull_request(slug: str, number: int) -> PullRequest | None:
    # A GitLab project of the same path is not GitHub's repository.
    pull_requests = PullRequest.objects.select_related("repository").filter(number=number, repository__forge=GITHUB)
    # GitHub keeps the owner's and name's case as typed; a slug recorded in another case still matches.
    return pull_requests.filter(repository__slug=slug).first() or pull_requests.filter(
        repository__slug__iexact=slug
    ).order_by("repository__slug").first()


# The events whose deliveries are acted on (and recorded, so a redelivery has no further effect).
HANDLED_EVENTS = frozenset(
    {"pull_request", "check_run", "check_suite", "merge_group", "installation", "installation_repositories", "push",
     "status"}
) | THREAD_EVENTS
# The actions of those events that reach a handler; the others are acknowledged and recorded.
HANDLED_ACTIONS = {
    "check_run": {"rerequested", "completed"},
    "check_suite": {"rerequested"},
    "merge_group": {"checks_requested"},
    **THREAD_ACTIONS,
}


def github_delivery_handle(*, delivery_id: str, event: str, payload: dict) -> DeliveryOutcome:
    """Act on one signed delivery, at most once per delivery id. Raises QueueUnavailable when its
    verification could not be queued; the delivery is then not recorded, so GitHub's redelivery
    acts on it."""
    return delivery_acted_on_once(
        delivery_id, lambda: _delivery_handle(delivery_id=delivery_id, event=event, payload=payload)
    )


@transaction.atomic
def _delivery_handle(*, delivery_id: str, event: str, payload: dict) -> DeliveryOutcome:
    if event == "ping":
        return DeliveryOutcome("pong: the webhook is connected.")
    if event not in HANDLED_EVENTS:
        return DeliveryOutcome(
            f"Ignored: Recheck acts on {', '.join(sorted(HANDLED_EVENTS))} events, not {event or 'unnamed'} events."
        )
    if event == "pull_request":
        action, slug, number, head_sha = _pull_request_event(payload)
    else:
        action = str(payload.get("action", ""))

    # The row is the claim: a concurrent redelivery waits on the unique index, then finds it.
    delivery, created = WebhookDelivery.objects.get_or_create(
        delivery_id=delivery_id, defaults={"event": event, "action": action[:50]}
    )
    if not created:
        return DeliveryOutcome(f"Already handled delivery {delivery_id}: {delivery.outcome}", duplicate=True)

    if event == "pull_request":
        message, run = _pull_request_delivery(payload, action, slug, number, head_sha)
    elif action not in HANDLED_ACTIONS.get(event, {action}):
        message, run = f"Ignored: {event} action {action!r}.", None
    else:
        try:
            outcome = _dispatch(event, payload)
        except EventPayloadError as error:
            raise WebhookPayloadError(str(error)) from None
        message = outcome.message
        run = next((run for run in outcome.runs if run.created), None)
    delivery.outcome = message
    delivery.save(update_fields=["outcome"])
    return DeliveryOutcome(message, run=run)


def _dispatch(event: str, payload: dict) -> EventOutcome:
    if event == "check_run" and payload.get("action") == "completed":
        return check_run_completed_handle(payload=payload)
    if event == "status":
        return status_handle(payload=payload)
    if event in ("check_run", "check_suite"):
        return check_rerequest_handle(event=event, payload=payload)
    if event == "merge_group":
        return merge_group_handle(payload=payload)
    if event in THREAD_EVENTS:
        return review_thread_event_handle(event=event, payload=payload)
    if event == "push":
        return push_handle(payload=payload)
    return installation_handle(event=event, payload=payload)


def _branches_record(pull_request: PullRequest, payload: dict) -> bool:
    """The PR's base and head branches as the delivery names them (a fork's head as owner:branch,
    which no branch of the repository can be a base of); whether its base changed."""
    subject = payload.get("pull_request") or {}
    base, head = subject.get("base") or {}, subject.get("head") or {}
    if not isinstance(base.get("ref"), str) or not isinstance(head.get("ref"), str):
        return False
    fork = ((head.get("repo") or {}).get("full_name") or "") != ((base.get("repo") or {}).get("full_name") or "")
    head_branch = str(head.get("label") or head["ref"]) if fork else head["ref"]
    return pull_request_branches_record(pull_request=pull_request, base_branch=base["ref"], head_branch=head_branch)


def _pull_request_delivery(payload: dict, action: str, slug: str, number: int, head_sha: str):
    pull_request = _tracked_pull_request(slug, number)
    retargeted = pull_request is not None and _branches_record(pull_request, payload)
    if action == "closed":
        try:
            return pull_request_closed_handle(payload=payload).message, None
        except EventPayloadError as error:
            raise WebhookPayloadError(str(error)) from None
    if action == "edited" and pull_request is not None and (retargeted or "base" in (payload.get("changes") or {})):
        # A new base: the stack is read again (the branches recorded above moved the generations),
        # and the head verified again as a push would, every finding kept on its code.
        run = verification_run_request(pull_request=pull_request, commit_sha=head_sha, commit_known=True)
        return (f"Retargeted {pull_request.reference} onto {pull_request.base_branch}: verifying "
                f"{head_sha[:8]} again (run {run.pk})."), run if run.created else None
    if action not in HEAD_MOVING_ACTIONS:
        return f"Ignored: action {action!r} does not move the head.", None
    if pull_request is None:
        return f"Ignored: {slug}#{number} is not tracked here.", None
    if action == "reopened":
        pull_request_state_record(pull_request=pull_request, state=PullRequest.State.OPEN)
    try:
        recorded = pull_request_record_head(pull_request=pull_request, sha=head_sha, note=f"pushed ({action})")
    except RecheckError as error:
        raise WebhookPayloadError(f"pull_request.head.sha: {error}") from None
    return recorded.describe(), recorded.run if recorded.queued else None
