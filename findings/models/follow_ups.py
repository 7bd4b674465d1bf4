"""Follow-ups: what a merged pull request left to do (its open cleanups, and the blockers
dismissed or fixed anyway), checked again at the head of the repository's default branch until
a person marks it fixed or closes it with a reason; each check there, and its history."""
from django.conf import settings
from django.db import models
from django.db.models import F, Q

from core import vocabulary as v
from findings.models.findings import Finding
from findings.models.querysets import ChangesPullRequestQuerySet, _readable
from reviews.models import Commit, PullRequest, Repository


class FollowUpQuerySet(ChangesPullRequestQuerySet):
    # A follow-up shows on its repository's pages, kept by its pull requests' generations: a bulk
    # write moves its PR's as a save does (`findings.receivers`).
    def readable_by(self, user):
        """The follow-ups of repositories `user` may read."""
        return _readable(self, user, "repository")

    def for_repository(self, repository):
        return self.filter(repository=repository)

    def unclosed(self):
        """Open, or verified fixed and waiting for a person: what a CI job may warn about."""
        return self.filter(state__in=[FollowUp.State.OPEN, FollowUp.State.VERIFIED_FIXED])

    def still_due(self):
        """What a due date still holds for: open, verified fixed and waiting for a person, or
        marked fixed with its evidence back (flagged regressed)."""
        return self.filter(Q(state__in=[FollowUp.State.OPEN, FollowUp.State.VERIFIED_FIXED])
                           | Q(state=FollowUp.State.FIXED, regressed=True))

    def overdue(self, now):
        """Still due, and past its due date at `now`."""
        return self.still_due().filter(due_at__lte=now)

    def by_due_date(self):
        """The soonest due first; those without a due date last, newest first."""
        return self.order_by(F("due_at").asc(nulls_last=True), "-opened_at", "-id")

    def checked_on_the_default_branch(self):
        """What each push to the default branch checks again: all but those a person closed with
        a reason (one marked fixed is still checked, so a regression is seen)."""
        return self.exclude(state=FollowUp.State.CLOSED)

    def with_origin(self):
        return self.select_related(
            "finding__pull_request__repository", "pull_request__repository", "repository", "merge_commit", "checked_commit", "fixed_commit", "decided_by",
        )


class FollowUp(models.Model):
    """One finding of a merged pull request that is still to do on the default branch."""

    class State(models.TextChoices):
        OPEN = v.FOLLOW_UP_OPEN, v.FOLLOW_UP_LABELS[v.FOLLOW_UP_OPEN]
        VERIFIED_FIXED = v.FOLLOW_UP_VERIFIED_FIXED, v.FOLLOW_UP_LABELS[v.FOLLOW_UP_VERIFIED_FIXED]
        FIXED = v.FOLLOW_UP_FIXED, v.FOLLOW_UP_LABELS[v.FOLLOW_UP_FIXED]
        CLOSED = v.FOLLOW_UP_CLOSED, v.FOLLOW_UP_LABELS[v.FOLLOW_UP_CLOSED]

    class Origin(models.TextChoices):
        OPEN_CLEANUP = v.ORIGIN_OPEN_CLEANUP, v.FOLLOW_UP_ORIGIN_LABELS[v.ORIGIN_OPEN_CLEANUP]
        OPEN_BLOCKER = v.ORIGIN_OPEN_BLOCKER, v.FOLLOW_UP_ORIGIN_LABELS[v.ORIGIN_OPEN_BLOCKER]
        DISMISSED_BLOCKER = v.ORIGIN_DISMISSED_BLOCKER, v.FOLLOW_UP_ORIGIN_LABELS[v.ORIGIN_DISMISSED_BLOCKER]
        FIXED_ANYWAY = v.ORIGIN_FIXED_ANYWAY, v.FOLLOW_UP_ORIGIN_LABELS[v.ORIGIN_FIXED_ANYWAY]

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="follow_ups")
    # A finding is followed up once, whatever number of merge events name its pull request.
    finding = models.OneToOneField(Finding, on_delete=models.CASCADE, related_name="follow_up")
    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="follow_ups")
    origin = models.CharField(max_length=20, choices=Origin.choices)
    merge_commit = models.ForeignKey(
        Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The commit the pull request merged as: where its evidence lives on the default branch.",
    )
    opened_at = models.DateTimeField(auto_now_add=True)
    # When it is due, by the repository's policy for its kind (`findings.services.policy`): set
    # when it opens, again when a regression restarts the clock; None for one opened before.
    due_at = models.DateTimeField(null=True, blank=True, help_text="When it is due; empty: no due date.")
    state = models.CharField(max_length=20, choices=State.choices, default=State.OPEN)
    # The latest check at the default branch's head.
    verdict = models.CharField(max_length=15, blank=True, help_text="At the default branch's head; '' before any check.")
    verdict_detail = models.TextField(blank=True)
    checked_commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    checked_branch = models.CharField(max_length=200, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    # Where each evidence item is at that head: [{"evidence": id, "state", "location", "last_seen", "detail"}].
    places = models.JSONField(default=list, blank=True)
    # Where verification first found it fixed (then the commit it was marked fixed at).
    fixed_commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # A person's decision: marked fixed, or closed with a reason.
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    # Marked fixed, and its evidence holds again on the default branch: flagged, never reopened.
    regressed = models.BooleanField(default=False)

    objects = FollowUpQuerySet.as_manager()

    class Meta:
        ordering = ["repository_id", "-opened_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=list(v.FOLLOW_UP_STATES)), name="follow_up_state_valid"
            ),
            models.CheckConstraint(
                condition=Q(origin__in=list(v.FOLLOW_UP_ORIGIN_LABELS)), name="follow_up_origin_valid"
            ),
            # What a person decided says who and when; an open or verified one carries no decision.
            models.CheckConstraint(
                condition=(Q(state__in=["fixed", "closed"]) & Q(decided_at__isnull=False))
                | (Q(state__in=["open", "verified_fixed"]) & Q(decided_at__isnull=True)),
                name="follow_up_decision_matches_state",
            ),
        ]
        indexes = [models.Index(fields=["repository", "state", "opened_at"], name="follow_up_repo_state")]

    def __str__(self) -> str:
        return f"Follow-up of {self.finding.reference}"

    def get_absolute_url(self) -> str:
        # A follow-up is shown, with its history, on its finding's page.
        return f"{self.finding.get_absolute_url()}#follow-up"


class FollowUpEvent(models.Model):
    """One step of a follow-up's life after the merge, only ever added to: opened with the merge,
    a check at the default branch that changed its state, a person's mark or close."""

    class Kind(models.TextChoices):
        MERGED = "merged", "Merged with its pull request"
        VERIFIED = "verified", "Checked on the default branch"
        MARKED_FIXED = "marked_fixed", "Marked fixed"
        CLOSED = "closed", "Closed"
        REGRESSED = "regressed", "Evidence back on the default branch"

    follow_up = models.ForeignKey(FollowUp, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=15, choices=Kind.choices)
    from_state = models.CharField(max_length=20, blank=True)
    to_state = models.CharField(max_length=20)
    verdict = models.CharField(max_length=15, blank=True)
    commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    note = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["follow_up_id", "at", "id"]

    def __str__(self) -> str:
        return f"{self.follow_up}: {self.kind} -> {self.to_state}"


class FollowUpSweep(models.Model):
    """A check of a repository's follow-ups at its default branch's head, asked for by a push, a
    merge or beat. The row is the claim: one worker moves it from queued to running with a
    conditional update, so a duplicated message checks nothing twice."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="follow_up_sweeps")
    # The head a push named; '' when the sweep reads the branch's head after fetching (beat, a merge).
    sha = models.CharField(max_length=40, blank=True)
    reason = models.CharField(max_length=20)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One waiting sweep per repository and head: a push delivered twice, or beat beside a
            # push, queues one.
            models.UniqueConstraint(
                fields=["repository", "sha"], condition=Q(status="queued"), name="follow_up_sweep_queued_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.repository} follow-ups at {self.sha[:8] or 'head'} ({self.status})"
