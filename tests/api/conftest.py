"""Personas for the API (anonymous reader, token without permission, token with permission, staff
session) and a reviewed pull request to read, gate and verify."""
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from findings.models import Finding
from reviews.models import PinnedCommit
from tests.gitrepo import GitRepoBuilder
from tests.queued import record_queued
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    UserFactory,
    VerificationFactory,
    make_api_token,
)

API_PERMISSIONS = ["findings.import_review", "findings.verify_pullrequest", "findings.resolve_finding"]


@pytest.fixture(autouse=True)
def fresh_cache():
    # Throttle counts and cached answers and pages live in the cache, which outlives a test's
    # database transaction.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def queued_tasks(monkeypatch):
    """Enqueuing a verification records the run id instead of running it: the verification itself
    is another module's business, and these tests are about what the API asks for."""
    from findings import tasks

    return record_queued(monkeypatch, tasks.run_verification)


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {make_api_token(user)}")
    client.user = user
    return client


@pytest.fixture
def anonymous_reader() -> APIClient:
    return APIClient()


@pytest.fixture
def token_without_permission(db) -> APIClient:
    return token_client(UserFactory(username="onlooker-bot"))


@pytest.fixture
def token_with_permission(db) -> APIClient:
    return token_client(UserFactory(username="ci-bot", permissions=API_PERMISSIONS))


@pytest.fixture
def staff_session(staff_maintainer) -> APIClient:
    """The browsable API in a browser: a session, with CSRF checks as a browser would get them."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(staff_maintainer)
    client.user = staff_maintainer
    return client


@pytest.fixture
def review(db):
    """acme/loader#4108: reviewed at one commit, pushed again (the head), verified at the head.

    Blockers 1 (open, present at head), 2 (open, likely fixed at head), 3 (fixed, present again at
    head), 5 (dismissed); cleanup 4 (open)."""
    repository = RepositoryFactory(slug="acme/loader")
    pull_request = PullRequestFactory(repository=repository, number=4108, title="Load a second family")
    reviewed = PinnedCommitFactory(pull_request=pull_request, role=PinnedCommit.Role.REVIEWED).commit
    head = PinnedCommitFactory(pull_request=pull_request, role=PinnedCommit.Role.HEAD).commit
    findings = {
        1: FindingFactory(pull_request=pull_request, number=1, title="Tolerance lowered to 10", path="src/check.py"),
        2: FindingFactory(pull_request=pull_request, number=2, title="Cache key ignores dtype", path="src/cache.py"),
        3: FindingFactory(
            pull_request=pull_request, number=3, title="Lock released early", status=Finding.Status.FIXED,
            resolved_at=timezone.now(), resolved_commit=reviewed,
        ),
        4: FindingFactory(pull_request=pull_request, number=4, kind=Finding.Kind.CLEANUP, title="Rename helper",
                          caught_by=Finding.CaughtBy.CI, summary="The loader helper has a vague name."),
        5: FindingFactory(
            pull_request=pull_request, number=5, title="Out of scope", status=Finding.Status.DISMISSED,
            resolved_at=timezone.now(), resolution_note="Another PR.",
        ),
    }
    for finding in findings.values():
        EvidenceFactory(finding=finding, commit=reviewed, position=0)
    verdicts = {1: "present", 2: "likely_fixed", 3: "present", 4: "present", 5: "present"}
    verifications = {}
    for number, verdict in verdicts.items():
        verification = VerificationFactory(finding=findings[number], commit=head, verdict=verdict)
        EvidenceResultFactory(verification=verification, evidence=findings[number].evidence.get())
        verifications[number] = verification
    return SimpleNamespace(
        repository=repository, pull_request=pull_request, reviewed=reviewed, head=head, findings=findings,
        verifications=verifications, new_commit=lambda: CommitFactory(repository=repository),
    )


@pytest.fixture
def repo(tmp_path, settings):
    """A real repository with the loader the verification tests know (tests.findings.services.test_verification),
    recorded at its `reviewed` commit by their `import_review`."""
    from tests.findings.services.test_verification import LOADER

    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n").commit("reviewed")
    return builder


@pytest.fixture
def private_review(repo, anonymous_reader):
    """acme/loader#7 (imported by tests.findings.services.test_verification.import_review) in a private
    repository, with a Reader by membership (`member`, signed in) and the callers who may not read
    it (`others`): anonymous, a signed-in user with no role, and the member's own token narrowed to
    another repository."""
    from access.models import Membership
    from access.tokens import api_token_create
    from reviews.models import Repository
    from tests.findings.services.test_verification import import_review

    pull_request = import_review(repo)
    repository = pull_request.repository
    repository.visibility = Repository.Visibility.PRIVATE
    repository.save()
    user = UserFactory(username="member")
    membership = Membership.objects.create(repository=repository, user=user, role=Membership.Role.READER)
    member = APIClient()
    member.force_authenticate(user)
    outsider = APIClient()
    outsider.force_authenticate(UserFactory(username="outsider"))
    other = Repository.objects.create(slug="acme/other", clone_url="https://example.com/acme/other.git")
    _, secret = api_token_create(user=user, name="CI", scopes=["read"], repositories=[other])
    narrowed = APIClient(HTTP_AUTHORIZATION=f"Token {secret}")
    return SimpleNamespace(
        pull_request=pull_request, repository=repository, membership=membership, member=member,
        others=[anonymous_reader, outsider, narrowed],
    )
