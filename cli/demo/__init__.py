"""The demo data a newcomer sees on first start: the real #4108 review (shipped as a bundle), and a
sample review of a small git repository built on this machine, which verifies end to end offline,
with a GitLab-shaped review of the same repository (a merge request of a project in nested groups).

Loading is idempotent: the bundles are imported by key (repository, PR and finding numbers) and the
sample repository is rebuilt to the same SHAs."""
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from cli.demo.gitlab_sample import gitlab_sample_bundle
from cli.demo.sample_bundle import sample_bundle
from cli.demo.sample_repository import SampleRepository, sample_repository_build
from findings.services.review_import import parse_bundle, review_import
from reviews.models import PullRequest

REVIEW_4108 = Path(__file__).with_name("review-4108.yaml")


@dataclass
class DemoLoad:
    review: PullRequest  # NVIDIA-NeMo/RL#4108
    sample: PullRequest | None  # recheck-demo/sample#1, unless local repositories are off
    sample_repository: SampleRepository | None
    # recheck-demo/gitlab/sample-loader!2, beside the sample when it is loaded
    gitlab_sample: PullRequest | None = None


def demo_sample_path() -> Path:
    """Beside the mirrors, not among them: the sample is a remote to fetch from, not a mirror."""
    return Path(settings.RECHECK_MIRROR_ROOT).parent / "demo" / "sample.git"


def demo_load(*, sample_path: Path | None = None) -> DemoLoad:
    """Import the #4108 review; build the sample repository and import its review.

    The sample's clone URL is a local path, which a server with RECHECK_ALLOW_LOCAL_REPOSITORIES
    off neither accepts nor fetches: there the sample is left out."""
    review = _import(parse_bundle(REVIEW_4108.read_bytes()))
    if not settings.RECHECK_ALLOW_LOCAL_REPOSITORIES:
        return DemoLoad(review=review, sample=None, sample_repository=None)
    repository = sample_repository_build(sample_path or demo_sample_path())
    sample = _import(sample_bundle(repository))
    gitlab_sample = _import(gitlab_sample_bundle(repository))
    return DemoLoad(review=review, sample=sample, sample_repository=repository, gitlab_sample=gitlab_sample)


def _import(data: dict) -> PullRequest:
    report = review_import(data=data)
    slug, number = report.pull_request.rsplit("#", 1)
    return PullRequest.objects.select_related("repository").get(repository__slug=slug, number=int(number))
