"""Tokens made before hashed tokens were stored in plain text by DRF's authtoken app (table
authtoken_token). Each becomes a hashed token with every scope (its user's permissions still
decide what it may do, as before) that keeps working with the same key until it expires; then
the plain-text table is dropped, so no secret is left readable in the database."""
from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone
from knox.crypto import hash_token
from knox.settings import CONSTANTS

PLAIN_TABLE = "authtoken_token"
ALL_SCOPES = ["read", "verify", "import", "resolve", "settings"]


def hash_plain_text_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if PLAIN_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("access", "ApiToken")
    expiry = timezone.now() + timedelta(days=settings.RECHECK_API_TOKEN_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {schema_editor.quote_name('key')}, user_id FROM {PLAIN_TABLE}")
        rows = cursor.fetchall()
    for key, user_id in rows:
        ApiToken(
            digest=hash_token(key), token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], user_id=user_id, expiry=expiry,
            name="Made before tokens were hashed", scopes=ALL_SCOPES,
        ).save(force_insert=True)
    if rows:
        print(
            f"\n  {len(rows)} plain-text API token(s) now stored hashed; they keep working until {expiry:%Y-%m-%d} "
            "(RECHECK_API_TOKEN_DAYS). Review their scopes in the admin (Access, API tokens)."
        )
    schema_editor.execute(f"DROP TABLE {PLAIN_TABLE}")


class Migration(migrations.Migration):
    dependencies = [("access", "0001_api_tokens_and_audit_log")]

    operations = [migrations.RunPython(hash_plain_text_tokens, migrations.RunPython.noop)]
