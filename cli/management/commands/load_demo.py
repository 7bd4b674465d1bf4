from collections import Counter

from django.core.management.base import CommandError

from cli.demo import demo_load
from cli.demo.sample_ci import sample_ci_run
from cli.demo.toolkit_repository import toolkit_path
from findings.selectors.findings import pull_request_pins
from findings.services.verification.run import pull_request_verify
from core import vocabulary
from core.errors import RecheckError
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = (
        "Load the demo data: the NVIDIA-NeMo/RL #4108 review, and a sample review of a small local git "
        "repository verified at each of its pinned commits (after running the sample's own tests and linter "
        "there and recording their reports, where pytest and ruff are installed), with a GitLab-shaped merge "
        "request of the same repository in nested groups. Safe to run again: nothing is duplicated."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-verify", action="store_true",
                            help="Import only: do not run the sample's CI nor verify the sample.")

    def handle(self, *args, no_verify: bool, **options):
        try:
            loaded = demo_load()
        except RecheckError as error:
            raise CommandError(f"The demo could not be loaded: {error}") from None
        loaded_names = ", ".join(pr.reference for pr in (loaded.review, loaded.sample, loaded.gitlab_sample)
                                 if pr is not None)
        self.stdout.write(self.style.SUCCESS(f"Loaded {loaded_names}."))
        self.stdout.write(
            f"  {loaded.review.reference} is left unverified: checking it means cloning the whole repository "
            "over the network. Start a verification from its page when you want one."
        )
        if loaded.sample is None:
            self.stdout.write(
                self.style.WARNING(
                    "  The offline sample was left out: its repository is a local path, and "
                    "RECHECK_ALLOW_LOCAL_REPOSITORIES is off."
                )
            )
            return
        self.stdout.write(f"  sample repository: {loaded.sample_repository.path}")
        self.stdout.write(f"  its vendor/toolkit submodule: {toolkit_path(loaded.sample_repository.path)}")
        if not no_verify:
            self._run_sample_ci(loaded)
            self._verify_sample(loaded.sample)
            self._verify_sample(loaded.gitlab_sample)

    def _run_sample_ci(self, loaded) -> None:
        """The sample's own tests and linter at each pin, recorded as its CI's reports, before the
        verification reads them. A tool that is missing is said, never stood in for."""
        for run in sample_ci_run(loaded.sample, loaded.sample_repository):
            if run.problem:
                self.stdout.write(self.style.WARNING(f"  {run.said}"))
            else:
                self.stdout.write(f"  the sample's CI: {run.said}")

    def _verify_sample(self, pull_request) -> None:
        for pin in pull_request_pins(pull_request):
            verifications = pull_request_verify(pull_request=pull_request, commit=pin.commit)
            # In the words the pages use: "waiting for CI" where a check item waits for a report.
            counts = Counter(vocabulary.finding_verdict_phrase(verification.verdict, verification.verdict_reason)
                             for verification in verifications)
            summary = ", ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items()))
            self.stdout.write(f"  verified {pull_request.reference} at {pin.commit.short_sha} ({pin.role}): {summary}")
