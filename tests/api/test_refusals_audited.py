"""A refused write is recorded under the action it attempted, not the scope's: the audit log's
filter by action finds it beside the writes, and its message names the scope that refused it."""
import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from access.audit import WRITING_SERVICES
from access.models import AuditEntry
from api.permissions import TokenScope
from tests.factories import RepositoryFactory, UserFactory, make_api_token
from tests.personas import superuser

pytestmark = pytest.mark.django_db

WRITE_METHODS = ("post", "put", "patch", "delete")


def test_a_tag_description_refused_by_a_tokens_scope_is_audited_as_tag_describe():
    repository = RepositoryFactory(slug="acme/alpha")
    writer = UserFactory(username="writer", groups=["Reviewer"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {make_api_token(writer, scopes=('read',), name='ci-read')}")
    refused = client.put("/api/tags/flaky-io/description", {"repository": repository.slug, "description": "x"},
                         format="json")
    assert refused.status_code == 403
    entry = AuditEntry.objects.get(outcome=AuditEntry.Outcome.REFUSED)
    assert (entry.action, entry.actor_label) == ("tag.describe", "writer") and "ci-read" in entry.token_label
    # The scope the token holds and the one that was needed.
    assert "has the scope(s) read" in entry.message and "'import'" in entry.message

    auditor = APIClient()
    auditor.force_authenticate(superuser())
    listed = auditor.get("/api/audit/", {"action": "tag.describe", "outcome": "refused"}).json()["results"]
    assert [found["id"] for found in listed] == [entry.pk]
    site = Client()
    site.force_login(superuser())
    assert f'href="/audit/{entry.pk}/"' in site.get("/audit/", {"action": "tag.describe"}).content.decode()
    assert not AuditEntry.objects.filter(action="review.import").exists()


def _api_views():
    def walk(resolver):
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern)
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "view_class"):
                yield pattern.callback.view_class
    return {view for view in walk(get_resolver()) if view.__module__.startswith("api.")}


def test_every_write_a_token_may_be_refused_names_the_action_its_service_records():
    """A refused request is recorded under the view's `audit_action`: it must be an action a
    writing service records, so a refusal sits beside the writes it would have made."""
    recorded = {service.action for service in WRITING_SERVICES.values()}
    writes = [view for view in _api_views()
              if TokenScope in getattr(view, "permission_classes", ()) and any(hasattr(view, m) for m in WRITE_METHODS)]
    assert len(writes) >= 10
    unnamed = sorted(view.__name__ for view in writes if getattr(view, "audit_action", None) not in recorded)
    assert not unnamed, f"Name the action each records (audit_action, one its service records): {unnamed}"
