"""The companion pages of a pull request, stored as they were rendered."""
from django.db import models

from reviews.models import Commit, PullRequest


class CompanionPages(models.Model):
    """The three companion pages of a pull request, rendered as self-contained HTML."""

    pull_request = models.OneToOneField(PullRequest, on_delete=models.CASCADE, related_name="companion")
    commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    rendered_at = models.DateTimeField()
    index_html = models.TextField()
    blockers_html = models.TextField()
    cleanups_html = models.TextField()
    generation = models.PositiveBigIntegerField(
        default=0, help_text="The pull request's generation the pages were rendered at: they are current while it is."
    )

    class Meta:
        verbose_name_plural = "companion pages"

    def __str__(self) -> str:
        return f"Companion pages of {self.pull_request}"
