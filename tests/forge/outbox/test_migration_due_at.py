"""Migration reporting 0002 on a database that already holds calls: a pending call is due when its
retry was, and the later annotation batches of a report not sent yet join its first call."""
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from reviews.models import Repository

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("reporting", "0001_github_calls")
AFTER = ("reporting", "0002_github_call_due_at")


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor


def test_pending_calls_keep_their_retry_time_and_a_report_becomes_one_call():
    try:
        executor = migrate(BEFORE)
        OldCall = executor.loader.project_state([BEFORE]).apps.get_model("reporting", "GitHubCall")
        repository = Repository.objects.create(slug="acme/loader", clone_url="https://example.com/acme/loader.git")
        retry_at = timezone.now() + timedelta(minutes=3)
        annotation = {"path": "a.py", "start_line": 1, "end_line": 1, "annotation_level": "notice", "message": "m"}
        common = {"repository_id": repository.pk, "sha": "a" * 40, "kind": "check_run", "state": "completed: failure",
                  "digest": "d" * 64, "parts": 2}
        first = OldCall.objects.create(**common, part=1, next_attempt_at=retry_at,
                                       body={"name": "Recheck", "output": {"annotations": [annotation] * 50}})
        OldCall.objects.create(**common, part=2, body={"output": {"annotations": [annotation] * 3}})
        sent = OldCall.objects.create(**{**common, "digest": "e" * 64, "parts": 1}, part=1, status="sent", body={})

        # The model as 0002 left it: later migrations add columns the table does not have yet.
        Call = migrate(AFTER).loader.project_state([AFTER]).apps.get_model("reporting", "GitHubCall")

        call = Call.objects.get(pk=first.pk)
        assert call.due_at == retry_at and call.status == "pending"
        assert len(call.body["output"]["annotations"]) == 53
        assert list(Call.objects.order_by("id").values_list("pk", flat=True)) == [first.pk, sent.pk]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
