from pathlib import Path

from django.core.management.base import CommandError

from presentation.companion import companion_render, with_scripts
from core.errors import RecheckError
from reviews.selectors import pull_request_get
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = (
        "Render the three companion pages of a pull request (at its latest verified commit) as "
        "self-contained HTML, store them, and write index.html, blockers.html and cleanups.html to --out."
    )

    def add_arguments(self, parser):
        parser.add_argument("repository", help="owner/name")
        parser.add_argument("number", type=int, help="The pull request's number.")
        parser.add_argument("--out", help="Directory to write the three files to (created if needed).")

    def handle(self, *args, repository: str, number: int, out: str | None, **options):
        try:
            pull_request = pull_request_get(slug=repository, number=number)
        except RecheckError as error:
            raise CommandError(str(error)) from None
        pages = companion_render(pull_request=pull_request)
        sha = pages.commit.short_sha if pages.commit else "no verified commit"
        if not out:
            self.stdout.write(self.style.SUCCESS(f"Rendered and stored the companion pages of {pull_request} ({sha})."))
            return
        directory = Path(out)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            files = with_scripts({
                "index.html": pages.index_html,
                "blockers.html": pages.blockers_html,
                "cleanups.html": pages.cleanups_html,
            })
            # A page with a diagram links the one copy of Mermaid written beside the pages.
            for name, text in files.items():
                (directory / name).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Cannot write to {directory}: {error.strerror}.") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote index.html, blockers.html and cleanups.html of {pull_request} ({sha}) to {directory}"
                + (" with the one copy of Mermaid their diagrams link." if len(files) > 3 else ".")
            )
        )
