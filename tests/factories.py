"""Test data, built the way the app builds it."""
import hashlib
import itertools

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.utils import timezone

from findings.models import Evidence, EvidenceResult, Finding, FindingEvent, Verification
from reviews.models import Commit, PinnedCommit, PullRequest, Repository

_sha_counter = itertools.count(1)


def make_sha(seed: str | None = None) -> str:
    return hashlib.sha1((seed or f"commit-{next(_sha_counter)}").encode()).hexdigest()


# Every factory user signs in with this password.
USER_PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(USER_PASSWORD)

    @factory.post_generation
    def permissions(user, create, extracted, **kwargs):
        """`permissions=["findings.change_finding"]` grants those permissions."""
        for name in extracted or []:
            app_label, codename = name.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))

    @factory.post_generation
    def groups(user, create, extracted, **kwargs):
        """`groups=["Reviewer"]` puts the user in the roles' groups (made by a migration)."""
        for name in extracted or []:
            user.groups.add(Group.objects.get(name=name))


class RepositoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Repository
        django_get_or_create = ["slug"]

    slug = factory.Sequence(lambda n: f"acme/project{n}")
    clone_url = factory.LazyAttribute(lambda repo: f"https://example.com/{repo.slug}.git")
    web_url = factory.LazyAttribute(lambda repo: f"https://github.com/{repo.slug}")


class PullRequestFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PullRequest

    repository = factory.SubFactory(RepositoryFactory)
    number = factory.Sequence(lambda n: 100 + n)
    title = factory.Sequence(lambda n: f"Add feature {n}")
    before = "The loader handled one family of datasets."
    change = "Adds a second family."


class CommitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Commit

    repository = factory.SubFactory(RepositoryFactory)
    sha = factory.LazyFunction(make_sha)
    resolved = factory.LazyAttribute(lambda commit: len(commit.sha) == 40)
    message = factory.Sequence(lambda n: f"Change number {n}")
    author = "A. Reviewer"
    committed_at = factory.LazyFunction(timezone.now)


class PinnedCommitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PinnedCommit

    pull_request = factory.SubFactory(PullRequestFactory)
    commit = factory.SubFactory(CommitFactory, repository=factory.SelfAttribute("..pull_request.repository"))
    role = PinnedCommit.Role.REVIEWED


class FindingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Finding

    pull_request = factory.SubFactory(PullRequestFactory)
    number = factory.Sequence(lambda n: n + 1)
    kind = Finding.Kind.BLOCKER
    caught_by = Finding.CaughtBy.NONE
    title = factory.Sequence(lambda n: f"Finding {n}")
    summary = "Something that has to change."
    body = "The **body** explains it."
    fix = "Change it."
    path = "src/loader.py"
    line = 42


class EvidenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Evidence

    finding = factory.SubFactory(FindingFactory)
    position = factory.Sequence(lambda n: n)
    kind = Evidence.Kind.SNIPPET
    commit = factory.SubFactory(
        CommitFactory, repository=factory.SelfAttribute("..finding.pull_request.repository")
    )
    path = "src/loader.py"
    start_line = 40
    end_line = 42
    text = "def load():\n    return None\n"


class VerificationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Verification

    finding = factory.SubFactory(FindingFactory)
    commit = factory.SubFactory(CommitFactory, repository=factory.SelfAttribute("..finding.pull_request.repository"))
    verdict = "present"
    checked_at = factory.LazyFunction(timezone.now)


class EvidenceResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EvidenceResult

    verification = factory.SubFactory(VerificationFactory)
    evidence = factory.SubFactory(EvidenceFactory, finding=factory.SelfAttribute("..verification.finding"))
    state = EvidenceResult.State.HOLDS
    path = factory.SelfAttribute("evidence.path")
    start_line = factory.SelfAttribute("evidence.start_line")
    end_line = factory.SelfAttribute("evidence.end_line")


class FindingEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FindingEvent

    finding = factory.SubFactory(FindingFactory)
    from_status = ""
    to_status = "open"
    source = FindingEvent.Source.IMPORT


# --- A reviewed pull request, as the companion pages show it ----------------------------------

BLOCKER_TITLES = [
    ("ci", "The Megatron-Bridge pin points off the main branch"),
    ("ci", "A personal soak config turns secrets-detector red"),
    ("ci", "29 of the PR's own tests fail, in the lane that collects them"),
    ("none", "A broken dataset never stops the job"),
    ("none", "An omni run trains with no audio, and says nothing"),
    ("none", "Every media file is decoded, then thrown away"),
    ("none", "A conversation ending on a user turn crashes"),
    ("none", "Three shipped recipes stop loading"),
    ("none", "Audio runs die once training has already started"),
]
CLEANUP_TITLES = [
    "Two cookers share a copy-pasted media loader",
    "The task encoder registry is a module-level dict",
    "Config dataclasses repeat their defaults in YAML",
    "Test helpers live inside the test modules",
    "Debug prints left in the packing loop",
]
SNIPPET = (
    "    def handle_exception(self, sample, exc):\n"
    "        # Energon counts consecutive failures; 0 switches the check off.\n"
    "        self.failure_tolerance = 0\n"
    "        print(f\"failed {self.failures}/{self.failure_tolerance} times in a row\")\n"
)


class ReviewedPullRequest:
    """What `reviewed_pull_request` built: the PR, its pins (base, reviewed, rebased) and findings."""

    def __init__(self, pull_request, pins, blockers, cleanups):
        self.pull_request = pull_request
        self.pins = pins
        self.blockers = blockers
        self.cleanups = cleanups

    @property
    def findings(self):
        return self.blockers + self.cleanups

    @property
    def latest_commit(self):
        return self.pins[-1].commit


def reviewed_pull_request(*, blockers: int = 6, cleanups: int = 2, slug: str = "acme/rl", number: int = 4108):
    """A PR the way a reviewer leaves it: blockers caught by CI and by nothing, cleanups, three
    pinned commits (base unverified, reviewed and rebased verified), snippet evidence on every
    finding plus a pattern, a gitlink and a note, and one piece of evidence that moved."""
    from datetime import timedelta

    repository = RepositoryFactory(slug=slug)
    pull_request = PullRequestFactory(
        repository=repository,
        number=number,
        title="Nemotron multimodal SFT: cookers and task encoders",
        url=f"https://github.com/{slug}/pull/{number}",
        before="The Energon SFT loader handled **one** family of multimodal datasets.",
        change="Adds a second family for Nemotron models — ten cookers, three task-encoder modules.",
        status_note="Each finding has its own review comment, linked from its section.",
    )
    now = timezone.now()
    pins = []
    for offset, (role, message) in enumerate(
        [("base", "Merge main"), ("reviewed", "working config?"), ("rebased", "Rebase on main")]
    ):
        commit = CommitFactory(repository=repository, message=message, sha=make_sha(f"{slug}-{number}-{role}"))
        pin = PinnedCommitFactory(pull_request=pull_request, commit=commit, role=role, note=f"The {role} commit.")
        PinnedCommit.objects.filter(pk=pin.pk).update(pinned_at=now - timedelta(days=3 - offset))
        pins.append(pin)
    reviewed, rebased = pins[1].commit, pins[2].commit

    def add(kind, number_, title, caught_by):
        finding = FindingFactory(
            pull_request=pull_request,
            number=number_,
            kind=kind,
            caught_by=caught_by,
            title=title,
            summary=f"Summary of {title.lower()}.",
            body="Energon counts consecutive failures and raises past a limit. This PR sets it to `0`.",
            fix="Set it to **100** and restore the comment.",
            review_comment_url=f"https://github.com/{slug}/pull/{number}#discussion_r{1000 + number_}",
            path=f"nemo_rl/data/module_{number_}.py",
            line=250 + number_,
        )
        snippet = EvidenceFactory(
            finding=finding, position=1, commit=reviewed, path=finding.path,
            start_line=259, end_line=262, text=SNIPPET, caption="The tolerance is switched off.",
        )
        for commit in (reviewed, rebased):
            verification = VerificationFactory(finding=finding, commit=commit, verdict="present")
            # On the rebased commit the first finding's snippet moved down the file.
            moved = commit == rebased and number_ == 1
            EvidenceResultFactory(
                verification=verification, evidence=snippet, state="holds", path=snippet.path,
                start_line=301 if moved else 259, end_line=304 if moved else 262,
            )
        return finding

    titles = (BLOCKER_TITLES * 10)[:blockers]
    blocker_findings = [
        add(Finding.Kind.BLOCKER, index + 1, title if index < len(BLOCKER_TITLES) else f"{title} ({index + 1})",
            caught_by)
        for index, (caught_by, title) in enumerate(titles)
    ]
    cleanup_findings = [
        add(Finding.Kind.CLEANUP, blockers + index + 1, (CLEANUP_TITLES * 10)[index], "none")
        for index in range(cleanups)
    ]
    if blocker_findings:
        first = blocker_findings[0]
        extra = [
            EvidenceFactory(finding=first, position=2, kind="pattern", commit=reviewed, path="nemo_rl/**/*.py",
                            regex=r"failure_tolerance\s*=\s*0", expect="present", text="", start_line=None,
                            end_line=None),
            EvidenceFactory(finding=first, position=3, kind="gitlink", commit=reviewed, path="3rdparty/Megatron-Bridge",
                            sha=make_sha("bridge-feature-head"), text="", start_line=None, end_line=None),
            EvidenceFactory(finding=first, position=4, kind="note", commit=None, path="",
                            text="CI's submodule *fast-forward* job refuses it.", start_line=None, end_line=None),
        ]
        verification = Verification.objects.get(finding=first, commit=rebased)
        EvidenceResultFactory(verification=verification, evidence=extra[0], state="holds",
                              path="nemo_rl/data/generic_sft.py", start_line=None, end_line=None)
        EvidenceResultFactory(verification=verification, evidence=extra[1], state="gone", path="",
                              start_line=None, end_line=None, detail="The submodule is now pinned elsewhere.")
        EvidenceResultFactory(verification=verification, evidence=extra[2], state="unchecked", path="",
                              start_line=None, end_line=None)
    store_state(pull_request)
    return ReviewedPullRequest(pull_request, pins, blocker_findings, cleanup_findings)


def store_state(pull_request) -> None:
    """Store the PR's review state for its current generation, as the task that verified it does
    (`verification_run_finish`): what the pages, the API and the gate then read."""
    from findings.state.stored import pull_request_state_derive

    pull_request_state_derive(pull_request_id=pull_request.pk)


def store_states() -> None:
    """Store the review state of every pull request (see `store_state`)."""
    for pk in PullRequest.objects.values_list("pk", flat=True):
        store_state(PullRequest(pk=pk))


def make_api_token(user, *, scopes=("read", "verify", "import", "resolve", "settings"), days: int = 30, repositories=(),
                   name: str = "test token") -> str:
    """A stored token for `user` and its secret, as `Authorization: Token <secret>` sends it. Made
    directly (not through api_token_create) so a persona can hold a scope its user lacks the
    permission for, and the API's own refusal shows."""
    from datetime import timedelta

    from access.models import ApiToken

    token, secret = ApiToken.objects.create(user=user, expiry=timedelta(days=days), name=name, scopes=list(scopes),
                                            limited=bool(repositories))
    if repositories:
        token.repositories.set(repositories)
    return secret


def large_reviewed_pull_request(*, findings: int, slug: str = "acme/large", number: int = 1, kind: str = ""):
    """A PR of `findings` findings (three blockers to each cleanup, or all of one `kind`; a third
    caught by CI), each with a snippet of distinct code, verified at its rebased commit: made with bulk
    inserts, so thousands take a second."""
    repository = RepositoryFactory(slug=slug)
    pull_request = PullRequestFactory(repository=repository, number=number, title="A very large pull request")
    reviewed = CommitFactory(repository=repository, sha=make_sha(f"{slug}-{number}-reviewed"))
    rebased = CommitFactory(repository=repository, sha=make_sha(f"{slug}-{number}-rebased"))
    PinnedCommitFactory(pull_request=pull_request, commit=reviewed, role="reviewed")
    PinnedCommitFactory(pull_request=pull_request, commit=rebased, role="rebased")
    rows = Finding.objects.bulk_create(
        Finding(
            pull_request=pull_request, number=n, kind=kind or ("cleanup" if n % 4 == 0 else "blocker"),
            caught_by="ci" if n % 3 == 0 else "none", title=f"Finding number {n}", summary=f"What {n} is about.",
            body=f"The loader **drops** sample {n} when the tolerance is `0`.", path=f"pkg/module_{n}.py", line=10,
        )
        for n in range(1, findings + 1)
    )
    evidence = Evidence.objects.bulk_create(
        Evidence(
            finding=finding, position=0, kind="snippet", commit=reviewed, path=finding.path, start_line=10,
            end_line=12, text=f"def load_{finding.number}(sample):\n    tolerance = 0\n    return sample\n",
        )
        for finding in rows
    )
    verifications = Verification.objects.bulk_create(
        Verification(finding=finding, commit=rebased, verdict="present", checked_at=timezone.now()) for finding in rows
    )
    EvidenceResult.objects.bulk_create(
        EvidenceResult(verification=verification, evidence=item, state="holds", path=item.path, start_line=10,
                       end_line=12)
        for verification, item in zip(verifications, evidence, strict=True)
    )
    store_state(pull_request)
    return pull_request
