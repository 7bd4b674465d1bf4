"""Which audit entries a person may read is one answer (`access.selectors.readable_audit_entries`),
read by the site, the API and the admin: a test drives all three for each persona and compares, the
superuser included. `readable_condition` means the same whatever it is combined with."""
import re

import pytest
from django.db.models import Q
from django.test import Client
from rest_framework.test import APIClient

from access.models import AuditEntry
from access.permissions import readable_condition
from access.selectors import readable_audit_entries
from reviews.models import Repository
from tests.factories import RepositoryFactory, UserFactory, make_api_token
from tests.personas import member_of, superuser

pytestmark = pytest.mark.django_db

PERSONAS = ["superuser", "auditor", "auditor_with_a_role", "auditor_reading_everywhere", "staff_without_the_log"]


@pytest.fixture
def entries():
    private = RepositoryFactory(slug="acme/private", visibility="private")
    hidden = RepositoryFactory(slug="hidden-org/quokka", visibility="private")
    public = RepositoryFactory(slug="acme/public", visibility="public")
    made = {}
    for repository in (private, hidden, public, None):
        for action in ("finding.edit", "tag.describe"):
            made[(repository.slug if repository else None, action)] = AuditEntry.objects.create(
                action=action, target=f"{repository.slug if repository else 'token'}:{action}", repository=repository,
            ).pk
    return {"private": private, "hidden": hidden, "public": public, "ids": made}


def persona(name: str, world):
    if name == "superuser":
        return superuser()
    permissions = [] if name == "staff_without_the_log" else ["access.view_auditentry"]
    groups = ["Reader"] if name == "auditor_reading_everywhere" else []
    user = UserFactory(username=name, is_staff=True, permissions=permissions, groups=groups)
    if name == "auditor_with_a_role":
        member_of(world["private"], user, "reader")
    return user


def site_ids(user, query: str = "") -> set[int] | None:
    client = Client()
    client.force_login(user)
    page = client.get(f"/audit/{query}")
    if page.status_code == 403:
        return None
    assert page.status_code == 200
    return {int(found) for found in re.findall(r'href="/audit/(\d+)/"', page.content.decode())}


def api_ids(user, query: str = "") -> set[int] | None:
    client = APIClient()
    client.force_authenticate(user)
    answer = client.get(f"/api/audit/{query}")
    if answer.status_code == 403:
        return None
    assert answer.status_code == 200
    return {entry["id"] for entry in answer.json()["results"]}


def admin_ids(user, query: str = "") -> set[int] | None:
    client = Client()
    client.force_login(user)
    page = client.get(f"/admin/access/auditentry/{query}")
    if page.status_code == 403:
        return None
    assert page.status_code == 200
    return {int(found) for found in re.findall(r'/admin/access/auditentry/(\d+)/change/', page.content.decode())}


@pytest.mark.parametrize("name", PERSONAS)
def test_the_site_the_api_and_the_admin_list_the_same_entries(entries, name):
    user = persona(name, entries)
    selected = set(readable_audit_entries(user).values_list("pk", flat=True))
    for query in ("", "?action=tag.describe"):
        answers = {"site": site_ids(user, query), "api": api_ids(user, query), "admin": admin_ids(user, query)}
        expected = None if name == "staff_without_the_log" else {
            pk for pk in selected if not query or AuditEntry.objects.get(pk=pk).action == "tag.describe"
        }
        assert answers == {"site": expected, "api": expected, "admin": expected}, query
    ids = entries["ids"]
    readable = {
        "superuser": set(ids.values()),
        "auditor_reading_everywhere": set(ids.values()),
        "auditor": {pk for (slug, _), pk in ids.items() if slug in ("acme/public", None)},
        "auditor_with_a_role": {pk for (slug, _), pk in ids.items() if slug in ("acme/public", "acme/private", None)},
        "staff_without_the_log": set(),
    }[name]
    assert selected == readable


@pytest.mark.parametrize("name", PERSONAS)
def test_one_entry_opens_on_the_site_exactly_when_the_admin_opens_it(entries, name):
    user = persona(name, entries)
    site, admin = Client(), Client()
    site.force_login(user)
    admin.force_login(user)
    for pk in entries["ids"].values():
        on_site = site.get(f"/audit/{pk}/").status_code
        in_admin = admin.get(f"/admin/access/auditentry/{pk}/change/").status_code
        assert (on_site == 200) == (in_admin == 200), (pk, on_site, in_admin)


def test_a_superuser_reads_a_repositorys_entry_on_the_site(entries):
    client = Client()
    client.force_login(superuser())
    pk = entries["ids"][("acme/private", "finding.edit")]
    assert client.get(f"/audit/{pk}/").status_code == 200


def test_a_token_limited_to_a_repository_reads_its_entries_alone(entries):
    user = persona("superuser", entries)
    token = make_api_token(user, scopes=("read",), repositories=[entries["private"]])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    listed = {entry["id"] for entry in client.get("/api/audit/").json()["results"]}
    assert listed == {pk for (slug, _), pk in entries["ids"].items() if slug == "acme/private"}


@pytest.mark.parametrize("name", ["anonymous", "no_role", "member", "reader_everywhere", "superuser"])
def test_readable_condition_means_the_same_combined_with_or_and_and(entries, name, settings):
    settings.RECHECK_PUBLIC_READ = True
    from django.contrib.auth.models import AnonymousUser

    if name == "anonymous":
        user = AnonymousUser()
    elif name == "superuser":
        user = superuser()
    else:
        user = UserFactory(username=name, groups=["Reader"] if name == "reader_everywhere" else [])
        if name == "member":
            member_of(entries["private"], user, "reader")
    readable = set(Repository.objects.filter(readable_condition(user)).values_list("slug", flat=True))
    expected = {
        "anonymous": {"acme/public"}, "no_role": {"acme/public"}, "member": {"acme/public", "acme/private"},
    }.get(name, {"acme/public", "acme/private", "hidden-org/quokka"})
    assert readable == expected
    nothing, everything = Q(pk__in=[]), Q(pk__isnull=False)
    slugs = lambda condition: set(Repository.objects.filter(condition).values_list("slug", flat=True))  # noqa: E731
    assert slugs(nothing | readable_condition(user)) == expected
    assert slugs(readable_condition(user) | nothing) == expected
    assert slugs(everything & readable_condition(user)) == expected
    assert slugs(Q(slug="acme/public") & readable_condition(user)) == expected & {"acme/public"}
    assert slugs(Q(slug="hidden-org/quokka") | readable_condition(user)) == expected | {"hidden-org/quokka"}
    # Combined across a relation, as the audit log does: entries of no repository, or readable ones.
    combined = AuditEntry.objects.filter(Q(repository__isnull=True) | readable_condition(user, "repository"))
    assert set(combined.values_list("pk", flat=True)) == {
        pk for (slug, _), pk in entries["ids"].items() if slug is None or slug in expected
    }
