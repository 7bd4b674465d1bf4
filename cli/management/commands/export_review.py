from pathlib import Path

from django.core.management.base import CommandError

from findings.exchange import EXPORT_FORMATS, review_export
from core.errors import RecheckError
from reviews.selectors import pull_request_get
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = "Export a pull request's review as a bundle (YAML, re-importable), SARIF 2.1.0 or Markdown."

    def add_arguments(self, parser):
        parser.add_argument("repository", help="owner/name")
        parser.add_argument("number", type=int, help="The pull request number.")
        parser.add_argument("--format", default="bundle", help=f"One of {', '.join(EXPORT_FORMATS)} (default: bundle).")
        parser.add_argument("--out", help="Write to this file instead of standard output.")

    def handle(self, *args, repository: str, number: int, format: str, out: str | None, **options):
        try:
            pull_request = pull_request_get(slug=repository, number=number)
        except RecheckError as error:
            raise CommandError(str(error)) from None
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
