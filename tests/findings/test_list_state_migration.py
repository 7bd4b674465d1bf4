"""Migration 0017 gives each state already stored its list rows, each with the shape the state was
stored in, so a list reads them as it reads those written with a state from then on."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# Migrating inside a test transaction is not possible on SQLite.
pytestmark = pytest.mark.django_db(transaction=True)

# The repositories as they are now too: their newest column has no default in the database.
BEFORE = [("findings", "0016_follow_ups"), ("reviews", "0007_repository_forge")]
AFTER = [("findings", "0017_finding_list_state")]


def test_each_stored_state_gets_its_list_rows():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        Repository, PullRequest = old.get_model("reviews", "Repository"), old.get_model("reviews", "PullRequest")
        PullRequestState = old.get_model("findings", "PullRequestState")
        repository = Repository.objects.create(slug="acme/one", clone_url="https://github.com/acme/one.git")
        pull_request = PullRequest.objects.create(repository=repository, number=1, title="A change")
        findings = {
            "11": {"status": "open", "resolution": "open", "verdict": "present", "possibly_regressed": False},
            "12": {"status": "fixed", "resolution": "fixed_anyway", "verdict": None, "possibly_regressed": True},
        }
        state = PullRequestState.objects.create(pull_request=pull_request, generation=3, summary={"shape": 1},
                                                findings=findings)

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        FindingListState = new.get_model("findings", "FindingListState")
        rows = FindingListState.objects.filter(state_id=state.pk).order_by("finding_id")
        assert [(row.finding_id, row.shape, row.verdict, row.resolution, row.possibly_regressed) for row in rows] == [
            (11, 1, "present", "open", False), (12, 1, "", "fixed_anyway", True),
        ]
    finally:
        # Back to the latest schema whatever happened: the tests after this one need it.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
