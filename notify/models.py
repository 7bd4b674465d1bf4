"""Outgoing webhooks: an endpoint a repository's Admin set (its URL, the kinds of event it wants,
its secrets), the messages written for it (one per kind of event per pull request per batch
window, each with its `webhook-id`), and every attempt to deliver one."""
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from findings.models import ReviewEvent
from reviews.models import PullRequest, Repository


class WebhookEndpoint(models.Model):
    class Preset(models.TextChoices):
        STANDARD = "standard", "Standard Webhooks (JSON, signed)"
        CHAT = "chat", "Chat (Slack-compatible text and blocks, signed)"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    preset = models.CharField(max_length=10, choices=Preset.choices, default=Preset.STANDARD)
    kinds = models.JSONField(default=list, help_text="The event kinds it is sent (core.vocabulary.events).")
    # whsec_<base64>, newest first: every one signs while a rotation is under way, so a receiver
    # that still holds an older secret keeps verifying.
    secrets = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    disabled_reason = models.TextField(blank=True, help_text="Why Recheck stopped sending (a 410 Gone).")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"Webhook {self.pk} of {self.repository_id}: {self.url}"


class WebhookMessageQuerySet(models.QuerySet):
    def unfinished(self):
        return self.filter(status__in=[WebhookMessage.Status.PENDING, WebhookMessage.Status.SENDING])

    def due(self, now):
        return self.unfinished().filter(due_at__lte=now)


class WebhookMessage(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Delivered"
        FAILED = "failed", "Failed"

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="messages")
    pull_request = models.ForeignKey(PullRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=40)
    # The `webhook-id` header: the same on every attempt and every resend, so a receiver drops a
    # message it has handled already.
    message_id = models.CharField(max_length=40, unique=True)
    events = models.ManyToManyField(ReviewEvent, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    due_at = models.DateTimeField(default=timezone.now)
    # Events join a message until it is first tried: the end of its batch window.
    window_ends_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    objects = WebhookMessageQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "due_at"], name="webhook_message_due"),
                   models.Index(fields=["endpoint", "pull_request", "status"], name="webhook_message_order")]
        constraints = [models.CheckConstraint(condition=Q(status__in=["pending", "sending", "sent", "failed"]),
                                              name="webhook_message_status_valid")]

    def __str__(self) -> str:
        return f"{self.kind} to endpoint {self.endpoint_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SENT, self.Status.FAILED)


class WebhookAttempt(models.Model):
    """One try at delivering a message: what the receiver answered, or why nothing was sent."""

    message = models.ForeignKey(WebhookMessage, on_delete=models.CASCADE, related_name="attempts_made")
    at = models.DateTimeField(auto_now_add=True)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The start of the receiver's answer, bounded: a receiver that answers a gigabyte is read no further.
    response_body = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"Attempt {self.pk} of message {self.message_id}: {self.response_status or self.error[:40]}"


class Subscription(models.Model):
    """A person's choice for a repository (every pull request of it) or one pull request: which
    kinds of event, and how (email, or none: muted). Without one, a person is sent the events of
    the pull requests whose findings they recorded or decided, of every kind, by email."""

    class Channel(models.TextChoices):
        EMAIL = "email", "Email"
        NONE = "none", "None (muted)"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="subscriptions")
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="+")
    pull_request = models.ForeignKey(PullRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    kinds = models.JSONField(default=list, blank=True, help_text="Empty: every kind.")
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.EMAIL)
    # Moves on each change: an unsubscribe link names the version it was made for, so it works once.
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "repository", "pull_request"], name="subscription_once",
                                    nulls_distinct=False),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.pull_request_id or self.repository_id}: {self.channel}"


class MailMessage(models.Model):
    """One email to one person about one pull request: the events of a batch window, sent once."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"
        DROPPED = "dropped", "Not sent: no longer readable, or no address"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="+")
    pull_request = models.ForeignKey(PullRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    events = models.ManyToManyField(ReviewEvent, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    due_at = models.DateTimeField(default=timezone.now)
    window_ends_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "due_at"], name="mail_message_due")]

    def __str__(self) -> str:
        return f"Mail {self.pk} to {self.user_id} ({self.status})"


class PullRequestVisit(models.Model):
    """Since you last looked: the generation of a pull request a person saw on their latest visit,
    and the one they had seen before it (what the pages mark changes since, until they mark all
    seen)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="+")
    generation = models.PositiveBigIntegerField()
    since = models.PositiveBigIntegerField(help_text="The generation changes are marked since.")
    seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "pull_request"], name="pull_request_visit_once")]

    def __str__(self) -> str:
        return f"{self.user_id} saw {self.pull_request_id} at {self.generation}"
