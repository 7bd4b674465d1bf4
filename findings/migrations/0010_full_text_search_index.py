"""The search index: on PostgreSQL a weighted tsvector column kept by triggers, with a GIN index, and
the pg_trgm extension for similar findings; on SQLite an FTS5 table kept in step by triggers. The
statements live in findings.search.schema, which also repairs SQLite's triggers after a migrate."""
import django.db.models.deletion
from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations, models

from findings.search.schema import search_index_install, search_index_uninstall


class TrigramExtensionOnPostgreSQL(TrigramExtension):
    """Django skips the extension on other databases going forwards, but not going backwards."""

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


def install(apps, schema_editor):
    search_index_install(schema_editor.connection)


def uninstall(apps, schema_editor):
    search_index_uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("findings", "0009_tags_and_links_between_findings"),
    ]

    operations = [
        TrigramExtensionOnPostgreSQL(),
        migrations.RunPython(install, uninstall),
        # The FTS5 table as Django reads it (SQLite only; no table is created for it).
        migrations.CreateModel(
            name="FindingSearchEntry",
            fields=[
                ("finding", models.OneToOneField(
                    db_column="rowid", db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING,
                    primary_key=True, related_name="search_entry", serialize=False, to="findings.finding",
                )),
            ],
            options={"db_table": "findings_finding_search", "managed": False},
        ),
    ]
