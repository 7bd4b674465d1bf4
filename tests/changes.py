"""A pull request whose changes git can be asked about: a real repository with a base commit on
main and a PR branch forked from it (a rename, an edit, a deletion, new modules in a new directory,
a binary file), the PR pinning its base and its head, a finding whose evidence names a changed
file, and the mirror fetched. `without_base=True` pins only the head, so the base is where the head
forks from main."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from findings.models import Evidence, Finding
from reviews.mirrors import repository_fetch
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from tests.gitrepo import GitRepoBuilder

APP = "".join(f"value_{n} = {n}\n" for n in range(1, 41))
GUIDE = "# Guide\n" + "".join(f"Some prose about the loader, line {n}.\n" for n in range(30))


@dataclass
class ChangedPullRequest:
    repo: GitRepoBuilder
    pull_request: PullRequest
    base: str
    head: str

    @property
    def numstat(self) -> dict[str, tuple[str, str, str | None]]:
        return self.repo.numstat(self.base, self.head)


def changed_pull_request(
    tmp_path, *, slug: str = "acme/changes", number: int = 12, without_base: bool = False, fetch: bool = True
) -> ChangedPullRequest:
    repo = GitRepoBuilder(tmp_path, name=slug.replace("/", "-"))
    base = (
        repo.write("src/app.py", APP)
        .write("docs/guide.md", GUIDE)
        .write("old.txt", "to be removed\nand this\n")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        .commit("base")
    )
    repo.branch("feature").checkout("feature")
    head = (
        repo.rename("docs/guide.md", "docs/manual/guide.md")
        .write("docs/manual/guide.md", GUIDE + "One more line.\n")
        .write("src/app.py", APP.replace("value_7 = 7", "value_7 = 'seven'").replace("value_9 = 9\n", ""))
        .delete("old.txt")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x01")
        .write("src/cookers/one.py", "ONE = 1\nTWO = 2\n")
        .write("src/cookers/two.py", "TWO = 2\n")
        .commit("Add the cookers")
    )
    # main moves on after the fork: the merge-base, not main's tip, is what the PR is compared with.
    repo.checkout("main").write("src/app.py", APP + "value_41 = 41\n").commit("main moves on")
    repository = Repository.objects.create(slug=slug, clone_url=repo.url, web_url=f"https://github.com/{slug}")
    pull_request = PullRequest.objects.create(repository=repository, number=number, title="Add the cookers")
    now = timezone.now()
    pins = [("head", head)] if without_base else [("base", base), ("head", head)]
    commits = {}
    for offset, (role, sha) in enumerate(pins):
        commits[role] = Commit.objects.create(repository=repository, sha=sha, resolved=True, message=role)
        pin = PinnedCommit.objects.create(pull_request=pull_request, commit=commits[role], role=role)
        PinnedCommit.objects.filter(pk=pin.pk).update(pinned_at=now - timedelta(days=2 - offset))
    finding = Finding.objects.create(
        pull_request=pull_request, number=1, kind=Finding.Kind.BLOCKER, title="The cooker hard-codes TWO"
    )
    Evidence.objects.create(
        finding=finding, position=1, kind=Evidence.Kind.PATTERN, path="src/cookers/*.py", regex="TWO",
        commit=commits["head"],
        expect=Evidence.Expect.PRESENT,
    )
    if fetch:
        repository_fetch(repository=repository)
    return ChangedPullRequest(repo=repo, pull_request=pull_request, base=base, head=head)
