"""A follow-up's issue on GitHub: whether a repository wants them, and each issue as far as Recheck knows it."""
from django.db import models

from reviews.models import Repository


class FollowUpIssueSetting(models.Model):
    """Whether a repository's follow-ups each get an issue on GitHub: opt-in, like every report."""

    repository = models.OneToOneField(Repository, on_delete=models.CASCADE, related_name="follow_up_issue_setting")
    open_issues = models.BooleanField(
        default=False, help_text="Open a GitHub issue for each follow-up, close it when it is marked fixed or closed, "
        "reopen it when its evidence comes back.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.repository} follow-up issues: {'on' if self.open_issues else 'off'}"


class FollowUpIssue(models.Model):
    """The GitHub issue of one follow-up, as far as Recheck knows it."""

    class State(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"
        # What GitHub answered when the issue was touched: deleted (404, 410) or locked (403, 422).
        DELETED = "deleted", "Deleted on GitHub"
        LOCKED = "locked", "Locked on GitHub"

    follow_up = models.OneToOneField("findings.FollowUp", on_delete=models.CASCADE, related_name="issue")
    number = models.PositiveIntegerField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    problem = models.TextField(blank=True, help_text="What GitHub answered, when the issue could not be changed.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Issue #{self.number} of {self.follow_up_id} ({self.state})"
