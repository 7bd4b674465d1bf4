"""Migration 0031 gives each verification stored before its own reason beside an error verdict,
by the one rule over its own results, so every pin of a finding's matrix says it at once."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# Migrating inside a test transaction is not possible on SQLite.
pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("findings", "0029_list_rows_verdict_reason"), ("reviews", "0009_pull_request_branches")]
AFTER = [("findings", "0031_verification_reason_reported_tests"), ("reviews", "0009_pull_request_branches")]


def test_each_verification_stored_before_gets_the_reason_its_own_results_give():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        Repository, PullRequest = old.get_model("reviews", "Repository"), old.get_model("reviews", "PullRequest")
        Commit = old.get_model("reviews", "Commit")
        Finding, Evidence = old.get_model("findings", "Finding"), old.get_model("findings", "Evidence")
        Verification, EvidenceResult = old.get_model("findings", "Verification"), old.get_model("findings", "EvidenceResult")
        repository = Repository.objects.create(slug="acme/one", clone_url="https://github.com/acme/one.git")
        pull_request = PullRequest.objects.create(repository=repository, number=1, title="A change")
        commits = [Commit.objects.create(repository=repository, sha=f"{n}" * 40) for n in (1, 2)]
        finding = Finding.objects.create(pull_request=pull_request, number=1, kind="blocker", title="Red")
        check = Evidence.objects.create(finding=finding, kind="check", position=0, check_name="unit-tests",
                                        commit=commits[0])
        snippet = Evidence.objects.create(finding=finding, kind="snippet", position=1, path="a.py", start_line=1,
                                          end_line=1, text="x = 1\n", commit=commits[0])
        outcomes = {}
        for commit, snippet_state in zip(commits, ("holds", "error"), strict=True):
            verification = Verification.objects.create(finding=finding, commit=commit, verdict="error",
                                                       checked_at="2026-01-01T00:00:00Z")
            EvidenceResult.objects.create(verification=verification, evidence=check, state="error",
                                          facts={"outcome": "waiting"})
            EvidenceResult.objects.create(verification=verification, evidence=snippet, state=snippet_state)
            outcomes[verification.pk] = commit.sha

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        reasons = {outcomes[pk]: reason for pk, reason in
                   new.get_model("findings", "Verification").objects.values_list("pk", "verdict_reason")}
        # At the first only the check item is in error, and it waits for CI; at the second the
        # snippet could not be read either, which no report explains.
        assert reasons == {"1" * 40: "waiting", "2" * 40: ""}
    finally:
        # Back to the latest schema whatever happened: the tests after this one need it.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
