"""The search index migration on a database that already holds findings: it indexes them, and
reversing it removes every object it made."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from findings.models import Finding
from tests.factories import FindingFactory

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("findings", "0009_tags_and_links_between_findings")]
AFTER = [("findings", "0010_full_text_search_index")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def search_objects() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE name LIKE 'findings_%search%'")
        else:
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgname LIKE 'findings_%search%' UNION "
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'findings_finding' "
                "AND column_name = 'search_vector'"
            )
        return {row[0] for row in cursor.fetchall()}


def test_the_migration_indexes_findings_recorded_before_it_and_reverses_cleanly():
    try:
        migrate(BEFORE)
        assert search_objects() == set()
        # Rows written while there was no index; the evidence through the model as it was then, since
        # the evidence table has gained columns since.
        finding = FindingFactory(title="Recorded before the index existed")
        evidence = MigrationExecutor(connection).loader.project_state(BEFORE).apps.get_model("findings", "Evidence")
        evidence.objects.create(finding_id=finding.pk, position=0, kind="note", text="Seen by three of us.",
                                caption="an ocelot in the caption")
        migrate(AFTER)
        assert list(Finding.objects.search("existed")) == [finding]
        assert list(Finding.objects.search("ocelot")) == [finding]
    finally:
        migrate(executor_leaf_nodes())


def executor_leaf_nodes():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()
