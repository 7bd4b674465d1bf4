from django.core.management.base import CommandError

from access.audit import audit_source
from cli.management.base import OperationalCommand
from core.errors import RecheckError
from reviews.selectors import pull_request_get


class Command(OperationalCommand):
    help = (
        "Read a pull request's review threads from its forge (GitHub's review comments, a GitLab merge "
        "request's diff discussions) into its inbox (each comment once, by its id: "
        "edits applied, deleted comments marked), and act on the /recheck commands among them."
    )

    def add_arguments(self, parser):
        parser.add_argument("repository", metavar="OWNER/NAME or GROUP/SUBGROUP/PROJECT")
        parser.add_argument("number", type=int, metavar="NUMBER")

    def handle(self, *args, repository: str, number: int, **options):
        try:
            pull_request = pull_request_get(slug=repository, number=number)
        except RecheckError as error:
            raise CommandError(str(error)) from None
        from forge.threads.sync import review_threads_sync

        with audit_source("command"):
            outcome = review_threads_sync(pull_request=pull_request)
        if not outcome.ok:
            raise CommandError(outcome.message)
        self.stdout.write(outcome.message)
        for line in outcome.commands:
            self.stdout.write(line)
