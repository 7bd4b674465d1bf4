"""A finding's history: every change of its status or of what it says, only ever added to."""
from django.conf import settings
from django.db import models

from findings.models.findings import Finding
from reviews.models import Commit


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
