"""The outbox: what Recheck sends to a forge, one `ForgeCall` per outgoing call (a check run,
status, comment or note, a follow-up's issue, a review thread's reply or resolution), kept with its
attempts and the forge's last answer, so a failure can be shown to a person and a retried task does
not post twice. The row names the forge that sends it."""
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.forges import DEFAULT_FORGE, FORGE_CHOICES
from reviews.models import PullRequest, Repository


class ForgeCallQuerySet(models.QuerySet):
    def for_target(self, call: "ForgeCall"):
        """The calls that post to the same thing on the forge as `call`: a check run or status is per
        commit, the comment is per pull request."""
        rows = self.filter(repository_id=call.repository_id, kind=call.kind)
        if call.kind == ForgeCall.Kind.ISSUE:
            return rows.filter(body__follow_up=call.body.get("follow_up"))
        if call.kind == ForgeCall.Kind.COMMENT:
            return rows.filter(pull_request_id=call.pull_request_id)
        if call.kind in ForgeCall.THREAD_KINDS:
            return rows.filter(review_thread_id=call.review_thread_id)
        return rows.filter(sha=call.sha)

    def unfinished(self):
        return self.filter(status__in=[ForgeCall.Status.PENDING, ForgeCall.Status.SENDING])

    def due(self, now):
        """Calls to send now: pending ones whose time has come, and ones claimed by a sender that
        stopped before it finished (its lease, the due time it set when claiming, ran out)."""
        return self.unfinished().filter(due_at__lte=now)

    def failed(self):
        return self.filter(status=ForgeCall.Status.FAILED)


class ForgeCall(models.Model):
    class Kind(models.TextChoices):
        CHECK_RUN = "check_run", "Check run"
        COMMIT_STATUS = "commit_status", "Commit status"
        COMMENT = "comment", "Pull request comment"
        # Building a report failed (a database error): preparing it again is the call.
        REPORT = "report", "Report to prepare"
        # A follow-up's issue: opened, closed with a comment, or reopened (forge.follow_up_issues.services).
        ISSUE = "issue", "Follow-up issue"
        # A review thread's verdict reply (created, then edited in place), and resolving it.
        THREAD_REPLY = "thread_reply", "Review thread reply"
        THREAD_RESOLVE = "thread_resolve", "Review thread resolution"

    THREAD_KINDS = (Kind.THREAD_REPLY, Kind.THREAD_RESOLVE)

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="forge_calls")
    # Null for a merge group's commit, which belongs to the queue rather than to one pull request.
    pull_request = models.ForeignKey(
        PullRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="forge_calls"
    )
    # The thread a reply or a resolution is about (null for the other kinds).
    review_thread = models.ForeignKey(
        "reporting.ReviewThread", null=True, blank=True, on_delete=models.CASCADE, related_name="forge_calls"
    )
    # The forge the call was written for (its repository's when it was written): the forge that
    # sends it, and whose rate limit holds it back; a repository moved to another forge since does
    # not send an old call to the new one.
    forge = models.CharField(max_length=20, choices=FORGE_CHOICES, default=DEFAULT_FORGE)
    sha = models.CharField(max_length=40)
    kind = models.CharField(max_length=15, choices=Kind.choices)
    state = models.CharField(max_length=40, help_text="What is reported, e.g. in_progress or completed: failure.")
    digest = models.CharField(max_length=64, help_text="Of the whole report: the same report is not posted twice.")
    body = models.JSONField(help_text="The request body, as the forge's API has it.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_message = models.TextField(blank=True, help_text="The forge's own message, from its last answer.")
    hint = models.TextField(blank=True, help_text="What to fix, when the call failed.")
    github_id = models.BigIntegerField(
        null=True, blank=True, help_text="The check run, status or comment (GitLab: note) on the forge."
    )
    due_at = models.DateTimeField(
        default=timezone.now,
        help_text="Not sent before this time: a retry's backoff, GitHub's Retry-After, or a sender's lease.",
    )
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ForgeCallQuerySet.as_manager()

    class Meta:
        # The table, its indexes and its constraints keep the names they had when every call went to
        # GitHub (GitHubCall): renaming them would rewrite the outbox's table for no one's benefit.
        db_table = "reporting_githubcall"
        verbose_name = "forge call"
        ordering = ["-id"]
        permissions = [("resend_forgecall", "Can send a failed forge call again")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["check_run", "commit_status", "comment", "report", "issue", "thread_reply",
                                      "thread_resolve"]),
                name="github_call_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "sending", "sent", "failed"]), name="github_call_status_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["repository", "kind", "sha"], name="github_call_target"),
            models.Index(fields=["pull_request", "status"], name="github_call_pr_status"),
            models.Index(fields=["status", "due_at"], name="github_call_due"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.state} on {self.sha[:8]} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SENT, self.Status.FAILED)
