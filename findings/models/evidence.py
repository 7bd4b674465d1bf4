"""A finding's evidence: the snippets, patterns, paths, submodule pins, CI checks and notes that say
where the problem is, each recorded at a commit."""
from django.db import models
from django.db.models import Q

from core.vocabulary import check_description
from findings.models.querysets import FindingRowQuerySet
from reviews.models import SHA_RE, Commit, Repository


class Evidence(models.Model):
    class Kind(models.TextChoices):
        SNIPPET = "snippet", "Code snippet"
        PATTERN = "pattern", "Pattern"
        PATH = "path", "Path"
        GITLINK = "gitlink", "Submodule pin"
        NOTE = "note", "Note"
        CHECK = "check", "CI check"

    class Expect(models.TextChoices):
        PRESENT = "present", "Matches"
        ABSENT = "absent", "Does not match"
        EXISTS = "exists", "Exists"
        MISSING = "missing", "Is missing"
        # Gitlink expectations: each holds while the problem it names is there.
        PINNED_AT = "pinned_at", "Is pinned at"
        OFF_BRANCH = "off_branch", "Is off its branch"
        NOT_FAST_FORWARD = "not_fast_forward", "Does not fast-forward"
        # A check's expectation: it holds while the check, or what it names, fails.
        FAILED = "failed", "Fails"

    # Named, not imported: findings.models.findings imports this module for Finding's queryset.
    finding = models.ForeignKey("Finding", on_delete=models.CASCADE, related_name="evidence")
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
    # Check evidence: the check by the name its CI gives it, the app its reports must come from
    # (any when empty), and what inside it the finding is about: test ids, or scanner results as
    # {rule, path, start_line}. Neither: the whole check's conclusion.
    check_name = models.CharField(max_length=255, blank=True, help_text="A CI check's name (check evidence).")
    check_app = models.CharField(
        max_length=255, blank=True, help_text="The app a check's reports must come from; any when empty."
    )
    check_tests = models.JSONField(default=list, blank=True, help_text="Test ids inside the check.")
    check_results = models.JSONField(default=list, blank=True, help_text="Scanner results inside the check.")

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
                | (Q(kind="note") & ~Q(text=""))
                | (Q(kind="check", commit__isnull=False, expect__in=["", "failed"]) & ~Q(check_name="")),
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
        if self.kind == self.Kind.CHECK:
            return check_description(self.check_name, self.check_tests, self.check_results)
        return self.text[:80]

    def permalink(self) -> str:
        """Where the evidence is on the forge, once a fetch has resolved its commit: before that
        its path is only as the review wrote it (often shortened), never checked against the
        repository, and a link to it would lead nowhere."""
        if self.commit is None or not self.commit.resolved or not self.path or self.kind in (self.Kind.NOTE, self.Kind.CHECK):
            return ""
        repository = self.finding.pull_request.repository
        if self.kind == self.Kind.SNIPPET:
            return repository.permalink(self.commit.sha, self.path, self.start_line, self.end_line)
        if self.kind == self.Kind.GITLINK:
            return repository.tree_link(self.commit.sha, self.path)
        return repository.permalink(self.commit.sha, self.path) if "*" not in self.path else ""
