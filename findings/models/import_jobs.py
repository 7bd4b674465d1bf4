"""Review bundles imported in the background, with their status and report."""
from django.conf import settings
from django.db import models


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
