"""A review of a real repository, fetched and verified at two commits: finding 1's evidence is
gone at the fix (likely fixed there) and still holds at the reviewed commit; finding 2's holds at
both. What the decision tests mark fixed, dismiss and reopen."""
from dataclasses import dataclass

from findings.models import Finding
from reviews.models import PullRequest
from tests.findings.services.test_verification import LOADER, import_review, verify
from tests.gitrepo import GitRepoBuilder


@dataclass
class FetchedReview:
    repo: GitRepoBuilder
    pull_request: PullRequest
    reviewed: str
    fix: str

    @property
    def fixed_one(self) -> Finding:
        """Likely fixed at the latest verified pin (the fix)."""
        return self.pull_request.findings.get(number=1)

    @property
    def still_there(self) -> Finding:
        """Still present at every pin."""
        return self.pull_request.findings.get(number=2)


def reviewed_repo(tmp_path) -> GitRepoBuilder:
    repo = GitRepoBuilder(tmp_path)
    repo.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n")
    repo.reviewed = repo.commit("reviewed")
    repo.write("src/loader.py", LOADER.replace("tolerance = 0", "tolerance = 100"))
    repo.fix = repo.commit("Tolerance back to 100")
    return repo


def fetched_review(tmp_path) -> FetchedReview:
    """Imported, fetched (verifying fetches the mirror) and verified at the reviewed commit and
    at the fix, pinned after it."""
    repo = reviewed_repo(tmp_path)
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    verify(pull_request, repo.fix)
    return FetchedReview(repo=repo, pull_request=pull_request, reviewed=repo.reviewed, fix=repo.fix)
