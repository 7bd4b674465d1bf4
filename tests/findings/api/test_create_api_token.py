from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_it_creates_a_token_user_with_the_permissions_asked_for_and_prints_only_the_key():
    key = run("ci-bot", "--create-user", "--grant", "verify_pullrequest", "import_review")
    token = Token.objects.get(key=key)
    assert token.user.username == "ci-bot" and not token.user.has_usable_password()
    assert token.user.has_perm("findings.verify_pullrequest") and token.user.has_perm("findings.import_review")
    assert not token.user.has_perm("findings.resolve_finding")


def test_it_prints_the_existing_token_unless_asked_to_rotate():
    user = UserFactory(username="merge-bot")
    first = run("merge-bot")
    assert run("merge-bot") == first
    rotated = run("merge-bot", "--rotate", "--grant", "all")
    assert rotated != first and Token.objects.get(user=user).key == rotated
    assert user.has_perm("findings.resolve_finding")


def test_it_refuses_an_unknown_user_without_create_user():
    with pytest.raises(CommandError, match="--create-user"):
        run("nobody")
