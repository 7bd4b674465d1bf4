"""What was reviewed: repositories, their pull requests and the commits pinned to them."""
import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

from core import forges
from core.forges import SLUG_MAX_LENGTH, SLUG_RE
SHA_RE = r"^[0-9a-f]{7,40}$"
FULL_SHA_RE = r"^[0-9a-f]{40}$"

slug_validator = RegexValidator(
    SLUG_RE, "Use the form owner/name, or group/subgroup/name on GitLab (letters, digits, '.', '_' and '-')."
)
sha_validator = RegexValidator(
    SHA_RE, "A commit SHA is 7 to 40 lowercase hexadecimal digits (the full SHA or an abbreviation)."
)


class RepositoryQuerySet(models.QuerySet):
    def readable_by(self, user):
        """The repositories `user` may read (access.permissions decides): a private repository
        without a role is not among them, as if it did not exist."""
        from access.permissions import readable_rows

        return readable_rows(self, user)


class Repository(models.Model):
    class Visibility(models.TextChoices):
        PUBLIC = "public", "Public"
        PRIVATE = "private", "Private"

    slug = models.CharField(max_length=SLUG_MAX_LENGTH, unique=True, validators=[slug_validator],
                            help_text="owner/name; on GitLab group/subgroup/name")
    forge = models.CharField(max_length=20, choices=forges.FORGE_CHOICES, default=forges.DEFAULT_FORGE,
                             help_text="The forge the repository lives on: its webhooks, reports and links.")
    forge_url = models.URLField(
        blank=True, help_text="A self-managed forge's address (GitLab, GitHub Enterprise); empty: gitlab.com or "
        "github.com.",
    )
    clone_url = models.CharField(
        max_length=500, help_text="https:// or ssh URL (a local path only where local repositories are allowed)."
    )
    web_url = models.URLField(blank=True, help_text="Base of permalinks, e.g. https://github.com/owner/name")
    # GitLab's project id, from its webhooks: API calls name the project by it, so a project moved
    # or renamed on GitLab is still reached (and its new path said on the delivery's outcome).
    forge_project_id = models.BigIntegerField(
        null=True, blank=True, help_text="The project's id on GitLab, remembered from its webhooks."
    )
    default_branch = models.CharField(max_length=200, default="main")
    fetched_at = models.DateTimeField(null=True, blank=True)
    fetch_error = models.TextField(blank=True)
    # Reporting back to GitHub is opt-in per repository: a review of someone else's repository
    # must not start posting on it because the server happens to have credentials.
    publish_checks = models.BooleanField(
        default=False,
        help_text="Report each verified head to GitHub: a \"Recheck\" check run with a GitHub App, or a "
        "\"recheck\" commit status with only a token (tokens cannot create check runs).",
    )
    publish_comment = models.BooleanField(
        default=False, help_text="Keep one Recheck comment on the pull request up to date after each verification."
    )
    github_installation_id = models.BigIntegerField(
        null=True, blank=True, help_text="The GitHub App's installation on this repository; looked up when unknown."
    )
    # Public: read as the server reads (RECHECK_PUBLIC_READ, or any signed-in user). Private:
    # only by whoever holds a role on it (a membership, or an instance-wide role); to everyone else
    # the repository and everything in it does not exist.
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC,
        help_text="Private: only users with a role on this repository (a membership, or an instance-wide role) "
        "see it or anything in it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RepositoryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "repositories"
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(condition=Q(slug__regex=SLUG_RE), name="repository_slug_owner_name"),
            models.CheckConstraint(condition=Q(forge__in=forges.FORGE_NAMES), name="repository_forge_known"),
        ]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        super().clean()
        problem = forges.slug_problem(self.slug, self.forge)
        if problem:
            raise ValidationError({"slug": f"{problem[0].upper()}{problem[1:]}."})

    @property
    def owner(self) -> str:
        """Everything before the name: the owner, or on GitLab the group and its subgroups."""
        return forges.split_slug(self.slug)[0]

    @property
    def name(self) -> str:
        return forges.split_slug(self.slug)[1]

    @property
    def forge_words(self) -> forges.ForgeWords:
        return forges.forge_words(self.forge)

    @property
    def forge_base_url(self) -> str:
        """Where the forge is: the repository's own server, else gitlab.com or github.com."""
        return (self.forge_url or self.forge_words.default_url).rstrip("/")

    def permalink(self, sha: str, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Link to `path` at `sha` on the forge, as the forge spells it; empty when no web URL is known."""
        return forges.permalink(self.forge, self.web_url, sha, path, start_line, end_line)

    def tree_link(self, sha: str, path: str) -> str:
        return forges.tree_link(self.forge, self.web_url, sha, path)

    def commit_link(self, sha: str) -> str:
        return forges.commit_link(self.forge, self.web_url, sha)

    @property
    def is_public(self) -> bool:
        return self.visibility == self.Visibility.PUBLIC

    def get_absolute_url(self) -> str:
        return f"/{self.slug}/"


class PullRequestQuerySet(models.QuerySet):
    def readable_by(self, user):
        """The pull requests of the repositories `user` may read."""
        from access.permissions import readable_rows

        return readable_rows(self, user, "repository")

    def open(self):
        return self.filter(state=PullRequest.State.OPEN)

    def by_reference(self, slug: str, number: int):
        return self.filter(repository__slug=slug, number=number)


class PullRequest(models.Model):
    class State(models.TextChoices):
        OPEN = "open", "Open"
        MERGED = "merged", "Merged"
        CLOSED = "closed", "Closed"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="pull_requests")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=500)
    url = models.URLField(blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    before = models.TextField(blank=True, help_text="Markdown: what was there before this PR.")
    change = models.TextField(blank=True, help_text="Markdown: what this PR adds or changes.")
    status_note = models.TextField(blank=True, help_text="Markdown: a short status written by the reviewer.")
    # The review's own framing, as the reviewer wrote it: how it opens and closes ("What to do with
    # this"), and the counts it gives of things Recheck does not hold as findings.
    opening = models.TextField(blank=True, help_text="Markdown: how the review opens.")
    closing = models.TextField(blank=True, help_text="Markdown: how the review closes, e.g. what to do with it.")
    comments_left = models.PositiveIntegerField(
        null=True, blank=True, help_text="How many comments the review left on the PR, as the reviewer counts them."
    )
    cleanups_not_recorded = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cleanups the review counts but does not describe, so not recorded here."
    )
    # A reviewer's own check, shown as theirs (who, when, at which commit), apart from the verdicts.
    attestation = models.TextField(blank=True, help_text="Markdown: the reviewer's own check, in their words.")
    attested_by = models.CharField(max_length=200, blank=True, help_text="Who made the reviewer's check.")
    attested_at = models.DateTimeField(null=True, blank=True, help_text="When the reviewer's check was made.")
    attested_commit = models.ForeignKey(
        "Commit", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The commit the reviewer checked.",
    )
    # The branches as the forge names them: a PR whose base branch is the head branch of another
    # open PR of the repository is stacked on it (`reviews.stack`). Empty: not known. A fork's head
    # is recorded as owner:branch, which no base branch of the repository can be.
    base_branch = models.CharField(max_length=255, blank=True, help_text="The branch the PR merges into.")
    head_branch = models.CharField(max_length=255, blank=True, help_text="The branch the PR merges from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    generation = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text="Counts the changes to what its pages and its merge gate show; answers are cached by it.",
    )

    objects = PullRequestQuerySet.as_manager()

    class Meta:
        ordering = ["repository__slug", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["repository", "number"], name="pull_request_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="pull_request_number_positive"),
        ]
        # The stack is walked by branch: the PR below by its head, those above by their base.
        indexes = [
            models.Index(fields=["repository", "head_branch"], name="pull_request_head_branch"),
            models.Index(fields=["repository", "base_branch"], name="pull_request_base_branch"),
        ]

    def __str__(self) -> str:
        return f"{self.repository.slug}#{self.number}"

    def save(self, *args, **kwargs):
        # The generation only ever moves forward, by `pull_request_changed`: a PR loaded before a
        # change and saved after it must not write the older generation back, or answers cached
        # under that generation would be served again.
        if self.pk is not None and not kwargs.get("force_insert") and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                field.name for field in self._meta.concrete_fields if not field.primary_key and field.name != "generation"
            ]
        super().save(*args, **kwargs)

    @property
    def reference(self) -> str:
        return f"{self.repository.slug}#{self.number}"

    def get_absolute_url(self) -> str:
        return f"/{self.repository.slug}/pull/{self.number}/"


class CommitQuerySet(models.QuerySet):
    def unresolved(self):
        return self.filter(resolved=False)

    def update(self, **kwargs):
        # A commit's SHA shows on every page of its repository's pull requests (a fetch resolves
        # abbreviations with an update, which sends no signal): move their generations forward.
        repositories = set(self.order_by().values_list("repository_id", flat=True).distinct())
        count = super().update(**kwargs)
        PullRequest.objects.filter(repository_id__in=repositories).update(generation=models.F("generation") + 1)
        return count


class Commit(models.Model):
    """A commit of a repository. A SHA may be recorded abbreviated (as a reviewer wrote it) and
    stays unresolved until a fetched mirror maps it to exactly one full SHA."""

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="commits")
    sha = models.CharField(max_length=40, validators=[sha_validator])
    resolved = models.BooleanField(default=False)
    message = models.TextField(blank=True)
    author = models.CharField(max_length=300, blank=True)
    committed_at = models.DateTimeField(null=True, blank=True)

    objects = CommitQuerySet.as_manager()

    class Meta:
        ordering = ["repository_id", "committed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["repository", "sha"], name="commit_sha_unique_per_repository"),
            models.CheckConstraint(condition=Q(sha__regex=SHA_RE), name="commit_sha_hex"),
            models.CheckConstraint(
                condition=Q(resolved=False) | Q(sha__regex=FULL_SHA_RE), name="commit_resolved_sha_is_full"
            ),
        ]

    def __str__(self) -> str:
        return self.short_sha

    @property
    def short_sha(self) -> str:
        return self.sha[:8]

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""


class PinnedCommitQuerySet(models.QuerySet):
    def in_order(self):
        """In the order the commits were pinned: the order every page, report and run uses."""
        return self.order_by("pinned_at", "id")

    def heads(self):
        return self.filter(role=PinnedCommit.Role.HEAD)

    def update(self, **kwargs):
        # Pins decide the gate's default commit and the pages' timeline; see `pull_request_changed`.
        pull_requests = set(self.order_by().values_list("pull_request_id", flat=True).distinct())
        count = super().update(**kwargs)
        PullRequest.objects.filter(pk__in=pull_requests).update(generation=models.F("generation") + 1)
        return count


class PinnedCommit(models.Model):
    """A commit pinned to a pull request: findings are verified against every pin."""

    class Role(models.TextChoices):
        BASE = "base", "Base"
        REVIEWED = "reviewed", "Reviewed"
        REBASED = "rebased", "Rebased"
        HEAD = "head", "Head"

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="pins")
    commit = models.ForeignKey(Commit, on_delete=models.RESTRICT, related_name="pins")
    role = models.CharField(max_length=10, choices=Role.choices)
    pinned_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)

    objects = PinnedCommitQuerySet.as_manager()

    class Meta:
        ordering = ["pinned_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pull_request", "commit"], name="pin_commit_once_per_pull_request"),
        ]

    def __str__(self) -> str:
        return f"{self.pull_request} {self.role} {self.commit.short_sha}"


def is_full_sha(sha: str) -> bool:
    return bool(re.fullmatch(FULL_SHA_RE, sha))


_SHA = re.compile(SHA_RE)  # compiled: the gate asks it on every read


def is_sha(sha: str) -> bool:
    """Whether `sha` is a commit SHA as Recheck records one (`SHA_RE`): full or abbreviated."""
    return bool(_SHA.fullmatch(sha))


class WorkerHost(models.Model):
    """A Celery worker as it last said it was alive: the queues it consumes, so that work routed to
    a shard queue nobody serves goes to the plain queue instead (recheck.routing), and the size of
    its host's mirror cache, for the health page. One row per worker's node name; a row not
    refreshed for a few heartbeats is a worker that is gone."""

    hostname = models.CharField(max_length=255, unique=True)
    queues = models.JSONField(default=list)
    mirror_bytes = models.BigIntegerField(null=True, blank=True)
    seen_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return self.hostname
