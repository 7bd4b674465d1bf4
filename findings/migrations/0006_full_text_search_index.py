"""The search index: on PostgreSQL a weighted tsvector column kept by triggers, with a GIN index, and
the pg_trgm extension for similar findings; on SQLite an FTS5 table kept in step by triggers. The
statements live in findings.search.schema, which also repairs SQLite's triggers after a migrate."""
from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

from findings.search.schema import search_index_install, search_index_uninstall


def install(apps, schema_editor):
    search_index_install(schema_editor.connection)


def uninstall(apps, schema_editor):
    search_index_uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("findings", "0005_tags_and_links_between_findings"),
    ]

    operations = [
        TrigramExtension(),
        migrations.RunPython(install, uninstall),
    ]
