"""A pull request's review threads as Recheck holds them: its inbox.

One `ReviewThread` per thread on the forge, keyed by the forge's id of the thread's first comment
(GitHub answers every reply with `in_reply_to_id` naming that first comment, so the key never
changes while the thread lives), with its comments (`ReviewComment`, keyed by their own ids) and
what a Reviewer made of it: a new finding, an existing one it is attached to, or not a finding.
What could not be done with a thread (its file is not in the mirror, its lines are beyond the
file, its first comment was deleted) is its `problem`, shown beside its state, never lost."""
from django.conf import settings
from django.db import models
from django.db.models import Q

from core import vocabulary as v
from findings.models.querysets import ChangesPullRequestQuerySet
from reviews.models import PullRequest, Repository


class ReviewThreadQuerySet(ChangesPullRequestQuerySet):
    # A thread shows on its PR's inbox page, kept by the PR's generation: a bulk write (the sync's
    # and the replies' `update`) moves it as a save does (`forge.receivers`).
    def of(self, pull_request):
        return self.filter(pull_request=pull_request)

    def with_comments(self):
        """With the finding and the comments, in order (two queries for a whole inbox)."""
        return self.select_related("finding", "triaged_by").prefetch_related(
            models.Prefetch("comments", queryset=ReviewComment.objects.order_by("created_at", "github_id"))
        )


class ReviewThread(models.Model):
    class State(models.TextChoices):
        NEW = v.THREAD_NEW, v.THREAD_STATE_LABELS[v.THREAD_NEW]
        FINDING = v.THREAD_FINDING, v.THREAD_STATE_LABELS[v.THREAD_FINDING]
        ATTACHED = v.THREAD_ATTACHED, v.THREAD_STATE_LABELS[v.THREAD_ATTACHED]
        NOT_A_FINDING = v.THREAD_NOT_A_FINDING, v.THREAD_STATE_LABELS[v.THREAD_NOT_A_FINDING]

    class Problem(models.TextChoices):
        NONE = "", "None"
        FIRST_DELETED = v.THREAD_FIRST_DELETED, v.THREAD_PROBLEM_LABELS[v.THREAD_FIRST_DELETED]
        COMMIT_NOT_IN_MIRROR = v.THREAD_COMMIT_MISSING, v.THREAD_PROBLEM_LABELS[v.THREAD_COMMIT_MISSING]
        FILE_NOT_IN_MIRROR = v.THREAD_FILE_MISSING, v.THREAD_PROBLEM_LABELS[v.THREAD_FILE_MISSING]
        LINE_BEYOND_FILE = v.THREAD_LINE_BEYOND, v.THREAD_PROBLEM_LABELS[v.THREAD_LINE_BEYOND]
        BINARY_FILE = v.THREAD_BINARY, v.THREAD_PROBLEM_LABELS[v.THREAD_BINARY]

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="review_threads")
    root_comment_id = models.BigIntegerField(help_text="The forge's id of the thread's first comment.")
    node_id = models.CharField(max_length=100, blank=True, help_text="The thread's GraphQL id, once known.")
    html_url = models.URLField(max_length=500, blank=True)
    path = models.CharField(max_length=500, blank=True)
    side = models.CharField(max_length=5, blank=True, help_text="RIGHT (the new code) or LEFT (the old).")
    subject_type = models.CharField(max_length=10, blank=True, help_text="line, or file for a file's comment.")
    original_commit_id = models.CharField(max_length=40, blank=True)
    original_start_line = models.PositiveIntegerField(null=True, blank=True)
    original_line = models.PositiveIntegerField(null=True, blank=True)
    commit_id = models.CharField(max_length=40, blank=True)
    line = models.PositiveIntegerField(null=True, blank=True)
    diff_hunk = models.TextField(blank=True)
    author_login = models.CharField(max_length=100, blank=True)
    resolved = models.BooleanField(default=False, help_text="Resolved on the forge, as it last said.")
    state = models.CharField(max_length=15, choices=State.choices, default=State.NEW)
    problem = models.CharField(max_length=20, choices=Problem.choices, blank=True, default="")
    problem_detail = models.TextField(blank=True)
    placement = models.TextField(blank=True, help_text="How the finding's evidence was taken from the comment.")
    finding = models.ForeignKey(
        "findings.Finding", null=True, blank=True, on_delete=models.SET_NULL, related_name="review_threads"
    )
    triaged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    triaged_at = models.DateTimeField(null=True, blank=True)
    # Recheck's own reply with the finding's verdict: edited in place, never a second one.
    reply_comment_id = models.BigIntegerField(null=True, blank=True)
    reply_body = models.TextField(blank=True, help_text="What the reply says (or will say once sent).")
    reply_state = models.CharField(max_length=700, blank=True, help_text="The verdict and place the reply is about.")
    # What Recheck last asked of the forge: resolved (True), unresolved (False) or nothing (None).
    resolve_wanted = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ReviewThreadQuerySet.as_manager()

    class Meta:
        ordering = ["pull_request_id", "root_comment_id"]
        constraints = [
            models.UniqueConstraint(fields=["pull_request", "root_comment_id"], name="review_thread_once"),
            models.CheckConstraint(condition=Q(state__in=list(v.THREAD_STATES)), name="review_thread_state_valid"),
            models.CheckConstraint(
                condition=Q(finding__isnull=False) | ~Q(state__in=[v.THREAD_FINDING, v.THREAD_ATTACHED]),
                name="review_thread_triaged_has_finding",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pull_request} thread {self.root_comment_id}"

    @property
    def where(self) -> str:
        """Where the comment was written: `path:40–42`, as every place is written."""
        return v.location(self.path, self.original_start_line or self.original_line, self.original_line)

    @property
    def is_triaged(self) -> bool:
        return self.state != self.State.NEW

    @property
    def first_comment(self):
        return next((comment for comment in self.comments.all() if comment.github_id == self.root_comment_id), None)

    @property
    def replies(self):
        return [comment for comment in self.comments.all() if comment.github_id != self.root_comment_id]


class ReviewCommentQuerySet(ChangesPullRequestQuerySet):
    pull_request_field = "thread__pull_request_id"

    def _pull_request_ids_of(self, objs) -> set[int]:
        thread_ids = {obj.thread_id for obj in objs}
        return set(ReviewThread.objects.filter(pk__in=thread_ids).values_list("pull_request_id", flat=True))


class ReviewComment(models.Model):
    thread = models.ForeignKey(ReviewThread, on_delete=models.CASCADE, related_name="comments")
    github_id = models.BigIntegerField(unique=True, help_text="The forge's id of the comment.")
    in_reply_to_id = models.BigIntegerField(null=True, blank=True)
    author_login = models.CharField(max_length=100, blank=True)
    author_id = models.BigIntegerField(null=True, blank=True, help_text="The forge's id of its author.")
    body = models.TextField(blank=True, help_text="Markdown, as written on the forge (sanitised when shown).")
    html_url = models.URLField(max_length=500, blank=True)
    created_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)
    deleted = models.BooleanField(default=False, help_text="Gone from the forge; kept so nothing is lost.")
    by_recheck = models.BooleanField(default=False, help_text="Recheck's own reply.")
    # A `/recheck` command is acted on once, however often the comment is synced.
    command_handled = models.BooleanField(default=False)

    objects = ReviewCommentQuerySet.as_manager()

    class Meta:
        ordering = ["thread_id", "created_at", "github_id"]

    def __str__(self) -> str:
        return f"comment {self.github_id} by {self.author_login}"


class ThreadSettings(models.Model):
    """What Recheck says on a repository's review threads: beside `Repository.publish_checks`,
    kept here so the forge's threads need no change to the repositories' table."""

    repository = models.OneToOneField(Repository, on_delete=models.CASCADE, related_name="thread_settings")
    publish_verdicts = models.BooleanField(
        default=False, help_text="Reply on each triaged thread with its finding's verdict after each verification.")
    resolve_when_verified = models.BooleanField(
        default=False, help_text="Resolve a thread once its finding is verified fixed, not only when marked fixed.")

    class Meta:
        verbose_name_plural = "thread settings"

    def __str__(self) -> str:
        return f"thread settings of {self.repository}"


class ThreadSync(models.Model):
    """How the last reading of a pull request's threads went, for its inbox page."""

    class Status(models.TextChoices):
        NEVER = "never", "Not read yet"
        OK = "ok", "Read"
        FAILED = "failed", "Reading failed"

    pull_request = models.OneToOneField(PullRequest, on_delete=models.CASCADE, related_name="thread_sync")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.NEVER)
    message = models.TextField(blank=True, help_text="The forge's own message, when reading failed.")
    response_status = models.PositiveIntegerField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True, help_text="When reading last succeeded.")
    tried_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"threads of {self.pull_request}: {self.status}"
