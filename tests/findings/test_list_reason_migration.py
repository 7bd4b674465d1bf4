"""Migration 0029 gives the list rows of the states already stored the reason beside an error
verdict their state says, so a list says it before the pull request moves again."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# Migrating inside a test transaction is not possible on SQLite.
pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("findings", "0028_follow_up_due_event_kinds"), ("reviews", "0008_worker_hosts")]
AFTER = [("findings", "0029_list_rows_verdict_reason"), ("reviews", "0008_worker_hosts")]


def test_the_rows_stored_before_get_their_state_s_reason():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        Repository, PullRequest = old.get_model("reviews", "Repository"), old.get_model("reviews", "PullRequest")
        PullRequestState = old.get_model("findings", "PullRequestState")
        FindingListState = old.get_model("findings", "FindingListState")
        repository = Repository.objects.create(slug="acme/one", clone_url="https://github.com/acme/one.git")
        pull_request = PullRequest.objects.create(repository=repository, number=1, title="A change")
        findings = {
            "11": {"status": "open", "resolution": "open", "verdict": "error", "verdict_reason": "waiting",
                   "possibly_regressed": False},
            "12": {"status": "open", "resolution": "open", "verdict": "present", "verdict_reason": "",
                   "possibly_regressed": False},
        }
        state = PullRequestState.objects.create(pull_request=pull_request, generation=3, summary={"shape": 3},
                                                findings=findings)
        for pk, finding in findings.items():
            FindingListState.objects.create(state_id=state.pk, finding_id=int(pk), shape=3,
                                            verdict=finding["verdict"], resolution="open", possibly_regressed=False)

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        rows = new.get_model("findings", "FindingListState").objects.filter(state_id=state.pk).order_by("finding_id")
        assert [(row.finding_id, row.verdict, row.verdict_reason) for row in rows] == [
            (11, "error", "waiting"), (12, "present", "")]
    finally:
        # Back to the latest schema whatever happened: the tests after this one need it.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
