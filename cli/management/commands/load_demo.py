from collections import Counter

from django.core.management.base import CommandError

from cli.demo import demo_load
from cli.demo.toolkit_repository import toolkit_path
from findings.selectors.findings import pull_request_pins
from findings.services.verification.run import pull_request_verify
from core.errors import RecheckError
from cli.management.base import OperationalCommand


class Command(OperationalCommand):
    help = (
        "Load the demo data: the NVIDIA-NeMo/RL #4108 review, and a sample review of a small local git "
        "repository verified at each of its pinned commits, with a GitLab-shaped merge request of the same "
        "repository in nested groups. Safe to run again: nothing is duplicated."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-verify", action="store_true", help="Import only; do not verify the sample.")

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
            self._verify_sample(loaded.sample)
            self._verify_sample(loaded.gitlab_sample)

    def _verify_sample(self, pull_request) -> None:
        for pin in pull_request_pins(pull_request):
            verifications = pull_request_verify(pull_request=pull_request, commit=pin.commit)
            counts = Counter(verification.get_verdict_display().lower() for verification in verifications)
            summary = ", ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items()))
            self.stdout.write(f"  verified {pull_request.reference} at {pin.commit.short_sha} ({pin.role}): {summary}")
