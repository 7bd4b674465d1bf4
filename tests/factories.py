"""Test data, built the way the app builds it."""
import hashlib
import itertools

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from findings.models import Evidence, EvidenceResult, Finding, FindingEvent, Verification
from reviews.models import Commit, PinnedCommit, PullRequest, Repository

_sha_counter = itertools.count(1)


def make_sha(seed: str | None = None) -> str:
    return hashlib.sha1((seed or f"commit-{next(_sha_counter)}").encode()).hexdigest()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("correct horse battery staple")

    @factory.post_generation
    def permissions(user, create, extracted, **kwargs):
        """`permissions=["findings.change_finding"]` grants those permissions."""
        for name in extracted or []:
            app_label, codename = name.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


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
