"""A repository's merge policy (what blocks its pull requests' merge gate, when what can wait is
due, who may override the gate) and the overrides of the gate at one commit of a pull request.
Both are facts a pull request's state is derived from (`findings.state`): writing either moves the
generation of the pull requests they touch, so the gate, the pages, the API and the forges read
one answer."""
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from core import vocabulary as v
from reviews.models import Commit, PullRequest, Repository

DUE_DAYS_VALIDATORS = [MinValueValidator(1), MaxValueValidator(v.LONGEST_DUE_DAYS)]


class RepositoryPolicy(models.Model):
    """One a repository, made when its Admin first changes it; a repository without one has the
    defaults, which are the gate as it was before policies. An unverified head always blocks: that
    is not a setting."""

    class OverrideRole(models.TextChoices):
        MAINTAINER = "maintainer", v.OVERRIDE_ROLE_LABELS["maintainer"]
        ADMIN = "admin", v.OVERRIDE_ROLE_LABELS["admin"]

    repository = models.OneToOneField(Repository, on_delete=models.CASCADE, related_name="policy")
    possibly_regressed_block = models.BooleanField(
        default=False, help_text="A blocker marked fixed whose evidence holds again at the commit blocks the merge "
        "(otherwise it is reported and does not block).",
    )
    overdue_cleanups_block = models.BooleanField(
        default=False, help_text="While a cleanup follow-up of the repository is past its due date, no pull request "
        "of it may merge.",
    )
    cleanup_due_days = models.PositiveSmallIntegerField(
        default=v.DEFAULT_CLEANUP_DUE_DAYS, validators=DUE_DAYS_VALIDATORS,
        help_text="A cleanup left open at the merge is due this many days after it.",
    )
    blocker_due_days = models.PositiveSmallIntegerField(
        default=v.DEFAULT_BLOCKER_DUE_DAYS, validators=DUE_DAYS_VALIDATORS,
        help_text="A blocker dismissed, fixed anyway or left open at the merge is due this many days after it.",
    )
    regression_restarts_clock = models.BooleanField(
        default=True, help_text="A follow-up whose evidence comes back on the default branch is due a whole period "
        "after that, instead of at its first due date.",
    )
    override_role = models.CharField(
        max_length=12, choices=OverrideRole.choices, default=OverrideRole.MAINTAINER,
        help_text="The role that may override the merge gate at a commit (the Admin role always may).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = verbose_name_plural = "merge policy"
        constraints = [
            models.CheckConstraint(condition=Q(cleanup_due_days__gte=1, blocker_due_days__gte=1),
                                   name="policy_due_days_positive"),
            models.CheckConstraint(condition=Q(override_role__in=list(v.OVERRIDE_ROLES)),
                                   name="policy_override_role_known"),
        ]

    def __str__(self) -> str:
        return f"Merge policy of {self.repository}"


class GateOverrideQuerySet(models.QuerySet):
    def active(self):
        return self.filter(revoked_at__isnull=True)


class GateOverride(models.Model):
    """A person let a pull request merge at one pinned commit although its gate said no, with a
    reason and a note. It holds for that commit only (a new head needs a new one) until revoked;
    a revoked one is kept, with who revoked it and when."""

    class Reason(models.TextChoices):
        URGENT_FIX = v.OVERRIDE_URGENT_FIX, v.OVERRIDE_REASON_LABELS[v.OVERRIDE_URGENT_FIX]
        ACCEPTED_RISK = v.OVERRIDE_ACCEPTED_RISK, v.OVERRIDE_REASON_LABELS[v.OVERRIDE_ACCEPTED_RISK]
        FALSE_POSITIVE = v.OVERRIDE_FALSE_POSITIVE, v.OVERRIDE_REASON_LABELS[v.OVERRIDE_FALSE_POSITIVE]
        OTHER = v.OVERRIDE_OTHER, v.OVERRIDE_REASON_LABELS[v.OVERRIDE_OTHER]

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="gate_overrides")
    commit = models.ForeignKey(Commit, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    note = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                           related_name="+")
    # The name as it was: a user deleted later still shows who overrode.
    by_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    revoked_by_label = models.CharField(max_length=150, blank=True)

    objects = GateOverrideQuerySet.as_manager()

    class Meta:
        ordering = ["pull_request_id", "at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pull_request", "commit"], condition=Q(revoked_at__isnull=True),
                                    name="gate_override_active_once_per_commit"),
            models.CheckConstraint(condition=Q(reason__in=list(v.OVERRIDE_REASONS)), name="gate_override_reason_known"),
            models.CheckConstraint(condition=~Q(reason=v.OVERRIDE_OTHER) | ~Q(note=""),
                                   name="gate_override_other_has_a_note"),
        ]

    def __str__(self) -> str:
        return f"Override of {self.pull_request_id} at {self.commit_id}"
