"""Tags are one slug shared by every repository, described by each repository for itself: nothing
a private repository wrote about a tag is changed or read from outside it, and the tag endpoint
answers a tag only a private repository uses exactly as it answers a new slug."""
import json
import re

import pytest
from django.test import Client

from findings.models import TagDescription
from findings.services.review_import import review_import
from findings.services.tags_and_links import finding_tags_set, tag_describe
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.personas import api_client, member_of

pytestmark = pytest.mark.django_db

SECRET = "Quokka cache keys that ignore the dtype"


@pytest.fixture
def private_tag():
    """quokka-kind, carried and described only by the private hidden-org/quokka."""
    private = RepositoryFactory(slug="hidden-org/quokka", visibility="private")
    finding = FindingFactory(pull_request=PullRequestFactory(repository=private))
    finding_tags_set(finding=finding, slugs=["quokka-kind"], actor=None)
    tag_describe(slug="quokka-kind", repository=private, description=SECRET, actor=None)
    return private


@pytest.fixture
def outsider():
    """A Reviewer of the public acme/alpha only."""
    user = UserFactory(username="olly")
    member_of(RepositoryFactory(slug="acme/alpha", visibility="public"), user, "reviewer")
    return user


def _public_bundle(description: str) -> dict:
    return {
        "repository": {"slug": "acme/alpha", "clone_url": "https://github.com/acme/alpha.git"},
        "pull_request": {"number": 1, "title": "A change"},
        "tags": [{"slug": "quokka-kind", "description": description}],
        "findings": [{"number": 1, "kind": "cleanup", "title": "Rename it", "tags": ["quokka-kind"]}],
    }


def test_a_bundle_into_a_public_repository_leaves_the_private_repositorys_description(private_tag, outsider):
    review_import(data=_public_bundle("Overwritten from outside"), actor=outsider)
    assert TagDescription.objects.get(repository=private_tag).description == SECRET
    assert TagDescription.objects.get(repository__slug="acme/alpha").description == "Overwritten from outside"


def test_the_private_description_is_never_shown_outside_once_the_slug_is_public(private_tag, outsider):
    review_import(data=_public_bundle(""), actor=outsider)  # the slug, on a public finding, undescribed
    client = api_client(outsider, scopes=["read"])
    tag = client.get("/api/tags/quokka-kind/").json()
    assert (tag["description"], tag["descriptions"], tag["findings_count"]) == ("", [], 1)
    assert SECRET not in json.dumps(client.get("/api/tags/").json())
    site = Client()
    site.force_login(outsider)
    page = site.get("/tags/quokka-kind/")
    assert page.status_code == 200 and SECRET not in page.content.decode()
    finding_page = site.get("/acme/alpha/pull/1/findings/1/")
    assert finding_page.status_code == 200 and SECRET not in finding_page.content.decode()
    # Its own members still read it.
    member = member_of(private_tag, UserFactory(username="quinn"), "reader")
    assert api_client(member).get("/api/tags/quokka-kind/").json()["descriptions"] == [
        {"repository": "hidden-org/quokka", "description": SECRET}
    ]


def _answer(response, slug: str) -> tuple[int, str]:
    return response.status_code, re.sub(re.escape(slug), "SLUG", response.content.decode())


def test_describing_a_private_only_tag_answers_as_a_new_slug_and_changes_nothing_of_it(private_tag, outsider):
    client = api_client(outsider, scopes=["read", "import"])
    body = {"repository": "acme/alpha", "description": "Ours."}
    private_only = client.put("/api/tags/quokka-kind/description", body, format="json")
    new_slug = client.put("/api/tags/never-seen/description", body, format="json")
    assert private_only.status_code == 200
    assert _answer(private_only, "quokka-kind") == _answer(new_slug, "never-seen")
    assert TagDescription.objects.get(repository=private_tag).description == SECRET
    # Naming the private repository is answered as naming one that does not exist.
    hidden = client.put("/api/tags/quokka-kind/description", {**body, "repository": "hidden-org/quokka"},
                        format="json")
    missing = client.put("/api/tags/quokka-kind/description", {**body, "repository": "ghost-org/none"},
                         format="json")
    assert hidden.status_code == 404
    assert _answer(hidden, "hidden-org/quokka") == _answer(missing, "ghost-org/none")
    assert TagDescription.objects.get(repository=private_tag).description == SECRET


def test_a_reader_of_a_repository_may_not_describe_its_tags(outsider):
    reader = member_of(RepositoryFactory(slug="acme/beta"), UserFactory(username="rita"), "reader")
    response = api_client(reader, scopes=["read", "import"]).put(
        "/api/tags/loops/description", {"repository": "acme/beta", "description": "x"}, format="json"
    )
    assert response.status_code == 403 and "Reviewer" in response.json()["detail"]
    assert not TagDescription.objects.exists()
