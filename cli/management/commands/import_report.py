from contextlib import nullcontext

from django.core.management.base import CommandError

from access.audit import audit_source
from core import vocabulary
from core.errors import RecheckError
from findings.services.reports import check_report_record
from reviews.models import Repository
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = (
        "Record a CI report of a commit: a JUnit XML report or a SARIF 2.1.0 log (the format is read from the "
        "file), or a bare --conclusion. The same report recorded again changes nothing; one that cannot be read "
        "keeps nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("repository", help="OWNER/NAME of a repository Recheck knows.")
        parser.add_argument("file", nargs="?", help="The report (JUnit XML or SARIF); leave it out with --conclusion.")
        parser.add_argument("--commit", required=True, help="The commit the report is of (a SHA).")
        parser.add_argument("--check", required=True, help="The check's name, as its CI gives it.")
        parser.add_argument("--conclusion", choices=vocabulary.CONCLUSIONS,
                            help="The check's conclusion; read from the report when left out.")
        parser.add_argument("--url", default="", help="The run on the CI.")
        parser.add_argument("--attempt", type=int, default=1, help="The run's attempt (default 1).")
        parser.add_argument("--app", default="", help="The app or CI that made the report.")
        parser.add_argument("--checkout-root", default="",
                            help="SARIF: the CI's checkout directory, taken off paths the tool wrote absolute to it.")

    def handle(self, *args, repository: str, file: str | None, **options):
        if not file and not options["conclusion"]:
            raise CommandError("Give a report file, or --conclusion for a check that sent none.")
        found = Repository.objects.filter(slug=repository.removesuffix(".git")).first()
        if found is None:
            raise CommandError(f"No repository {repository}: import a review of it first (import_review).")
        try:
            with audit_source("command"), (open(file, "rb") if file else nullcontext()) as body:
                recorded = check_report_record(
                    repository=found, sha=options["commit"], check=options["check"],
                    source=vocabulary.REPORT_COMMAND, conclusion=options["conclusion"] or "", file=body,
                    url=options["url"], attempt=options["attempt"], app=options["app"],
                    checkout_root=options["checkout_root"],
                )
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from None
        except RecheckError as error:
            raise CommandError(f"{file or 'The report'}: nothing was kept. {error}") from None
        report = recorded.report
        said = (f"{report.check_name} at {report.commit.sha[:12]}: "
                f"{vocabulary.conclusion_label(report.conclusion).lower()}")
        if report.format == vocabulary.REPORT_JUNIT:
            said += f", {report.tests} tests, {report.tests_failed} failed"
        elif report.format == vocabulary.REPORT_SARIF:
            said += f", {report.results} results"
        if recorded.created:
            self.stdout.write(self.style.SUCCESS(f"Recorded {said}."))
        else:
            self.stdout.write(f"Already recorded: {said}.")

