"""Tokens from before hashing (DRF's authtoken table, keys in plain text) keep working, hashed,
and the plain-text table is gone."""
import importlib

import pytest
from django.apps import apps
from django.db import connection
from rest_framework.test import APIClient

from access.models import ApiToken
from tests.factories import UserFactory

migration = importlib.import_module("access.migrations.0002_hash_plain_text_tokens")

# Schema changes inside a test transaction are not possible on SQLite.
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_plain_text_token_becomes_a_hashed_one_that_still_works_and_the_table_is_dropped():
    user = UserFactory(username="old-ci", permissions=["findings.verify_pullrequest"])
    key = "0123456789abcdef0123456789abcdef01234567"  # DRF's keys: 40 hex digits
    with connection.schema_editor() as editor:
        editor.execute('CREATE TABLE authtoken_token ("key" varchar(40) PRIMARY KEY, created timestamp, user_id integer)')
        editor.execute("INSERT INTO authtoken_token (\"key\", created, user_id) VALUES (%s, CURRENT_TIMESTAMP, %s)",
                       [key, user.pk])
    with connection.schema_editor() as editor:
        migration.hash_plain_text_tokens(apps, editor)

    assert "authtoken_token" not in connection.introspection.table_names()
    token = ApiToken.objects.get(user=user)
    assert token.digest != key and key not in token.token_key + token.digest and token.expiry is not None
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/findings/").status_code == 200


def test_without_the_plain_text_table_it_does_nothing():
    with connection.schema_editor() as editor:
        migration.hash_plain_text_tokens(apps, editor)
    assert not ApiToken.objects.exists()
