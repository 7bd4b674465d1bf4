from pathlib import Path

from django.core.management.base import CommandError

from access.audit import audit_source
from findings.services.review_import import parse_bundle, review_import
from core.errors import RecheckError
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = "Import a review bundle (YAML or JSON). Creates or updates; a malformed bundle changes nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="Path to the bundle, or - for standard input.")

    def handle(self, *args, file: str, **options):
        try:
            raw = self.stdin.read() if file == "-" else Path(file).read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from None
        try:
            with audit_source("command"):
                report = review_import(data=parse_bundle(raw))
        except RecheckError as error:
            raise CommandError(f"{file}: nothing was imported. {error}") from None
        self.stdout.write(self.style.SUCCESS(f"Imported {report.pull_request}."))
        for heading, labels in (("created", report.created), ("updated", report.updated)):
            if labels:
                self.stdout.write(f"  {heading}: {', '.join(labels)}")
        if report.unchanged:
            self.stdout.write(f"  unchanged: {len(report.unchanged)} item(s)")
        for note in report.notes:
            self.stdout.write(self.style.WARNING(f"  not done: {note}"))

    @property
    def stdin(self):
        import sys

        return sys.stdin.buffer
