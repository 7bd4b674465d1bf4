"""Subscriptions, and what the events of a transaction put in each person's next email.

A person watches a repository or a pull request (`subscription_set`), choosing kinds and a channel
(email, or none). Without a subscription, they are sent the events of the pull requests whose
findings they recorded or decided. A pull request's own subscription wins over its repository's.
Every message only ever reaches someone who may read the repository, checked when the events are
written and again when the message is sent."""
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from access.audit import audit_record, writes
from access.permissions import Action, actor_check, user_may
from core.errors import RecheckError
from core.vocabulary import events as ev
from findings.models import FindingEvent
from notify.models import MailMessage, Subscription
from notify.webhooks.wake import mails_wake

UNSUBSCRIBE_SALT = "notify.unsubscribe"
UNSUBSCRIBE_DAYS = 180


class SubscriptionError(RecheckError):
    pass


@writes("subscription.set")
def subscription_set(*, actor, repository, pull_request=None, kinds=(), channel: str = Subscription.Channel.EMAIL
                     ) -> Subscription:
    """The actor's own choice for `repository` (or one of its pull requests): kinds (none: all)
    and channel. Only for a repository they may read."""
    actor_check(actor, Action.READ, repository, audit_action="subscription.set", target=repository.slug)
    if actor is None or not actor.is_authenticated:
        raise SubscriptionError("Sign in to choose what you are sent.")
    kinds = list(dict.fromkeys(kinds or []))
    unknown = sorted(set(kinds) - set(ev.EVENT_KINDS))
    if unknown:
        raise SubscriptionError(f"Unknown event kinds {', '.join(unknown)}.")
    if channel not in Subscription.Channel.values:
        raise SubscriptionError("Choose email or none.")
    if pull_request is not None and pull_request.repository_id != repository.pk:
        raise SubscriptionError("That pull request is not in this repository.")
    with transaction.atomic():
        subscription, _ = Subscription.objects.select_for_update().get_or_create(
            user=actor, repository=repository, pull_request=pull_request)
        subscription.kinds, subscription.channel = kinds, channel
        subscription.version += 1
        subscription.save()
        audit_record(action="subscription.set", actor=actor, repository=repository,
                     target=pull_request.reference if pull_request else repository.slug,
                     changes={"channel": [None, channel], "kinds": [None, kinds or "all"]})
    return subscription


def unsubscribe_token(*, user_id: int, repository_id: int, pull_request_id: int | None) -> str:
    """A signed link's token: the person, what they are sent about, and the version of their
    subscription there now (0 when they have none), so it unsubscribes once."""
    version = (Subscription.objects.filter(user_id=user_id, repository_id=repository_id,
                                           pull_request_id=pull_request_id)
               .values_list("version", flat=True).first() or 0)
    return signing.dumps({"u": user_id, "r": repository_id, "p": pull_request_id, "v": version},
                         salt=UNSUBSCRIBE_SALT, compress=True)


@writes("subscription.unsubscribe", system="the signed link vouches for the person")
def subscription_unsubscribe(*, token: str) -> Subscription:
    """Mute what `token` names (channel none). A forged, expired or already used link is refused."""
    try:
        data = signing.loads(token, salt=UNSUBSCRIBE_SALT, max_age=timedelta(days=UNSUBSCRIBE_DAYS))
    except signing.BadSignature:
        raise SubscriptionError("This unsubscribe link is not valid (or has expired): change what you are sent on "
                                "the Notifications page.") from None
    with transaction.atomic():
        subscription, _ = Subscription.objects.select_for_update().get_or_create(
            user_id=data["u"], repository_id=data["r"], pull_request_id=data["p"], defaults={"version": 0})
        if subscription.version != data["v"]:
            raise SubscriptionError("This unsubscribe link was used already, or your choice changed since: see the "
                                    "Notifications page.")
        subscription.channel = Subscription.Channel.NONE
        subscription.version += 1
        subscription.save()
        audit_record(action="subscription.unsubscribe", actor=subscription.user, repository=subscription.repository,
                     target=f"{subscription.repository.slug}" + (f"#{subscription.pull_request.number}"
                                                               if subscription.pull_request_id else ""),
                     changes={"channel": [None, Subscription.Channel.NONE]}, source="email")
    return subscription


def recipients(*, repository_id: int, pull_request_id: int | None) -> dict[int, list[str]]:
    """User id -> the kinds they are sent by email for events of this pull request (an empty list:
    every kind): its subscription, else the repository's, else the default for the people who
    recorded or decided its findings."""
    chosen: dict[int, tuple[int, str, list]] = {}
    rows = Subscription.objects.filter(repository_id=repository_id).filter(
        Q(pull_request_id=pull_request_id) | Q(pull_request__isnull=True) if pull_request_id
        else Q(pull_request__isnull=True))
    for user_id, pr_id, channel, kinds in rows.values_list("user_id", "pull_request_id", "channel", "kinds"):
        rank = 2 if pr_id else 1
        if chosen.get(user_id, (0,))[0] < rank:
            chosen[user_id] = (rank, channel, kinds)
    if pull_request_id is not None:
        involved = FindingEvent.objects.filter(finding__pull_request_id=pull_request_id, actor__isnull=False).exclude(
            kind=FindingEvent.Kind.EDITED).values_list("actor_id", flat=True).distinct()
        for user_id in involved:
            chosen.setdefault(user_id, (0, Subscription.Channel.EMAIL, []))
    return {user_id: kinds for user_id, (_, channel, kinds) in chosen.items() if channel == Subscription.Channel.EMAIL}


@writes("mail.message", system="the events' own transaction")
def mail_messages_write(*, events) -> list[MailMessage]:
    """Put `events` (of one repository, just written) in the next email of each person they are
    for: one message per person and pull request within the batch window. Inside the events'
    transaction."""
    events = list(events)
    if not events:
        return []
    repository = events[0].repository
    by_pull_request: dict = {}
    for event in events:
        by_pull_request.setdefault(event.pull_request_id, []).append(event)
    now = timezone.now()
    window = timedelta(seconds=settings.RECHECK_NOTIFY_BATCH_SECONDS)
    written = []
    for pull_request_id, grouped in by_pull_request.items():
        wanting = recipients(repository_id=repository.pk, pull_request_id=pull_request_id)
        users = get_user_model().objects.in_bulk(list(wanting))
        for user_id, kinds in wanting.items():
            user = users.get(user_id)
            wanted = [event for event in grouped if not kinds or event.kind in kinds]
            if not wanted or user is None or not user.is_active or not user.email \
                    or not user_may(user, Action.READ, repository):
                continue
            message = (MailMessage.objects.filter(user_id=user_id, pull_request_id=pull_request_id,
                                                  status=MailMessage.Status.PENDING, attempts=0,
                                                  window_ends_at__gt=now).order_by("-id").first())
            if message is None:
                message = MailMessage.objects.create(user_id=user_id, repository=repository,
                                                     pull_request_id=pull_request_id, due_at=now + window,
                                                     window_ends_at=now + window)
                written.append(message)
            message.events.add(*wanted)
    mails_wake(written)
    return written
