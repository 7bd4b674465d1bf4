"""A review with a real git repository, for the timeline and what is delivered of it: two blockers,
one pushed fixed while the other, marked fixed by a person, comes back.

    world = TimelineWorld(tmp_path, actor=user)
    world.imported(); world.first_push(); world.second_push()

After `first_push` blocker 2's config file is gone (likely fixed) and blocker 1's line still holds;
the person marks blocker 2 fixed. `second_push` fixes blocker 1 and brings blocker 2's file back:
exactly two events, a verdict of blocker 1 and blocker 2 regressed. Each step reads the state as
a reader would, so each is derived (and its events written) on its own."""
from findings.models import Finding, ReviewEvent
from findings.services.resolution import finding_resolve
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from findings.state.stored import pull_request_state
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_pin_commit
from tests.gitrepo import GitRepoBuilder

BAD, GOOD = "    tolerance = 0\n", "    tolerance = 100\n"


def loader(*, fixed: bool) -> str:
    lines = [f"line {n}\n" for n in range(1, 21)]
    lines[9] = GOOD if fixed else BAD
    return "".join(lines)


class TimelineWorld:
    def __init__(self, tmp_path, *, actor=None, slug: str = "acme/loader", number: int = 7):
        self.slug, self.number, self.actor = slug, number, actor
        self.repo = GitRepoBuilder(tmp_path, name=f"repo-{slug.replace('/', '-')}-{number}")
        self.reviewed = self.repo.write("src/loader.py", loader(fixed=False)).write("config.yaml", "debug: true\n") \
            .commit("reviewed")

    def bundle(self) -> dict:
        return {
            "repository": {"slug": self.slug, "clone_url": str(self.repo.path),
                           "web_url": f"https://github.com/{self.slug}"},
            "pull_request": {"number": self.number, "title": "Loader"},
            "commits": [{"sha": self.reviewed, "role": "reviewed"}],
            "findings": [
                {"number": 1, "kind": "blocker", "title": "Tolerance zero never stops",
                 "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": 10}]},
                {"number": 2, "kind": "blocker", "title": "Debug flag left on",
                 "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}]},
            ],
        }

    def imported(self):
        review_import(data=self.bundle())
        self.pull_request = PullRequest.objects.select_related("repository").get(
            repository__slug=self.slug, number=self.number)
        self.read()
        return self

    def push(self, message: str) -> Commit:
        sha = self.repo.commit(message)
        commit, _ = Commit.objects.get_or_create(repository=self.pull_request.repository, sha=sha,
                                                 defaults={"resolved": True})
        pull_request_pin_commit(pull_request=self.pull_request, commit=commit, role="head")
        pull_request_verify(pull_request=self.pull_request, commit=commit)
        self.read()
        return commit

    def first_push(self):
        self.repo.delete("config.yaml")
        self.head = self.push("drop the debug config")
        finding_resolve(finding=self.finding(2), status="fixed", actor=self.actor, source="site", commit=self.head,
                        note="Config is gone.")
        self.read()
        return self

    def second_push(self):
        self.repo.write("src/loader.py", loader(fixed=True)).write("config.yaml", "debug: true\n")
        self.head = self.push("fix the tolerance, debug config back")
        return self

    def finding(self, number: int) -> Finding:
        return Finding.objects.select_related("pull_request__repository").get(pull_request=self.pull_request,
                                                                              number=number)

    def read(self) -> dict:
        """The state as a reader reads it: derived and stored (with its events) when it is new."""
        return pull_request_state(pull_request_id=self.pull_request.pk)

    def events(self):
        return ReviewEvent.objects.filter(pull_request=self.pull_request).order_by("id")
