"""The bundle page answers who may import as the import itself does: a private repository the
user may not see and one that does not exist get one answer, a new repository is added only by
someone who may add repositories, and no refusal is a 500. Its dry run shows each field's before
and after."""
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from findings.models import Finding
from findings.services.review_import import review_import
from reviews.models import PullRequest, Repository
from tests.factories import RepositoryFactory, UserFactory
from tests.personas import member_of

pytestmark = pytest.mark.django_db

PAGE = reverse("findings:bundle_import")


def bundle(slug: str, **pull_request) -> str:
    return json.dumps({
        "repository": {"slug": slug, "clone_url": f"https://github.com/{slug}.git"},
        "pull_request": {"number": 7, "title": "A change", **pull_request},
        "findings": [{"number": 1, "kind": "cleanup", "title": "Rename it"}],
    })


def words(response, slug: str) -> str:
    """The page without what differs per request (the CSRF token) and with the slug neutral."""
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", response.content.decode())
    return html.replace(slug, "SLUG").replace(json.dumps(slug)[1:-1], "SLUG")


@pytest.fixture
def member_reviewer():
    """A Reviewer of acme/mine only (a membership: it adds no repository)."""
    user = UserFactory(username="rae")
    member_of(RepositoryFactory(slug="acme/mine"), user, "reviewer")
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("confirm", ["", "1"])
def test_a_private_repository_and_a_missing_one_get_the_same_refusal_never_a_500(member_reviewer, confirm):
    RepositoryFactory(slug="hidden-org/quokka", visibility="private")
    hidden = member_reviewer.post(PAGE, {"text": bundle("hidden-org/quokka"), "confirm": confirm})
    missing = member_reviewer.post(PAGE, {"text": bundle("ghost-org/nothing"), "confirm": confirm})
    assert (hidden.status_code, missing.status_code) == (403, 403)
    assert words(hidden, "hidden-org/quokka") == words(missing, "ghost-org/nothing")
    assert "rae may not import reviews into SLUG" in words(hidden, "hidden-org/quokka")
    assert not PullRequest.objects.exists() and not Repository.objects.filter(slug="ghost-org/nothing").exists()
    # Both refusals are recorded, in the same words.
    refusals = AuditEntry.objects.filter(action="review.import", outcome="refused").order_by("id")
    assert [entry.message.replace(entry.target, "SLUG") for entry in refusals] == [
        refusals[0].message.replace(refusals[0].target, "SLUG")
    ] * 2


def test_a_member_reviewer_importing_a_new_repository_is_told_who_may_add_one(member_reviewer):
    page = member_reviewer.post(PAGE, {"text": bundle("acme/brand-new"), "confirm": "1"})
    assert page.status_code == 403
    assert "for a repository new to this server, an instance-wide role" in page.content.decode()
    assert not Repository.objects.filter(slug="acme/brand-new").exists()


def test_an_instance_wide_reviewer_importing_a_new_repository_adds_it():
    client = Client()
    client.force_login(UserFactory(username="ivy", groups=["Reviewer"]))
    page = client.post(PAGE, {"text": bundle("acme/brand-new"), "confirm": "1"})
    assert page.status_code == 200 and "Imported acme/brand-new#7" in page.content.decode()
    assert Repository.objects.get(slug="acme/brand-new").pull_requests.get().number == 7


def test_a_member_reviewer_imports_into_their_own_repository(member_reviewer):
    page = member_reviewer.post(PAGE, {"text": bundle("acme/mine"), "confirm": "1"})
    assert page.status_code == 200
    assert Finding.objects.get().pull_request.repository.slug == "acme/mine"


def test_the_dry_run_shows_each_changed_field_before_and_after_and_writes_nothing():
    review_import(data=json.loads(bundle("acme/rl", opening="Nine things to fix.", comments_left=14)))
    client = Client()
    client.force_login(UserFactory(username="ivy", groups=["Reviewer"]))
    changed = json.loads(bundle("acme/rl", opening="Eight things to fix."))
    changed["findings"][0]["title"] = "Rename the loader"
    page = client.post(PAGE, {"text": json.dumps(changed)})
    assert page.status_code == 200
    rows = [(row["label"], row["field"], row["before"], row["after"]) for row in page.context["report"].change_rows]
    assert rows == [
        ("pull request acme/rl#7", "opening", ["Nine things to fix."], ["Eight things to fix."]),
        ("finding 1", "title", ["Rename it"], ["Rename the loader"]),
    ]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert "pull request acme/rl#7 opening Nine things to fix. Eight things to fix." in text
    assert "finding 1 title Rename it Rename the loader" in text
    # comments_left was not named: it is not listed and stays.
    pull_request = PullRequest.objects.get()
    assert (pull_request.opening, pull_request.comments_left) == ("Nine things to fix.", 14)
    assert Finding.objects.get().title == "Rename it"
