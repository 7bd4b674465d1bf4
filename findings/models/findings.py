"""Findings, the tags that say what kind of mistake they are, their search entries and the typed
links between them; with the queryset every read of findings goes through."""
from django.conf import settings
from django.db import models
from django.db.models import OuterRef, Q, Subquery
from django.db.models.functions import Greatest, Least
from django.urls import reverse

from core import vocabulary as v
from core.names import TAG_SLUG_RE
from findings.models.evidence import Evidence
from findings.models.querysets import ChangesPullRequestQuerySet, _readable
from findings.models.verifications import Verification, latest_verified_commit_id
from reviews.models import Commit, PullRequest


class FindingQuerySet(ChangesPullRequestQuerySet):
    def readable_by(self, user):
        """The findings of repositories `user` may read: every read of findings for a person goes
        through this (or `readable_repositories`), so a private repository's never show."""
        return _readable(self, user, "pull_request__repository")

    def open(self):
        return self.filter(status=Finding.Status.OPEN)

    def blockers(self):
        return self.filter(kind=Finding.Kind.BLOCKER)

    def cleanups(self):
        return self.filter(kind=Finding.Kind.CLEANUP)

    def for_pull_request(self, pull_request):
        return self.filter(pull_request=pull_request)

    def with_evidence(self):
        """With what a finding's page and its API detail show: its PR and repository, who resolved
        it and at which commit, and its evidence with their commits (three queries in all)."""
        return self.select_related("pull_request__repository", "resolved_by", "resolved_commit").prefetch_related(
            models.Prefetch("evidence", queryset=Evidence.objects.select_related("commit", "submodule_repository"))
        )

    def with_latest_verdict(self):
        """Annotate `latest_commit_id` (the last pin of the finding's PR that has verdicts) and
        `latest_verdict` (the finding's verdict there, None if it has none): what the site, the
        admin and search all mean by a finding's latest verdict. Re-verifying an older pin later
        does not change it; a newer pin being verified does."""
        return self.annotate(latest_commit_id=latest_verified_commit_id(OuterRef("pull_request"))).annotate(
            latest_verdict=Subquery(
                Verification.objects.filter(
                    finding=OuterRef("pk"), commit_id=OuterRef("latest_commit_id"),
                    evidence_version=OuterRef("evidence_version"),
                ).values("verdict")[:1]
            ),
        )

    def search(self, query):
        """The findings `query` (text, or a parsed findings.search.SearchQuery) matches, best
        first: the one search of the site and the API. Raises SearchQueryError for a query that
        cannot be searched (too long, control characters, an unknown kind)."""
        from findings.search import search_findings

        return search_findings(self, query)


class Tag(models.Model):
    """A kind of mistake (`silent-failure`, `dependency`): a slug shared by every repository, so
    the same kind of mistake is one tag everywhere. What the tag means in a repository is that
    repository's own `TagDescription`: nothing one repository writes about a tag is read or
    changed from another (decision record 0014)."""

    slug = models.SlugField(max_length=50, unique=True, help_text="Lower-case words joined by hyphens.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [models.CheckConstraint(condition=Q(slug__regex=TAG_SLUG_RE), name="tag_slug_valid")]

    def __str__(self) -> str:
        return self.slug

    def get_absolute_url(self) -> str:
        return reverse("findings:tag", args=[self.slug])


class TagDescriptionQuerySet(models.QuerySet):
    def in_repositories(self, repositories):
        """The descriptions written in `repositories` (a queryset or ids: what a reader may read),
        by repository slug: the only ones a reader is shown."""
        return self.filter(repository__in=repositories).select_related("repository").order_by("repository__slug")


class TagDescription(models.Model):
    """What findings with a tag have in common, as one repository says it: written by those who
    may write findings there (the bundle's `tags`, the API), read by those who may read it."""

    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="descriptions")
    repository = models.ForeignKey("reviews.Repository", on_delete=models.CASCADE, related_name="tag_descriptions")
    description = models.TextField(help_text="What findings with this tag have in common, in this repository.")
    updated_at = models.DateTimeField(auto_now=True)

    objects = TagDescriptionQuerySet.as_manager()

    class Meta:
        ordering = ["tag__slug", "repository__slug"]
        constraints = [models.UniqueConstraint(fields=["tag", "repository"], name="tag_description_once_per_repository")]

    def __str__(self) -> str:
        return f"{self.tag.slug} in {self.repository.slug}"


class Finding(models.Model):
    class Kind(models.TextChoices):
        BLOCKER = "blocker", "Blocker"
        CLEANUP = "cleanup", "Cleanup"

    class CaughtBy(models.TextChoices):
        CI = v.CAUGHT_BY_CI, "Caught by a CI job"
        NONE = v.CAUGHT_BY_NONE, "Nothing checks it"

    class Status(models.TextChoices):
        OPEN = v.OPEN, v.STATUS_LABELS[v.OPEN]
        FIXED = v.FIXED, v.STATUS_LABELS[v.FIXED]
        DISMISSED = v.DISMISSED, v.STATUS_LABELS[v.DISMISSED]

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="findings")
    number = models.PositiveIntegerField(help_text="Its order on the pull request.")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    caught_by = models.CharField(max_length=10, choices=CaughtBy.choices, default=CaughtBy.NONE)
    title = models.CharField(max_length=300)
    summary = models.CharField(max_length=500, blank=True, help_text="One line.")
    body = models.TextField(blank=True, help_text="Markdown.")
    fix = models.TextField(blank=True, help_text="Markdown.")
    review_comment_url = models.URLField(blank=True, max_length=500)
    path = models.CharField(max_length=500, blank=True, help_text="Main location: file path.")
    line = models.PositiveIntegerField(null=True, blank=True, help_text="Main location: line.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_commit = models.ForeignKey(
        Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="resolved_findings"
    )
    resolution_note = models.TextField(blank=True)
    tags = models.ManyToManyField(Tag, blank=True, related_name="findings")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Bumped whenever the evidence changes (a re-import, an edit): a verification checked one
    # version, and the verifications of an older one are dropped, since they no longer say
    # anything about this evidence.
    evidence_version = models.PositiveIntegerField(default=1)
    evidence_changed_at = models.DateTimeField(null=True, blank=True)

    objects = FindingQuerySet.as_manager()

    class Meta:
        ordering = ["pull_request_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["pull_request", "number"], name="finding_number_unique_per_pull_request"),
            models.CheckConstraint(condition=Q(number__gte=1), name="finding_number_positive"),
            models.CheckConstraint(condition=Q(kind__in=["blocker", "cleanup"]), name="finding_kind_valid"),
            models.CheckConstraint(condition=Q(caught_by__in=["ci", "none"]), name="finding_caught_by_valid"),
            models.CheckConstraint(
                condition=Q(status__in=["open", "fixed", "dismissed"]), name="finding_status_valid"
            ),
            # A closed finding always says when it was closed; an open one carries no resolution.
            models.CheckConstraint(
                condition=(Q(status="open") & Q(resolved_at__isnull=True))
                | (~Q(status="open") & Q(resolved_at__isnull=False)),
                name="finding_resolution_matches_status",
            ),
        ]
        indexes = [
            # A PR's open blockers, and the API's cross-PR filters, each ending in the lists' order
            # (pull request, number): a page of matches is read in order, not sorted out of all of them.
            models.Index(fields=["pull_request", "kind", "status", "number"], name="finding_pr_kind_status_nr"),
            models.Index(fields=["status", "kind", "pull_request", "number"], name="finding_status_kind_pr_nr"),
            models.Index(fields=["updated_at", "id"], name="finding_updated"),
        ]
        permissions = [
            ("resolve_finding", "Can mark findings fixed, dismissed or open"),
            ("import_review", "Can import review bundles"),
            ("verify_pullrequest", "Can start verification of a pull request"),
        ]

    @classmethod
    def from_db(cls, db, field_names, values):
        finding = super().from_db(db, field_names, values)
        # The PR it was read under: a save that moves it to another PR changes both PRs' pages
        # and gates, and the old one is no longer in the row to be told (findings.receivers).
        finding._loaded_pull_request_id = finding.__dict__.get("pull_request_id")
        return finding

    def __str__(self) -> str:
        return f"{self.pull_request} {self.kind} {self.number}: {self.title}"

    @property
    def location(self) -> str:
        if not self.path:
            return ""
        return f"{self.path}:{self.line}" if self.line else self.path

    @property
    def anchor(self) -> str:
        return f"finding-{self.number}"

    def get_absolute_url(self) -> str:
        return f"{self.pull_request.get_absolute_url()}findings/{self.number}/"

    @property
    def reference(self) -> str:
        """`owner/name#4108/4`: how a bundle names a finding of any review."""
        return f"{self.pull_request.reference}/{self.number}"


class FindingSearchEntry(models.Model):
    """On SQLite, a finding's row in the FTS5 index that migration 0010 creates and triggers keep
    (findings.search.schema). Never written through the ORM; the search joins it, because FTS5
    ranks and excerpts only rows of a query that matches it directly. Unused on PostgreSQL, where
    the index is a column of findings_finding."""

    finding = models.OneToOneField(
        "Finding", primary_key=True, db_column="rowid", db_constraint=False, on_delete=models.DO_NOTHING,
        related_name="search_entry",
    )

    class Meta:
        managed = False
        db_table = "findings_finding_search"


class FindingLink(models.Model):
    """A typed link from one finding to another, across pull requests and repositories. It is
    stored once, from `source` to `target`, and read from both ends."""

    class Kind(models.TextChoices):
        SAME_CAUSE = "same_cause", "Same cause as"
        DUPLICATE_OF = "duplicate_of", "Duplicate of"
        FOLLOW_UP_OF = "follow_up_of", "Follow-up of"

    # How the link reads from its target's end.
    INVERSE_LABELS = {
        Kind.SAME_CAUSE: "Same cause as",
        Kind.DUPLICATE_OF: "Duplicated by",
        Kind.FOLLOW_UP_OF: "Followed up by",
    }

    source = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="links_out")
    target = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="links_in")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    note = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["source_id", "id"]
        constraints = [
            # Once per pair, whichever way round: two concurrent links A->B and B->A cannot both land.
            models.UniqueConstraint(Least("source", "target"), Greatest("source", "target"), name="finding_link_once_per_pair"),
            models.CheckConstraint(condition=~Q(source=models.F("target")), name="finding_link_not_to_itself"),
            models.CheckConstraint(
                condition=Q(kind__in=["same_cause", "duplicate_of", "follow_up_of"]), name="finding_link_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source.reference} {self.get_kind_display().lower()} {self.target.reference}"

    def label_from(self, finding: Finding) -> str:
        """How the link reads on `finding`'s page (either end)."""
        return self.get_kind_display() if finding.pk == self.source_id else self.INVERSE_LABELS[self.kind]

    def other_end(self, finding: Finding) -> Finding:
        return self.target if finding.pk == self.source_id else self.source
