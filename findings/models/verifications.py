"""What verification made of a finding at a commit: its verdict (a Verification) and what each
evidence item was found to be there (an EvidenceResult)."""
from django.db import models
from django.db.models import Exists, F, OuterRef, Q, Subquery

from core import vocabulary as v
from findings.models.evidence import Evidence
from findings.models.querysets import FindingRowQuerySet
from reviews.models import Commit, PinnedCommit


class Verdict(models.TextChoices):
    PRESENT = v.PRESENT, v.VERDICT_LABELS[v.PRESENT]
    LIKELY_FIXED = v.LIKELY_FIXED, v.VERDICT_LABELS[v.LIKELY_FIXED]
    PARTLY_FIXED = v.PARTLY_FIXED, v.VERDICT_LABELS[v.PARTLY_FIXED]
    UNVERIFIABLE = v.UNVERIFIABLE, v.VERDICT_LABELS[v.UNVERIFIABLE]
    ERROR = v.ERROR, v.VERDICT_LABELS[v.ERROR]


class Verification(models.Model):
    """What one finding's evidence says at one commit. Re-running replaces it."""

    # Named, not imported: findings.models.findings imports this module for Finding's queryset.
    finding = models.ForeignKey("Finding", on_delete=models.CASCADE, related_name="verifications")
    commit = models.ForeignKey(Commit, on_delete=models.CASCADE, related_name="verifications")
    verdict = models.CharField(max_length=15, choices=Verdict.choices)
    checked_at = models.DateTimeField()
    first_checked_at = models.DateTimeField(auto_now_add=True)
    detail = models.TextField(blank=True, help_text="Why the check could not run, when it could not.")
    evidence_version = models.PositiveIntegerField(default=1, help_text="The finding's evidence version checked.")
    # Why an error verdict is one there (waiting for CI, not run, flaky; '' otherwise), from the
    # one rule (`vocabulary.verdict_reason`) over this verification's own results, written with
    # them: every pin's cell, the state and the API read it rather than derive it again.
    verdict_reason = models.CharField(max_length=15, blank=True, default="")

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
    at which the PR's findings have verdicts of their current evidence: the SQL form of the rule
    `findings.state.derivation.latest_verified_pin` states, for filters that need it in a query
    (a test holds the two to one answer)."""
    # Inside the pin subquery, OuterRef points at the pin: its own pull request is the PR's.
    verified = Verification.objects.filter(
        commit=OuterRef("commit"), finding__pull_request=OuterRef("pull_request"),
        evidence_version=F("finding__evidence_version"),
    )
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
    # Read through findings.selectors.successors, which every interface shows it by.
    successor = models.JSONField(
        null=True, blank=True,
        help_text="For evidence that is gone: the code that replaced it (kind, path, lines), as the engine found it.",
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
