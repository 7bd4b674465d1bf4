"""What Recheck sends to GitHub: one row per outgoing call, kept with its attempts and GitHub's
last answer, so a failure can be shown to a person and a retried task does not post twice."""
from django.db import models
from django.db.models import Q

from reviews.models import PullRequest, Repository


class GitHubCallQuerySet(models.QuerySet):
    def for_target(self, call: "GitHubCall"):
        """The calls that post to the same thing on GitHub as `call`: a check run or status is per
        commit, the comment is per pull request."""
        rows = self.filter(repository_id=call.repository_id, kind=call.kind)
        if call.kind == GitHubCall.Kind.COMMENT:
            return rows.filter(pull_request_id=call.pull_request_id)
        return rows.filter(sha=call.sha)

    def unfinished(self):
        return self.filter(status__in=[GitHubCall.Status.PENDING, GitHubCall.Status.SENDING])

    def failed(self):
        return self.filter(status=GitHubCall.Status.FAILED)


class GitHubCall(models.Model):
    class Kind(models.TextChoices):
        CHECK_RUN = "check_run", "Check run"
        COMMIT_STATUS = "commit_status", "Commit status"
        COMMENT = "comment", "Pull request comment"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="github_calls")
    # Null for a merge group's commit, which belongs to the queue rather than to one pull request.
    pull_request = models.ForeignKey(
        PullRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="github_calls"
    )
    sha = models.CharField(max_length=40)
    kind = models.CharField(max_length=15, choices=Kind.choices)
    state = models.CharField(max_length=40, help_text="What is reported, e.g. in_progress or completed: failure.")
    # One report can take several calls (a check run's annotations go 50 to a request).
    part = models.PositiveIntegerField(default=1)
    parts = models.PositiveIntegerField(default=1)
    digest = models.CharField(max_length=64, help_text="Of the whole report: the same report is not posted twice.")
    body = models.JSONField(help_text="The request body, as GitHub's schema has it.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_message = models.TextField(blank=True, help_text="GitHub's own message, from its last answer.")
    hint = models.TextField(blank=True, help_text="What to fix, when the call failed.")
    github_id = models.BigIntegerField(null=True, blank=True, help_text="The check run or comment on GitHub.")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = GitHubCallQuerySet.as_manager()

    class Meta:
        verbose_name = "GitHub call"
        ordering = ["-id"]
        permissions = [("resend_githubcall", "Can send a failed GitHub call again")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["check_run", "commit_status", "comment"]), name="github_call_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "sending", "sent", "failed"]), name="github_call_status_valid"
            ),
            models.CheckConstraint(condition=Q(part__gte=1) & Q(part__lte=models.F("parts")), name="github_call_part"),
        ]
        indexes = [
            models.Index(fields=["repository", "kind", "sha"], name="github_call_target"),
            models.Index(fields=["pull_request", "status"], name="github_call_pr_status"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.state} on {self.sha[:8]} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SENT, self.Status.FAILED)
