"""API tokens and the audit log.

A token is stored as knox stores it: the SHA-512 digest of a random secret and the first
characters of the secret to find the row by, never the secret itself. Revoking keeps the row (with
who revoked it and when), so the admin still shows what a token could do and when it was last used.

The audit log is append-only: rows are written by `audit_record` and never changed."""
from django.conf import settings
from django.db import models
from django.utils import timezone
from knox.models import AbstractAuthToken, AuthTokenManager

from core.scopes import SCOPES


class ApiTokenQuerySet(models.QuerySet):
    def usable(self):
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(models.Q(expiry__isnull=True) | models.Q(expiry__gt=now))


class ApiToken(AbstractAuthToken):
    # knox's create() (a new secret, its digest, the expiry) with Recheck's queryset methods.
    objects = AuthTokenManager.from_queryset(ApiTokenQuerySet)()

    name = models.CharField(max_length=100, help_text="What the token is for, e.g. “CI merge gate”.")
    scopes = models.JSONField(default=list, help_text=f"Any of: {', '.join(SCOPES)}.")
    # Whether the token is narrowed to `repositories`. Said on its own, not read off the list: once
    # the repositories it named are deleted the list is empty, and an empty list must then reach
    # none of them, never every repository (fail closed).
    limited = models.BooleanField(
        default=False, help_text="Limited to the repositories below; a limited token whose repositories are gone reaches none.",
    )
    repositories = models.ManyToManyField(
        "reviews.Repository", blank=True, related_name="+",
        help_text="The repositories a limited token reaches.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_used_ip = models.GenericIPAddressField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name = "API token"
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.token_key}…, {self.user})"

    @property
    def label(self) -> str:
        return f"token {self.name!r} ({self.token_key}…)"

    @property
    def is_expired(self) -> bool:
        return self.expiry is not None and self.expiry <= timezone.now()

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class AuditEntry(models.Model):
    class Outcome(models.TextChoices):
        DONE = "done", "Done"
        REFUSED = "refused", "Refused"

    at = models.DateTimeField(default=timezone.now, db_index=True)
    action = models.CharField(max_length=40, db_index=True, help_text="What was written, e.g. finding.resolve.")
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.DONE)
    # Who: the user, and the token when the write came through the API with one. The labels keep
    # the name when the user or the token is deleted later.
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_label = models.CharField(max_length=150, blank=True)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    token_label = models.CharField(max_length=150, blank=True)
    source = models.CharField(max_length=20, blank=True, help_text="api, site, admin, webhook, command, or system (a task).")
    ip = models.GenericIPAddressField(null=True, blank=True)
    target = models.CharField(max_length=300, blank=True, help_text="What was written to, e.g. acme/loader#4108 finding 3.")
    repository = models.ForeignKey("reviews.Repository", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    changes = models.JSONField(default=dict, blank=True, help_text="Each changed field: [before, after].")
    message = models.TextField(blank=True, help_text="Why a write was refused, or a summary of what it did.")

    class Meta:
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["action", "outcome"])]

    def __str__(self) -> str:
        who = self.actor_label or "system"
        return f"{self.at:%Y-%m-%d %H:%M:%S} {who} {self.action} {self.outcome}"


class Membership(models.Model):
    """A role on one repository, given to a user or to a group (everyone in it). The roles are the
    site's own, scoped: a Reader reads the repository (even when it is private), a Reviewer also
    writes findings, imports reviews and requests verifications, a Maintainer also marks findings
    fixed, dismissed or open, an Admin also changes its settings and its memberships. What each role
    allows is `access.permissions.ROLE_ACTIONS`."""

    class Role(models.TextChoices):
        READER = "reader", "Reader"
        REVIEWER = "reviewer", "Reviewer"
        MAINTAINER = "maintainer", "Maintainer"
        ADMIN = "admin", "Admin"

    repository = models.ForeignKey("reviews.Repository", on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="repository_memberships"
    )
    group = models.ForeignKey(
        "auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="repository_memberships",
        help_text="Everyone in the group holds the role; give a user or a group, not both.",
    )
    role = models.CharField(max_length=12, choices=Role.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["repository__slug", "role", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, group__isnull=True) | models.Q(user__isnull=True, group__isnull=False),
                name="membership_user_or_group",
            ),
            models.UniqueConstraint(
                fields=["repository", "user"], condition=models.Q(user__isnull=False), name="membership_unique_user"
            ),
            models.UniqueConstraint(
                fields=["repository", "group"], condition=models.Q(group__isnull=False), name="membership_unique_group"
            ),
        ]

    def __str__(self) -> str:
        holder = self.user.get_username() if self.user_id else f"group {self.group.name}"
        return f"{holder}: {self.get_role_display()} of {self.repository.slug}"
