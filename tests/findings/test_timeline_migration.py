"""Migration 0025 gives each pull request reviewed before the timeline existed a baseline mark, so
its next stored state writes no events (not every finding "recorded" at once), and the changes
after that do."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from core.vocabulary import events as ev
from findings.models import ReviewEvent, TimelineMark
from findings.state.stored import pull_request_state
from reviews.services import pull_request_changed
from tests.factories import FindingFactory

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("findings", "0024_check_report_rederive_done_at"), ("reviews", "0008_worker_hosts")]


def test_a_review_older_than_the_timeline_starts_from_a_baseline():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        Repository, PullRequest = old.get_model("reviews", "Repository"), old.get_model("reviews", "PullRequest")
        repository = Repository.objects.create(slug="acme/old", clone_url="https://github.com/acme/old.git")
        pull_request = PullRequest.objects.create(repository=repository, number=1, title="Reviewed long ago")
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        mark = TimelineMark.objects.get(pull_request_id=pull_request.pk)
        assert (mark.generation, mark.snapshot) == (0, None)

        from reviews.models import PullRequest as Current

        reviewed = Current.objects.get(pk=pull_request.pk)
        FindingFactory(pull_request=reviewed, number=1)
        FindingFactory(pull_request=reviewed, number=2)
        pull_request_state(pull_request_id=reviewed.pk)
        assert not ReviewEvent.objects.filter(pull_request=reviewed).exists()  # the baseline
        FindingFactory(pull_request=reviewed, number=3)
        pull_request_changed(pull_request_id=reviewed.pk)
        pull_request_state(pull_request_id=reviewed.pk)
        assert list(ReviewEvent.objects.filter(pull_request=reviewed).values_list("kind", "finding_number")) == [
            (ev.FINDING_RECORDED, 3)]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
