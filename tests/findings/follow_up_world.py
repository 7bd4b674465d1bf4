"""The follow-ups' story in a real git repository, for the domain, the API, the site and the
forge tests alike: a pull request with two open cleanups (and a blocker fixed at its head) is
merged into main with a merge commit; then one commit on main moves the first cleanup's code to
another file and another removes the second's."""
from dataclasses import dataclass

from findings.models import FollowUp
from findings.services.follow_ups.checking import follow_ups_verify
from findings.services.follow_ups.opening import follow_ups_open_on_merge
from findings.services.resolution import finding_resolve
from findings.services.review_import import review_import
from reviews.models import Commit, PullRequest
from tests.gitrepo import GitRepoBuilder

SLUG = "acme/loader"
HELPERS = "def helper():\n    return retry_forever()\n"
LOADER = "import os\n\n" + "".join(f"line_{n} = {n}\n" for n in range(1, 11)) + HELPERS + "\nDEBUG = True\n"


@dataclass
class World:
    repo: GitRepoBuilder
    pull_request: PullRequest
    reviewed: str
    merge: str
    moved: str = ""
    fixed: str = ""

    def follow_up(self, number: int) -> FollowUp:
        return FollowUp.objects.get(finding__pull_request=self.pull_request, finding__number=number)


def merged_world(tmp_path, *, merge: bool = True) -> World:
    """The PR reviewed on its branch, its blocker fixed at the PR's head; merged into main unless
    not `merge` (the merge commit is made on main either way, so a test can name it)."""
    repo = GitRepoBuilder(tmp_path)
    repo.write("src/loader.py", "import os\n").commit("start")
    repo.branch("feature").checkout("feature")
    repo.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n")
    reviewed = repo.commit("the pull request")
    review_import(data={
        "repository": {"slug": SLUG, "clone_url": str(repo.path), "web_url": "https://github.com/acme/loader"},
        "pull_request": {"number": 7, "title": "Loader"},
        "commits": [{"sha": reviewed, "role": "reviewed"}],
        "findings": [
            {"number": 1, "kind": "blocker", "title": "Debug config shipped",
             "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}]},
            {"number": 2, "kind": "cleanup", "title": "The helper retries forever",
             "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 13, "end_line": 14}]},
            {"number": 3, "kind": "cleanup", "title": "DEBUG left on",
             "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 16, "end_line": 16}]},
        ],
    })
    pull_request = PullRequest.objects.get(number=7)
    head = repo.delete("config.yaml").commit("drop the debug config")
    commit = Commit.objects.create(repository=pull_request.repository, sha=head, resolved=True)
    finding_resolve(finding=pull_request.findings.get(number=1), status="fixed", actor=None, source="api",
                    commit=commit, note="Removed.")
    repo.checkout("main")
    repo.git("merge", "--no-ff", "--quiet", "-m", "Merge pull request #7", "feature")
    merge_sha = repo.head()
    world = World(repo, pull_request, reviewed, merge_sha)
    if merge:
        follow_ups_open_on_merge(pull_request=pull_request, merge_sha=merge_sha)
    return world


def push_the_move_and_the_fix(world: World) -> World:
    """Two commits on main: the helper moves to another file, then DEBUG is removed."""
    repo = world.repo
    text = repo.read("src/loader.py").replace(HELPERS, "")
    repo.write("src/loader.py", text).write("src/helpers.py", "# moved here\n\n" + HELPERS)
    world.moved = repo.commit("move the helper")
    repo.write("src/loader.py", repo.read("src/loader.py").replace("\nDEBUG = True\n", ""))
    world.fixed = repo.commit("no DEBUG")
    return world


def check(world: World, sha: str = ""):
    return follow_ups_verify(repository=world.pull_request.repository, sha=sha)


def checked_world(tmp_path) -> World:
    """The world the pages and the API read: merged with two open cleanups, then the move and the
    fix pushed, checked at the merge commit and at the default branch's head."""
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world, world.merge)
    check(world)
    return world
