"""A write reaches other objects through nested data (a gitlink item names its submodule's
repository by slug): the actor is checked against each of them, on every interface that writes."""
import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from access.models import AuditEntry, Membership
from access.tokens import api_token_create
from findings.services.review_import import parse_bundle, review_import
from reviews.models import Repository
from tests.factories import RepositoryFactory, UserFactory

pytestmark = pytest.mark.django_db

BUNDLE = """\
repository:
  slug: acme/mine
  clone_url: https://github.com/acme/mine.git
pull_request:
  number: 1
  title: Bump the submodule
commits:
  - sha: d044f40
    role: reviewed
findings:
  - number: 1
    kind: blocker
    title: The pin is not on the branch
    evidence:
      - kind: gitlink
        path: vendor/lib
        sha: 3961f399
        expect: off_branch
        submodule: {slug: SLUG, clone_url: https://evil.example.com/x.git, web_url: https://evil.example.com/x, default_branch: evil}
"""

ORIGINAL = {"clone_url": "https://github.com/acme/other.git", "web_url": "https://github.com/acme/other",
            "default_branch": "main"}


@pytest.fixture
def reviewer():
    """A Reviewer of acme/mine only."""
    mine = RepositoryFactory(slug="acme/mine", clone_url="https://github.com/acme/mine.git")
    user = UserFactory(username="rae")
    Membership.objects.create(repository=mine, user=user, role="reviewer")
    return user


def _other(visibility: str) -> Repository:
    return RepositoryFactory(slug="acme/other", visibility=visibility, **ORIGINAL)


def _unchanged(repository: Repository) -> None:
    repository.refresh_from_db()
    assert {key: getattr(repository, key) for key in ORIGINAL} == ORIGINAL
    assert not AuditEntry.objects.filter(action="repository.update").exists()


def _words(response) -> str:
    """A response without what differs per request (its CSRF token)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", response.content.decode())


def _site(user, text: str):
    client = Client()
    client.force_login(user)
    return client.post(reverse("findings:bundle_import"), {"text": text, "confirm": "1"})


def _api(user, text: str):
    _, secret = api_token_create(user=user, name="CI", scopes=["read", "import"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client.post("/api/reviews/import", parse_bundle(text), format="json")


@pytest.mark.parametrize("interface", [_site, _api])
def test_a_reviewer_cannot_rewrite_a_private_repository_through_a_gitlink_item(reviewer, interface):
    other = _other("private")
    response = interface(reviewer, BUNDLE.replace("SLUG", "acme/other"))
    assert response.status_code == 400
    _unchanged(other)
    # In the words of a repository that does not exist, which is refused the same way.
    hidden = _words(response).replace("acme/other", "SLUG")
    missing = _words(interface(reviewer, BUNDLE.replace("SLUG", "acme/nowhere"))).replace("acme/nowhere", "SLUG")
    assert "No repository SLUG is recorded for rae to read" in hidden
    assert hidden == missing
    assert not Repository.objects.filter(slug="acme/nowhere").exists()


@pytest.mark.parametrize("interface", [_site, _api])
def test_a_public_repository_named_by_a_reviewer_without_a_role_on_it_is_left_as_it_is(reviewer, interface):
    other = _other("public")
    response = interface(reviewer, BUNDLE.replace("SLUG", "acme/other"))
    assert response.status_code in (200, 201)
    assert "acme/other was left as it is" in response.content.decode()
    _unchanged(other)


def test_a_repository_admin_may_change_the_submodule_repository_and_it_is_audited(reviewer):
    other = _other("public")
    Membership.objects.create(repository=other, user=reviewer, role="admin")
    report = review_import(data=parse_bundle(BUNDLE.replace("SLUG", "acme/other")), actor=reviewer)
    assert report.notes == []
    other.refresh_from_db()
    assert other.clone_url == "https://evil.example.com/x.git" and other.default_branch == "evil"
    entry = AuditEntry.objects.get(action="repository.update")
    assert entry.changes["clone_url"] == [ORIGINAL["clone_url"], "https://evil.example.com/x.git"]
    assert entry.actor == reviewer


def test_a_submodule_repository_new_to_the_server_is_added_by_someone_who_may_add_repositories():
    importer = UserFactory(username="ivy", groups=["Reviewer"])
    review_import(data=parse_bundle(BUNDLE.replace("SLUG", "acme/fresh")), actor=importer)
    fresh = Repository.objects.get(slug="acme/fresh")
    assert fresh.clone_url == "https://evil.example.com/x.git" and fresh.is_public
    assert AuditEntry.objects.get(action="repository.create").target == "acme/fresh"


def test_the_bundles_own_repository_keeps_its_urls_unless_the_importer_may_change_its_settings(reviewer):
    """Importing into a repository needs the Reviewer role; where it is fetched from is its Admin's."""
    data = parse_bundle(BUNDLE.replace("SLUG", "acme/mine"))
    data["findings"][0]["evidence"] = [{"kind": "note", "text": "Seen."}]
    data["repository"]["clone_url"] = "https://evil.example.com/mine.git"
    report = review_import(data=data, actor=reviewer)
    mine = Repository.objects.get(slug="acme/mine")
    assert mine.clone_url == "https://github.com/acme/mine.git"
    assert report.notes == ["acme/mine was left as it is: changing its clone_url needs the Admin role on it."]
    Membership.objects.filter(user=reviewer).update(role="admin")
    del reviewer._recheck_membership_actions
    report = review_import(data=data, actor=reviewer)
    mine.refresh_from_db()
    assert mine.clone_url == "https://evil.example.com/mine.git" and report.notes == []
    entry = AuditEntry.objects.filter(action="review.import").latest("id")
    assert entry.changes["repository acme/mine.clone_url"] == ["https://github.com/acme/mine.git",
                                                               "https://evil.example.com/mine.git"]
