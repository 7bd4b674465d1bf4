from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from findings.exchange import EXPORT_FORMATS, review_export
from recheck.errors import RecheckError
from reviews.models import PullRequest


class Command(BaseCommand):
    help = "Export a pull request's review as a bundle (YAML, re-importable), SARIF 2.1.0 or Markdown."

    def add_arguments(self, parser):
        parser.add_argument("repository", help="owner/name")
        parser.add_argument("number", type=int, help="The pull request number.")
        parser.add_argument("--format", default="bundle", help=f"One of {', '.join(EXPORT_FORMATS)} (default: bundle).")
        parser.add_argument("--out", help="Write to this file instead of standard output.")

    def handle(self, *args, repository: str, number: int, format: str, out: str | None, **options):
        pull_request = PullRequest.objects.by_reference(repository, number).select_related("repository").first()
        if pull_request is None:
            raise CommandError(
                f"There is no pull request {repository}#{number} here: check the owner/name and the number, "
                "or import its review first (manage.py import_review)."
            )
        try:
            result = review_export(pull_request=pull_request, format=format)
        except RecheckError as error:
            raise CommandError(str(error)) from None
        if out is None:
            self.stdout.write(result.content, ending="")
            return
        try:
            Path(out).write_text(result.content, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Cannot write {out}: {error.strerror}.") from None
        self.stderr.write(f"Wrote the {format} export of {pull_request.reference} to {out}.")
