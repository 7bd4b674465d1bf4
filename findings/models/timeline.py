"""A pull request's timeline: what changed in its review, one row an event, only ever added to.

Most events are the difference between two stored states of the pull request, written in the
transaction that stores the newer one (`findings.state.timeline`); a run that failed and a
follow-up that moved are written where they happen. `TimelineMark` is how far a pull request's
events go: the generation and the compact state its last events were derived up to, locked while
the next difference is taken, so the same change derived twice gives one event."""
from django.conf import settings
from django.db import models

from core.vocabulary import events as ev
from reviews.models import PullRequest, Repository

KIND_CHOICES = [(kind, label) for kind, label in ev.EVENT_KIND_LABELS.items()]
CAUSE_CHOICES = [(cause, label) for cause, label in ev.CAUSE_LABELS.items()]


class ReviewEventQuerySet(models.QuerySet):
    def for_pull_request(self, pull_request_id: int):
        return self.filter(pull_request_id=pull_request_id)

    def since_generation(self, generation: int):
        """The events of states stored after `generation` (and the runs and follow-ups since)."""
        return self.filter(generation__gt=generation)


class ReviewEvent(models.Model):
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="review_events")
    # Null for a follow-up's events that belong to the repository's default branch, not to a PR.
    pull_request = models.ForeignKey(
        PullRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="review_events"
    )
    # The PR's generation whose state the event was derived into (for a run's or follow-up's
    # event, the PR's generation when it was written): "since my last visit" compares with it.
    generation = models.PositiveBigIntegerField(default=0)
    kind = models.CharField(max_length=40, choices=KIND_CHOICES)
    cause = models.CharField(max_length=10, choices=CAUSE_CHOICES, default=ev.CAUSE_RECHECK)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    finding_id = models.BigIntegerField(null=True, blank=True, help_text="The finding it is about, if any.")
    finding_number = models.PositiveIntegerField(null=True, blank=True)
    sha = models.CharField(max_length=40, blank=True, help_text="The commit it happened at, if any.")
    # What changed (`from` and `to`) and the finding's or gate's state after it: the documented
    # payload (docs/using/notifications.md), the same on every channel.
    payload = models.JSONField(default=dict)
    # What makes the event one: the same change derived or reported twice has the same key.
    key = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = ReviewEventQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["repository", "key"], name="review_event_once"),
        ]
        indexes = [
            models.Index(fields=["pull_request", "id"], name="review_event_pr"),
            models.Index(fields=["repository", "id"], name="review_event_repository"),
        ]

    def __str__(self) -> str:
        return f"{ev.event_kind_label(self.kind)} ({self.pk})"


class TimelineMark(models.Model):
    pull_request = models.OneToOneField(PullRequest, on_delete=models.CASCADE, primary_key=True,
                                        related_name="timeline_mark")
    generation = models.PositiveBigIntegerField()
    # `findings.state.timeline.snapshot` of the state at `generation`: the base of the next events.
    # None for a pull request reviewed before the timeline existed: its next state is its baseline,
    # stored here with no events (migration 0024).
    snapshot = models.JSONField(null=True)

    def __str__(self) -> str:
        return f"Timeline of {self.pull_request_id} up to generation {self.generation}"
