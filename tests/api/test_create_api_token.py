from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from access.models import ApiToken, AuditEntry
from tests.factories import RepositoryFactory, UserFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_it_creates_a_token_user_with_the_permissions_asked_for_and_prints_only_the_key():
    key = run("ci-bot", "--create-user", "--grant", "verify_pullrequest", "import_review")
    token = ApiToken.objects.get(user__username="ci-bot")
    assert token.user.username == "ci-bot" and not token.user.has_usable_password()
    assert token.user.has_perm("findings.verify_pullrequest") and token.user.has_perm("findings.import_review")
    assert not token.user.has_perm("findings.resolve_finding")
    assert token.scopes == ["read", "verify", "import", "reports:write"]
    assert key.startswith("rck_") and key.startswith(token.token_key)
    assert [(entry.action, entry.source) for entry in AuditEntry.objects.order_by("id")] == [
        ("user.add", "command"), ("user.edit", "command"), ("token.create", "command")
    ]
    assert AuditEntry.objects.get(action="user.edit").changes == {
        "user_permissions": [[], ["import_review", "verify_pullrequest"]]
    }
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/findings/").status_code == 200


def test_each_run_prints_a_new_token_and_rotate_revokes_the_others():
    user = UserFactory(username="merge-bot")
    first = run("merge-bot")
    second = run("merge-bot")
    assert second != first and ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() == 2
    rotated = run("merge-bot", "--rotate", "--grant", "all")
    assert rotated not in (first, second)
    live = ApiToken.objects.get(user=user, revoked_at__isnull=True)
    assert rotated.startswith(live.token_key) and live.scopes == ["read", "verify", "import", "resolve", "reports:write"]
    assert user.has_perm("findings.resolve_finding")
    assert AuditEntry.objects.filter(action="token.revoke", outcome="done", source="command").count() == 2


def test_it_names_scopes_repositories_and_days():
    repository = RepositoryFactory(slug="acme/loader")
    UserFactory(username="reader-bot")
    run("reader-bot", "--name", "Dashboard", "--scope", "read", "--repository", "acme/loader", "--days", "7")
    token = ApiToken.objects.get(user__username="reader-bot")
    assert (token.name, token.scopes, list(token.repositories.all())) == ("Dashboard", ["read"], [repository])
    assert 6 <= (token.expiry - token.created).days <= 7


def test_it_refuses_a_write_scope_the_user_is_not_permitted_and_records_the_refusal():
    UserFactory(username="reader-bot")
    with pytest.raises(CommandError, match=r"may not do what the scope\(s\) resolve allow: grant a role first \(findings.resolve_finding"):
        run("reader-bot", "--scope", "read", "resolve")
    assert not ApiToken.objects.exists()
    refusal = AuditEntry.objects.get(action="token.create")
    assert refusal.outcome == "refused" and refusal.source == "command"


def test_it_refuses_an_unknown_user_without_create_user():
    with pytest.raises(CommandError, match="--create-user"):
        run("nobody")


def test_it_refuses_an_unknown_repository():
    UserFactory(username="reader-bot")
    with pytest.raises(CommandError, match="No repository acme/missing"):
        run("reader-bot", "--repository", "acme/missing")
