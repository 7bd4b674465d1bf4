"""Migration reporting 0006 on a database that holds calls of both forges: GitHubCall becomes
ForgeCall in the state only, every row stays where it was (the same table, the same ids and
answers), and a group granted the calls' permissions keeps them under their new names."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviews.models import Repository

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("reporting", "0005_review_threads")
AFTER = ("reporting", "0006_forge_call")


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor


def call_permissions() -> set[str]:
    return set(Permission.objects.filter(content_type__app_label="reporting", codename__contains="call")
               .values_list("codename", flat=True))


def test_calls_of_both_forges_and_their_permissions_survive_the_rename():
    try:
        executor = migrate(BEFORE)
        OldCall = executor.loader.project_state([BEFORE]).apps.get_model("reporting", "GitHubCall")
        assert call_permissions() == {"add_githubcall", "change_githubcall", "delete_githubcall", "view_githubcall",
                                      "resend_githubcall"}
        maintainers = Group.objects.create(name="maintainers")
        maintainers.permissions.add(*Permission.objects.filter(codename__in=["view_githubcall", "resend_githubcall"]))
        person = get_user_model().objects.create_user(username="maintainer", is_staff=True)
        person.groups.add(maintainers)

        github = Repository.objects.create(slug="acme/loader", clone_url="https://github.com/acme/loader.git")
        gitlab = Repository.objects.create(slug="acme/tools/loader", clone_url="https://gitlab.com/acme/tools/loader.git",
                                           forge="gitlab")
        refused = OldCall.objects.create(
            repository_id=github.pk, forge="github", sha="a" * 40, kind="check_run", state="completed: failure",
            digest="d" * 64, body={"name": "Recheck", "head_sha": "a" * 40}, status="failed", attempts=3,
            response_status=403, response_message="Resource not accessible by integration",
            hint="The App lacks checks: write on acme/loader.", github_id=11,
        )
        status = OldCall.objects.create(
            repository_id=gitlab.pk, forge="gitlab", sha="b" * 40, kind="commit_status", state="failed: failure",
            digest="e" * 64, body={"name": "recheck", "state": "failed"}, status="sent", response_status=201,
            github_id=22,
        )
        note = OldCall.objects.create(
            repository_id=gitlab.pk, forge="gitlab", sha="b" * 40, kind="comment", state="failure",
            digest="f" * 64, body={"body": "<!-- recheck:comment -->"},
        )
        before = list(OldCall.objects.order_by("id").values())

        Call = migrate(AFTER).loader.project_state([AFTER]).apps.get_model("reporting", "ForgeCall")

        assert list(Call.objects.order_by("id").values()) == before
        assert [row.forge for row in Call.objects.order_by("id")] == ["github", "gitlab", "gitlab"]
        assert Call.objects.get(pk=note.pk).status == "pending"
        assert Call._meta.db_table == "reporting_githubcall"
        assert "reporting_githubcall" in connection.introspection.table_names()
        assert "reporting_forgecall" not in connection.introspection.table_names()
        assert {call.pk for call in Repository.objects.get(pk=gitlab.pk).forge_calls.all()} == {status.pk, note.pk}
        assert call_permissions() == {"add_forgecall", "change_forgecall", "delete_forgecall", "view_forgecall",
                                      "resend_forgecall"}
        person = get_user_model().objects.get(pk=person.pk)  # no cached permissions
        assert person.has_perm("reporting.resend_forgecall") and person.has_perm("reporting.view_forgecall")
        assert Call.objects.get(pk=refused.pk).response_message == "Resource not accessible by integration"
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
