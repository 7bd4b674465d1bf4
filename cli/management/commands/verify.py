import json
import sys

from django.core.management.base import CommandError

from access.audit import audit_source
from core.errors import RecheckError
from reviews.models import PullRequest
from reviews.selectors import pull_request_get
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = (
        "Verify every finding of a pull request at a commit (pinned as 'rebased' unless already pinned), "
        "or at every pinned commit, and store the results."
    )

    def add_arguments(self, parser):
        parser.add_argument("repository", metavar="OWNER/NAME", help="owner/name, or group/subgroup/name on GitLab.")
        parser.add_argument("number", type=int, metavar="NUMBER")
        parser.add_argument("--commit", metavar="SHA", help="Full or abbreviated SHA (default: every pinned commit).")
        parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
        parser.add_argument(
            "--no-fetch", action="store_true",
            help="Read the mirrors as they are, fetching neither the repository nor its submodules' "
            "(the result says when each submodule branch read was last fetched).",
        )

    def handle(self, *args, repository: str, number: int, commit: str | None, json: bool, no_fetch: bool = False,
               **options):
        try:
            pull_request = pull_request_get(slug=repository, number=number)
        except RecheckError as error:
            raise CommandError(str(error)) from None
        if not commit and not pull_request.pins.exists():
            raise CommandError(f"{pull_request.reference} has no pinned commit: give one with --commit SHA.")
        # Loaded once there is something to verify: the engine and the verification services are
        # most of what this command imports, and a mistyped PR should answer at start-up's cost.
        from findings.services.runs import verification_run_begin
        from findings.services.verification.run import verification_run_execute

        with audit_source("command"):
            try:
                # The service checks that the SHA names a commit (fetching, unless told not to, when
                # the mirror lacks it) before anything is written.
                run = verification_run_begin(pull_request=pull_request, commit_sha=commit, fetch=not no_fetch)
            except RecheckError as error:
                raise CommandError(f"Cannot verify {pull_request.reference} at {commit}: {error}") from None
        target = run.commit
        # The run fetches the repository and every submodule repository its evidence names.
        result = verification_run_execute(run=run, progress=self._progress_bar(), fetch=not no_fetch)
        self._clear_progress()

        commits = [target] if target else [pin.commit for pin in pull_request.pins.select_related("commit").in_order()]
        reports = [{**self._report(pull_request, each), "submodules": result["submodules"]} for each in commits]
        if json:
            self.stdout.write(_json_dumps(reports[0] if target else reports, indent=self.stdout.isatty()))
        else:
            for report in reports:
                self._print_table(report)
            for branch in result["submodules"]:
                if not branch["fetched"]:
                    when = f"last fetched {branch['fetched_at']}" if branch["fetched_at"] else "never fetched"
                    self.stdout.write(self.style.WARNING(
                        f"Submodule {branch['repository']} {branch['branch']} was read as it was: {when}."
                    ))

    def _report(self, pull_request: PullRequest, commit) -> dict:
        from findings.selectors.findings import verification_report

        commit.refresh_from_db()
        return {
            "pull_request": pull_request.reference,
            "commit": commit.sha,
            "findings": verification_report(pull_request, commit),
        }

    def _print_table(self, report: dict) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"{report['pull_request']} at {report['commit']}"))
        self.stdout.write(f"  {'#':>3}  {'verdict':<13} evidence")
        for finding in report["findings"]:
            # "waiting" where the finding waits for CI (vocabulary.verdict_reason), else its verdict.
            verdict = finding.get("verdict_reason") or finding["verdict"] or "-"
            style = {"present": self.style.WARNING, "error": self.style.ERROR, "likely_fixed": self.style.SUCCESS}
            line = f"  {finding['number']:>3}  {verdict:<13} "
            states = []
            for item in finding["evidence"]:
                where = f" {item['path']}:{item['start_line']}" if item["start_line"] else ""
                states.append(f"[{item['index']}] {item['kind']} {item['state']}{where}")
            self.stdout.write(style.get(verdict, str)(line) + "; ".join(states))
            for item in finding["evidence"]:
                if item["detail"] and item["state"] in ("error", "gone") or "moved" in (item["detail"] or ""):
                    self.stdout.write(f"        [{item['index']}] {item['detail']}")
                if item.get("successor"):
                    self.stdout.write(f"        [{item['index']}] {item['successor']['summary']}")

    def _progress_bar(self):
        if not sys.stderr.isatty():
            return None

        def show(done: int, total: int) -> None:
            width = 30
            filled = int(width * done / total) if total else width
            sys.stderr.write(f"\rVerifying [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
            sys.stderr.flush()

        return show

    def _clear_progress(self) -> None:
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 60 + "\r")


def _json_dumps(data, *, indent: bool) -> str:
    # Indented for a person at a terminal; compact for a pipe or a file, which json's C encoder
    # writes (an indent makes json fall back to its pure-Python encoder, several times slower on a
    # PR of thousands of items).
    return json.dumps(data, indent=2 if indent else None)
