"""What was found: findings, their evidence, and what verification made of them at each commit."""
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.db.models import Exists, OuterRef, Q, Subquery
from django.db.models.functions import Greatest, Least
from django.urls import reverse

from core import vocabulary as v
from core.names import TAG_SLUG_RE
from reviews.models import SHA_RE, Commit, PinnedCommit, PullRequest, Repository


class ChangesPullRequestQuerySet(models.QuerySet):
    """Bulk writes (`update`, `bulk_create`, `bulk_update`) send no signals, so these querysets
    move the generation of the pull requests they touch themselves (see `findings.receivers`): no
    caller can forget to. `pull_request_field` is the lookup from a row to its PR's id."""

    pull_request_field = "pull_request_id"

    def _pull_request_ids(self) -> set[int]:
        return set(self.order_by().values_list(self.pull_request_field, flat=True).distinct())

    def update(self, **kwargs):
        ids = self._pull_request_ids()
        count = super().update(**kwargs)
        _pull_requests_changed(ids)
        return count

    def bulk_create(self, objs, *args, **kwargs):
        created = super().bulk_create(objs, *args, **kwargs)
        _pull_requests_changed(self._pull_request_ids_of(created))
        return created

    def bulk_update(self, objs, fields, *args, **kwargs):
        count = super().bulk_update(objs, fields, *args, **kwargs)
        _pull_requests_changed(self._pull_request_ids_of(objs))
        return count

    def _pull_request_ids_of(self, objs) -> set[int]:
        if self.pull_request_field == "pull_request_id":
            return {obj.pull_request_id for obj in objs}
        finding_ids = {obj.finding_id for obj in objs}
        return set(Finding.objects.filter(pk__in=finding_ids).values_list("pull_request_id", flat=True).distinct())


def _pull_requests_changed(ids) -> None:
    if ids:
        PullRequest.objects.filter(pk__in=ids).update(generation=models.F("generation") + 1)


def _readable(queryset, user, path: str):
    # access.permissions decides; imported here because it reads access.models at call time.
    from access.permissions import readable_condition

    return queryset.filter(readable_condition(user, path))


class FindingRowQuerySet(ChangesPullRequestQuerySet):
    pull_request_field = "finding__pull_request_id"

    def readable_by(self, user):
        """The rows of findings in repositories `user` may read."""
        return _readable(self, user, "finding__pull_request__repository")


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
                Verification.objects.filter(finding=OuterRef("pk"), commit_id=OuterRef("latest_commit_id")).values(
                    "verdict"
                )[:1]
            ),
        )

    def search(self, query):
        """The findings `query` (text, or a parsed findings.search.SearchQuery) matches, best
        first: the one search of the site and the API. Raises SearchQueryError for a query that
        cannot be searched (too long, control characters, an unknown kind)."""
        from findings.search import search_findings

        return search_findings(self, query)




class Tag(models.Model):
    """A kind of mistake (`silent-failure`, `dependency`), shared by every repository."""

    slug = models.SlugField(max_length=50, unique=True, help_text="Lower-case words joined by hyphens.")
    description = models.TextField(blank=True, help_text="What findings with this tag have in common.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [models.CheckConstraint(condition=Q(slug__regex=TAG_SLUG_RE), name="tag_slug_valid")]

    def __str__(self) -> str:
        return self.slug

    def get_absolute_url(self) -> str:
        return reverse("findings:tag", args=[self.slug])


class Finding(models.Model):
    class Kind(models.TextChoices):
        BLOCKER = "blocker", "Blocker"
        CLEANUP = "cleanup", "Cleanup"

    class CaughtBy(models.TextChoices):
        CI = v.CAUGHT_BY_CI, "Caught by a CI job"
        NONE = v.CAUGHT_BY_NONE, "Nothing checks it"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        FIXED = "fixed", "Fixed"
        DISMISSED = "dismissed", "Dismissed"

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
    possibly_regressed = models.BooleanField(
        default=False,
        help_text="Marked fixed, but its evidence holds again at a later commit: a human should look.",
    )
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


class Evidence(models.Model):
    class Kind(models.TextChoices):
        SNIPPET = "snippet", "Code snippet"
        PATTERN = "pattern", "Pattern"
        PATH = "path", "Path"
        GITLINK = "gitlink", "Submodule pin"
        NOTE = "note", "Note"

    class Expect(models.TextChoices):
        PRESENT = "present", "Matches"
        ABSENT = "absent", "Does not match"
        EXISTS = "exists", "Exists"
        MISSING = "missing", "Is missing"
        # Gitlink expectations: each holds while the problem it names is there.
        PINNED_AT = "pinned_at", "Is pinned at"
        OFF_BRANCH = "off_branch", "Is off its branch"
        NOT_FAST_FORWARD = "not_fast_forward", "Does not fast-forward"

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="evidence")
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # RESTRICT: a commit cannot be deleted from under the evidence recorded at it, yet deleting the
    # whole repository (which takes the evidence with it) still works.
    commit = models.ForeignKey(
        Commit, null=True, blank=True, on_delete=models.RESTRICT, related_name="evidence",
        help_text="The commit the evidence was recorded at.",
    )
    path = models.CharField(max_length=500, blank=True, help_text="File path, glob (pattern) or submodule path.")
    start_line = models.PositiveIntegerField(null=True, blank=True)
    end_line = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField(blank=True, help_text="The snippet's code, or a note's text.")
    regex = models.TextField(blank=True)
    expect = models.CharField(max_length=20, choices=Expect.choices, blank=True)
    sha = models.CharField(max_length=40, blank=True, help_text="The SHA a submodule is pinned at.")
    # Gitlink evidence: the submodule's own repository (else found from .gitmodules at each
    # commit) and the branch its pins are measured against (else that repository's default).
    submodule_repository = models.ForeignKey(
        Repository, null=True, blank=True, on_delete=models.SET_NULL, related_name="submodule_evidence",
        help_text="The submodule's repository; found from .gitmodules when left empty.",
    )
    reference_branch = models.CharField(
        max_length=200, blank=True, help_text="The submodule's branch pins are measured against."
    )
    caption = models.CharField(max_length=500, blank=True)

    objects = FindingRowQuerySet.as_manager()

    class Meta:
        ordering = ["finding_id", "position"]
        verbose_name_plural = "evidence"
        constraints = [
            models.UniqueConstraint(fields=["finding", "position"], name="evidence_position_unique"),
            # Each kind carries the fields it needs, and nothing can be checked without a commit.
            models.CheckConstraint(
                condition=(
                    Q(kind="snippet", commit__isnull=False, start_line__isnull=False, end_line__isnull=False)
                    & Q(start_line__gte=1)
                    & ~Q(path="")
                    & Q(end_line__gte=models.F("start_line"))
                )
                | (Q(kind="pattern", commit__isnull=False, expect__in=["present", "absent"]) & ~Q(path="") & ~Q(regex=""))
                | (Q(kind="path", commit__isnull=False, expect__in=["exists", "missing"]) & ~Q(path=""))
                | (
                    Q(kind="gitlink", commit__isnull=False, sha__regex=SHA_RE)
                    & Q(expect__in=["", "pinned_at", "off_branch", "not_fast_forward"])
                    & ~Q(path="")
                )
                | (Q(kind="note") & ~Q(text="")),
                name="evidence_fields_match_kind",
                violation_error_message="Evidence is missing a field its kind needs.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.position}: {self.describe()}"

    @property
    def is_checkable(self) -> bool:
        return self.kind != self.Kind.NOTE

    def describe(self) -> str:
        if self.kind == self.Kind.SNIPPET:
            return f"{self.path}:{self.start_line}-{self.end_line}"
        if self.kind == self.Kind.PATTERN:
            return f"/{self.regex}/ {self.expect} in {self.path}"
        if self.kind == self.Kind.PATH:
            return f"{self.path} {self.expect}"
        if self.kind == self.Kind.GITLINK:
            if self.expect == self.Expect.OFF_BRANCH:
                return f"{self.path} pinned at {self.sha[:12]}, off its branch"
            if self.expect == self.Expect.NOT_FAST_FORWARD:
                return f"{self.path} pinned at {self.sha[:12]}, not a fast-forward"
            return f"{self.path} pinned at {self.sha[:12]}"
        return self.text[:80]

    def permalink(self) -> str:
        if self.commit is None or not self.path or self.kind == self.Kind.NOTE:
            return ""
        repository = self.finding.pull_request.repository
        if self.kind == self.Kind.SNIPPET:
            return repository.permalink(self.commit.sha, self.path, self.start_line, self.end_line)
        if self.kind == self.Kind.GITLINK:
            return repository.tree_link(self.commit.sha, self.path)
        return repository.permalink(self.commit.sha, self.path) if "*" not in self.path else ""


class Verdict(models.TextChoices):
    PRESENT = v.PRESENT, v.VERDICT_LABELS[v.PRESENT]
    LIKELY_FIXED = v.LIKELY_FIXED, v.VERDICT_LABELS[v.LIKELY_FIXED]
    PARTLY_FIXED = v.PARTLY_FIXED, v.VERDICT_LABELS[v.PARTLY_FIXED]
    UNVERIFIABLE = v.UNVERIFIABLE, v.VERDICT_LABELS[v.UNVERIFIABLE]
    ERROR = v.ERROR, v.VERDICT_LABELS[v.ERROR]


class Verification(models.Model):
    """What one finding's evidence says at one commit. Re-running replaces it."""

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="verifications")
    commit = models.ForeignKey(Commit, on_delete=models.CASCADE, related_name="verifications")
    verdict = models.CharField(max_length=15, choices=Verdict.choices)
    checked_at = models.DateTimeField()
    first_checked_at = models.DateTimeField(auto_now_add=True)
    detail = models.TextField(blank=True, help_text="Why the check could not run, when it could not.")
    evidence_version = models.PositiveIntegerField(default=1, help_text="The finding's evidence version checked.")

    objects = FindingRowQuerySet.as_manager()

    class Meta:
        ordering = ["finding_id", "checked_at"]
        constraints = [
            models.UniqueConstraint(fields=["finding", "commit"], name="verification_once_per_finding_commit"),
            models.CheckConstraint(
                condition=Q(verdict__in=[choice for choice, _ in Verdict.choices]), name="verification_verdict_valid"
            ),
        ]
        indexes = [models.Index(fields=["commit", "verdict"], name="verification_commit_verdict")]

    def __str__(self) -> str:
        return f"{self.finding} @ {self.commit.short_sha}: {self.verdict}"


def latest_verified_commit_id(pull_request_ref) -> Subquery:
    """Subquery: the commit of the last pin of a PR (`pull_request_ref`, an OuterRef or a value)
    at which the PR's findings have verdicts."""
    # Inside the pin subquery, OuterRef points at the pin: its own pull request is the PR's.
    verified = Verification.objects.filter(commit=OuterRef("commit"), finding__pull_request=OuterRef("pull_request"))
    return Subquery(
        PinnedCommit.objects.filter(pull_request=pull_request_ref)
        .filter(Exists(verified))
        .order_by("-pinned_at", "-id")
        .values("commit_id")[:1]
    )


class EvidenceResult(models.Model):
    class State(models.TextChoices):
        HOLDS = v.HOLDS, v.STATE_LABELS[v.HOLDS].capitalize()
        GONE = v.GONE, v.STATE_LABELS[v.GONE].capitalize()
        ERROR = v.STATE_ERROR, v.STATE_LABELS[v.STATE_ERROR].capitalize()
        UNCHECKED = v.UNCHECKED, v.STATE_LABELS[v.UNCHECKED].capitalize()

    verification = models.ForeignKey(Verification, on_delete=models.CASCADE, related_name="results")
    evidence = models.ForeignKey(Evidence, on_delete=models.CASCADE, related_name="results")
    state = models.CharField(max_length=10, choices=State.choices)
    path = models.CharField(max_length=500, blank=True, help_text="Where it is at the verified commit.")
    start_line = models.PositiveIntegerField(null=True, blank=True)
    end_line = models.PositiveIntegerField(null=True, blank=True)
    detail = models.TextField(blank=True)
    facts = models.JSONField(
        default=dict, blank=True, help_text="Figures measured beside the state: a submodule pin's history."
    )

    class Meta:
        ordering = ["verification_id", "evidence__position"]
        constraints = [
            models.UniqueConstraint(fields=["verification", "evidence"], name="result_once_per_evidence"),
        ]

    def __str__(self) -> str:
        return f"{self.evidence} -> {self.state}"

    @property
    def moved(self) -> bool:
        """Whether the evidence is somewhere else at this commit than where it was recorded (see
        `vocabulary.is_moved`: a pattern matching in some file has not moved)."""
        return v.is_moved(
            kind=self.evidence.kind, state=self.state, path=self.path, start_line=self.start_line,
            recorded_path=self.evidence.path, recorded_start_line=self.evidence.start_line,
        )

    @property
    def shown_state(self) -> str:
        """holds / moved / gone / error / unchecked, as a reader is shown it."""
        return v.shown_state(state=self.state, moved=self.moved)

    @property
    def location(self) -> str:
        """Where the evidence is at this commit: `path:start–end`."""
        return v.location(self.path, self.start_line, self.end_line)


class FindingEvent(models.Model):
    """One change of a finding: its status, or (kind created/edited) what it says. Rows are only
    ever added. An edit keeps the status it had (from_status == to_status) and names the fields it
    changed in `note`."""

    class Kind(models.TextChoices):
        STATUS = "status", "Status change"
        CREATED = "created", "Created"
        EDITED = "edited", "Edited"

    class Source(models.TextChoices):
        ADMIN = "admin", "Admin"
        API = "api", "API"
        COMMAND = "command", "Command"
        IMPORT = "import", "Import"
        SITE = "site", "Site"
        VERIFICATION = "verification", "Verification"

    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.STATUS)

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="history")
    from_status = models.CharField(max_length=10, choices=Finding.Status.choices, blank=True)
    to_status = models.CharField(max_length=10, choices=Finding.Status.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    at = models.DateTimeField(auto_now_add=True)
    commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.TextField(blank=True)
    source = models.CharField(max_length=15, choices=Source.choices)

    class Meta:
        ordering = ["finding_id", "at", "id"]
        verbose_name = "status change"

    def __str__(self) -> str:
        return f"{self.finding}: {self.from_status or '-'} -> {self.to_status}"


class VerificationRunQuerySet(models.QuerySet):
    def readable_by(self, user):
        """The runs of pull requests in repositories `user` may read."""
        return _readable(self, user, "pull_request__repository")

    def active(self):
        """Queued or running."""
        return self.filter(status__in=[VerificationRun.Status.QUEUED, VerificationRun.Status.RUNNING])

    def latest_first(self):
        return self.order_by("-created_at", "-id")

    def live(self):
        """Active runs whose worker still shows signs of life: a run without one for longer than
        a task may run (RECHECK_RUN_STALE_SECONDS) is dead, whatever its status says, and is
        waited on by nobody (the verify button, the gate, a new request) until it is reaped."""
        return self.active().filter(heartbeat_at__gte=timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS))

    def dead(self, *, now=None):
        """Active runs without a sign of life for longer than RECHECK_RUN_STALE_SECONDS."""
        now = now or timezone.now()
        return self.active().filter(heartbeat_at__lt=now - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS))

    def covering(self, commit):
        """Runs that will give `commit` its verdicts: at that commit, or at every pin."""
        return self.filter(Q(commit=commit) | Q(commit__isnull=True))


class VerificationRun(models.Model):
    """A requested verification of a pull request (at one commit, or at every pin), with its
    progress, so the site and the API can show it while a worker is busy."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="verification_runs")
    commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    task_id = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The last sign of life: set when the run is queued, claimed and as it progresses.
    heartbeat_at = models.DateTimeField(default=timezone.now, db_index=True)
    # The dead run this one was queued again for; a retry that dies too is not retried again.
    retry_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retried_as"
    )

    objects = VerificationRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["pull_request", "status"], name="run_pr_status")]

    def __str__(self) -> str:
        return f"{self.pull_request} run {self.pk}: {self.status}"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_live(self) -> bool:
        """Active, and its worker showed a sign of life recently (see VerificationRunQuerySet.live)."""
        stale = timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
        return self.is_active and self.heartbeat_at >= stale

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


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


class WebhookDelivery(models.Model):
    """A forge webhook delivery, kept so a redelivered event has one effect."""

    delivery_id = models.CharField(max_length=100, unique=True)
    event = models.CharField(max_length=50)
    action = models.CharField(max_length=50, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    outcome = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.event} {self.delivery_id}"


class ImportJob(models.Model):
    """A review bundle imported in the background: a bundle too large to import within a web
    request is kept here (parsed) and imported by a worker; its status is polled."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    data = models.JSONField(help_text="The parsed bundle; emptied once it is imported.")
    findings = models.PositiveIntegerField(default=0, help_text="How many findings the bundle has.")
    report = models.JSONField(null=True, blank=True)
    errors = models.JSONField(null=True, blank=True)
    message = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Import {self.pk}: {self.status}"
