"""CI reports of a repository's commits, kept: each check's conclusion as a source gave it, with
its test cases' outcomes (JUnit) or its scanner results (SARIF). Check evidence is verified
against them; they are kept per commit, so a finding's outcome at each pin can be read again."""
from django.conf import settings
from django.db import models

from core import vocabulary
from reviews.models import Commit, Repository


def _choices(values, label) -> list[tuple[str, str]]:
    return [(value, label(value)) for value in values]


class CheckReport(models.Model):
    """One report of one check at one commit. Sent again unchanged (the same check, app, attempt
    and content) it is the same report: `digest` is the content's SHA-256."""

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="check_reports")
    commit = models.ForeignKey(Commit, on_delete=models.CASCADE, related_name="check_reports")
    check_name = models.CharField(max_length=255, help_text="The check's name, as its CI gives it.")
    app = models.CharField(
        max_length=255, blank=True, help_text="The app that made the report (a GitHub App's slug, a CI's name)."
    )
    source = models.CharField(
        max_length=20, choices=_choices(vocabulary.REPORT_SOURCES, vocabulary.REPORT_SOURCE_LABELS.get),
        help_text="How the report arrived.",
    )
    conclusion = models.CharField(
        max_length=20, choices=_choices(vocabulary.CONCLUSIONS, vocabulary.conclusion_label),
    )
    format = models.CharField(
        max_length=10, blank=True, choices=_choices(vocabulary.REPORT_FORMATS, vocabulary.REPORT_FORMAT_LABELS.get),
        help_text="What the report carried beside its conclusion; empty for a bare conclusion.",
    )
    tool = models.CharField(max_length=255, blank=True, help_text="The scanner a SARIF log names.")
    url = models.URLField(max_length=500, blank=True, help_text="The run on the CI.")
    attempt = models.PositiveIntegerField(default=1)
    completed_at = models.DateTimeField(null=True, blank=True, help_text="When the CI says the check finished.")
    received_at = models.DateTimeField(auto_now_add=True)
    received_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    digest = models.CharField(max_length=64, help_text="SHA-256 of what was sent.")
    size = models.PositiveBigIntegerField(default=0, help_text="The report's size in bytes.")
    tests = models.PositiveIntegerField(default=0)
    tests_failed = models.PositiveIntegerField(default=0)
    tests_skipped = models.PositiveIntegerField(default=0)
    results = models.PositiveIntegerField(default=0)
    rederived_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When a worker claimed verifying again the pull requests already verified at its commit.",
    )
    rederive_done_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When that work finished; claimed and not finished past the time a task may run, it is reaped.",
    )

    class Meta:
        ordering = ["commit_id", "check_name", "received_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["commit", "check_name", "app", "attempt", "digest"], name="check_report_once",
            ),
        ]
        indexes = [models.Index(fields=["commit", "check_name"], name="check_report_commit_check")]

    def __str__(self) -> str:
        return f"{self.check_name} at {self.commit.short_sha}: {self.conclusion}"


class ReportedTest(models.Model):
    """One test case of a JUnit report, by its classname and name, with the key a test id names it
    by (engine.reports.testids)."""

    # No database constraint (the column is indexed as before): checking it for each of a large
    # report's hundred thousand rows when its transaction commits cost a third of recording it
    # (bench/reports_bench.py). The rows are written only by `check_report_record`, in the
    # transaction that creates their report (which keeps its own constraints, so a report whose
    # repository or commit went meanwhile fails and takes its rows with it), and are deleted with
    # it by Django's collector, which on_delete is, not by the database.
    report = models.ForeignKey(CheckReport, on_delete=models.CASCADE, related_name="reported_tests",
                               db_constraint=False)
    classname = models.CharField(max_length=1000, blank=True)
    name = models.CharField(max_length=1000)
    file = models.CharField(max_length=500, blank=True)
    key = models.CharField(max_length=2001, help_text="classname.name, the form a test id is matched in.")
    bare_name = models.CharField(max_length=1000, help_text="The name a test id of a name alone is matched to.")
    outcome = models.CharField(max_length=10, choices=_choices(vocabulary.TEST_OUTCOMES, vocabulary.test_outcome_label))

    class Meta:
        ordering = ["report_id", "id"]


class ReportedResult(models.Model):
    """One scanner result of a SARIF report, where it was reported at the report's commit."""

    report = models.ForeignKey(CheckReport, on_delete=models.CASCADE, related_name="reported_results")
    rule = models.CharField(max_length=255)
    path = models.CharField(max_length=500, blank=True)
    start_line = models.PositiveIntegerField(null=True, blank=True)
    level = models.CharField(max_length=20)
    message = models.TextField(blank=True)
    fingerprint = models.TextField(blank=True, help_text="The tool's partialFingerprints, key=value a line.")

    class Meta:
        ordering = ["report_id", "id"]
