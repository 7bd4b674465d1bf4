"""The admin's "View on site" (/admin/r/<content type>/<id>/) answers a private object exactly as an
id that does not exist, to every staff user who may not read it on the site, and redirects to the
page of what they may read, as before."""
import re

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import resolve, reverse

from backoffice.shortcut import READABLE, view_on_site
from findings.models import Finding, FollowUp, Tag
from reviews.models import PullRequest, Repository
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.personas import member_of, superuser

pytestmark = pytest.mark.django_db

PERSONAS = ["staff_without_role", "staff_with_role_elsewhere", "auditor", "superuser"]
MISSING_ID = 10**9


def objects_of(repository, tag_slug):
    pull_request = PullRequestFactory(repository=repository, number=7)
    finding = FindingFactory(pull_request=pull_request, number=1, kind="cleanup")
    finding.tags.add(Tag.objects.create(slug=tag_slug))
    follow_up = FollowUp.objects.create(repository=repository, finding=finding, pull_request=pull_request,
                                        origin=FollowUp.Origin.OPEN_CLEANUP)
    return {Repository: repository, PullRequest: pull_request, Finding: finding, FollowUp: follow_up,
            Tag: finding.tags.get()}


@pytest.fixture
def world():
    vault = objects_of(RepositoryFactory(slug="acme/secret-vault", visibility="private"), "vault-only")
    elsewhere = RepositoryFactory(slug="acme/elsewhere", visibility="private")
    public = objects_of(RepositoryFactory(slug="acme/open", visibility="public"), "open-kind")
    return {"vault": vault, "public": public, "elsewhere": elsewhere}


def persona(name: str, world) -> Client:
    if name == "superuser":
        user = superuser()
    else:
        permissions = ["access.view_auditentry"] if name == "auditor" else []
        user = UserFactory(username=name, is_staff=True, permissions=permissions)
        if name == "staff_with_role_elsewhere":
            member_of(world["elsewhere"], user, "maintainer")
    client = Client()
    client.force_login(user)
    return client


def shortcut(model, object_id) -> str:
    return f"/admin/r/{ContentType.objects.get_for_model(model).pk}/{object_id}/"


def same_answer(response) -> tuple:
    """Status, where it leads and the body, less what every response makes anew (the CSRF token's
    mask, a CSP nonce)."""
    body = re.sub(rb'(csrfmiddlewaretoken" value=|nonce=)"[^"]*"', rb"\1", response.content)
    return response.status_code, response.get("Location"), body


@pytest.mark.parametrize("name", PERSONAS)
@pytest.mark.parametrize("model", list(READABLE), ids=lambda model: model.__name__)
def test_a_private_object_answers_as_a_missing_id_to_whoever_may_not_read_it(world, name, model):
    client = persona(name, world)
    private = world["vault"][model]
    answer = client.get(shortcut(model, private.pk))
    missing = client.get(shortcut(model, MISSING_ID))
    assert missing.status_code == 404
    if name == "superuser":
        assert (answer.status_code, answer["Location"]) == (302, private.get_absolute_url())
    else:
        assert same_answer(answer) == same_answer(missing)
        assert b"secret-vault" not in answer.content and b"vault-only" not in answer.content


@pytest.mark.parametrize("name", PERSONAS)
@pytest.mark.parametrize("model", list(READABLE), ids=lambda model: model.__name__)
def test_a_readable_object_leads_to_its_page_as_before(world, name, model):
    public = world["public"][model]
    answer = persona(name, world).get(shortcut(model, public.pk))
    assert (answer.status_code, answer["Location"]) == (302, public.get_absolute_url())


def test_a_member_of_the_private_repository_is_led_to_its_pages(world):
    user = UserFactory(username="vault-keeper", is_staff=True)
    member_of(world["vault"][Repository], user, "reader")
    client = Client()
    client.force_login(user)
    for model, found in world["vault"].items():
        answer = client.get(shortcut(model, found.pk))
        assert (answer.status_code, answer["Location"]) == (302, found.get_absolute_url()), model


def test_bad_ids_all_answer_as_a_missing_one(world):
    client = persona("staff_without_role", world)
    repository = world["vault"][Repository]
    finding_type = ContentType.objects.get_for_model(Finding).pk
    ghost_type = ContentType.objects.create(app_label="gone", model="ghost").pk
    user_type = ContentType.objects.get_for_model(apps.get_model("auth", "user")).pk
    expected = same_answer(client.get(shortcut(Repository, MISSING_ID)))
    for url in [
        shortcut(Repository, -1), shortcut(Repository, 0), shortcut(Repository, 10**30), shortcut(Repository, "abc"),
        shortcut(Repository, "1.5"), shortcut(Repository, "٣"),
        # The repository's id under another content type: a finding with that id, or none.
        f"/admin/r/{finding_type}/{repository.pk}/",
        f"/admin/r/{ghost_type}/{repository.pk}/",  # a content type whose model is gone
        f"/admin/r/{user_type}/1/",  # a model the shortcut does not serve
        f"/admin/r/{10**9}/{repository.pk}/", f"/admin/r/-3/{repository.pk}/", f"/admin/r/x/{repository.pk}/",
    ]:
        assert same_answer(client.get(url)) == expected, url


def test_a_deleted_object_and_one_made_private_after_its_id_was_seen(world):
    client = persona("staff_without_role", world)
    public = world["public"][Repository]
    assert client.get(shortcut(Repository, public.pk)).status_code == 302
    expected = same_answer(client.get(shortcut(Repository, MISSING_ID)))
    Repository.objects.filter(pk=public.pk).update(visibility="private")
    assert same_answer(client.get(shortcut(Repository, public.pk))) == expected
    finding = world["public"][Finding]
    finding.delete()
    assert same_answer(client.get(shortcut(Finding, finding.pk))) == expected


def test_anyone_outside_the_admin_is_sent_to_sign_in_as_before(world):
    answer = Client().get(shortcut(Repository, world["public"][Repository].pk))
    assert answer.status_code == 302 and "/admin/login/" in answer["Location"]
    signed_in = Client()
    signed_in.force_login(UserFactory(username="not-staff"))
    assert "/admin/login/" in signed_in.get(shortcut(Repository, world["public"][Repository].pk))["Location"]


def test_the_admins_shortcut_is_this_one():
    url = reverse("admin:view_on_site", args=[1, 1])
    assert resolve(url).func.__wrapped__ is view_on_site


def test_every_admin_model_with_a_page_is_served_by_the_shortcut():
    """A model that gains a page must be named in READABLE, with the queryset its pages read it
    through; until then the shortcut answers 404 for it, to everyone."""
    with_pages = {model for model in admin.site._registry if hasattr(model, "get_absolute_url")}
    assert with_pages == set(READABLE)
