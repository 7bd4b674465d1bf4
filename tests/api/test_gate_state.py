"""The gate reads the pull request's stored state: afresh (the cache emptied), one query for a
PR of 40 findings as for one of 25,000, and an answer that lists at most fifty open blockers; and it
says verified only for a commit the mirror knows, verified without errors at the evidence's current
version."""
from datetime import timedelta

import pytest
from django.db import connection
from django.core.cache import cache
from django.utils import timezone

from findings.models import Finding, PullRequestGate, Verification, VerificationRun
from findings.state.stored import pull_request_state_derive
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from tests.factories import make_sha

pytestmark = pytest.mark.django_db


def big_pull_request(findings: int) -> tuple[PullRequest, Commit]:
    """A PR of `findings` findings, one in five a blocker, one in ten open, verified at its head:
    built with bulk_create, as the benchmark builds it."""
    now = timezone.now()
    repository = Repository.objects.create(slug="acme/big", clone_url="https://example.com/acme/big.git")
    pull_request = PullRequest.objects.create(repository=repository, number=1, title="Big")
    head = Commit.objects.create(repository=repository, sha=make_sha("big-head"), resolved=True)
    PinnedCommit.objects.create(pull_request=pull_request, commit=head, role="head")
    Finding.objects.bulk_create(
        (
            Finding(
                pull_request=pull_request, number=number, kind="blocker" if number % 5 == 0 else "cleanup",
                title=f"Finding {number}", status="open" if number % 10 == 0 else "fixed",
                resolved_at=None if number % 10 == 0 else now,
            )
            for number in range(1, findings + 1)
        ),
        batch_size=5000,
    )
    # By number, not by id: ids depend on the rows earlier tests made (PostgreSQL's sequences are
    # not reset between tests), and the counts below must not.
    verdicts = ["present", "likely_fixed", "present", "partly_fixed"]
    Verification.objects.bulk_create(
        (
            Verification(finding_id=pk, commit=head, verdict=verdicts[number % 4], checked_at=now)
            for pk, number in Finding.objects.filter(pull_request=pull_request).values_list("pk", "number")
        ),
        batch_size=5000,
    )
    return pull_request, head


@pytest.mark.parametrize("findings", [40, 25_000])
def test_the_gate_read_afresh_is_one_query_however_many_findings(
    anonymous_reader, django_assert_max_num_queries, findings
):
    pull_request, head = big_pull_request(findings)
    # Stored as the task that verified stores it (verification_run_finish).
    pull_request_state_derive(pull_request_id=pull_request.pk)
    for sha in (head.sha, head.sha[:12], ""):
        cache.clear()
        with django_assert_max_num_queries(1):
            response = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": sha} if sha else {})
        body = response.json()
        assert response.status_code == 200, body
        assert body["verified"] is True and body["mergeable"] is False
        # The first 50, lowest numbers first, and the count of them all.
        assert body["open_blockers_count"] == findings // 10
        assert [entry["number"] for entry in body["open_blockers"]] == list(range(10, findings + 1, 10))[:50]
    # Every open blocker is in the findings list the answer points to.
    url, numbers = body["open_blockers_url"] + "&page_size=200", []
    while url:
        page = anonymous_reader.get(url).json()
        numbers += [finding["number"] for finding in page["results"]]
        url = page["next"]
    assert sorted(numbers) == list(range(10, findings + 1, 10))
    # A live run at the commit, or at every pin, is shown in the same query; one at another
    # commit, or with no sign of life for too long, is not.
    other = Commit.objects.create(repository=pull_request.repository, sha=make_sha("elsewhere"), resolved=True)
    VerificationRun.objects.create(pull_request=pull_request, commit=other, status="running")
    pull_request_state_derive(pull_request_id=pull_request.pk)
    for sha in (head.sha, head.sha[:12], ""):
        cache.clear()
        body = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": sha} if sha else {}).json()
        assert body["verification_run"] is None
    for commit in (head, None):
        run = VerificationRun.objects.create(pull_request=pull_request, commit=commit, status="running")
        pull_request_state_derive(pull_request_id=pull_request.pk)
        for sha in (head.sha, head.sha[:12], ""):
            cache.clear()
            with django_assert_max_num_queries(1):
                body = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": sha} if sha else {}).json()
            assert body["verification_run"]["id"] == run.pk and body["verification_run"]["status"] == "running"
        VerificationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(days=1))
        cache.clear()
        assert anonymous_reader.get("/api/repos/acme/big/pulls/1/gate").json()["verification_run"] is None


def test_a_commit_the_mirror_does_not_know_is_never_verified(anonymous_reader):
    """Issue 28's break: a SHA that names no commit was verified (every verdict an error) and the
    gate, counting an error as a verdict, said verified: with no open blocker, mergeable."""
    pull_request, head = big_pull_request(40)
    Finding.objects.filter(pull_request=pull_request, status="open").update(status="dismissed", resolved_at=timezone.now())
    ghost = Commit.objects.create(repository=pull_request.repository, sha=make_sha("no-such-commit"), resolved=False)
    PinnedCommit.objects.create(pull_request=pull_request, commit=ghost, role="head")
    ids = Finding.objects.filter(pull_request=pull_request).values_list("pk", flat=True)
    Verification.objects.bulk_create(
        Verification(finding_id=pk, commit=ghost, verdict="error", checked_at=timezone.now()) for pk in ids
    )
    body = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": ghost.sha}).json()
    assert (body["verified"], body["mergeable"]) == (False, False)
    assert "not known to the mirror" in body["reason"]
    assert body["how_to_verify"]


def test_a_blocker_that_could_not_be_checked_leaves_the_commit_unverified(anonymous_reader):
    pull_request, head = big_pull_request(40)
    blocker = Finding.objects.filter(pull_request=pull_request, kind="blocker", status="open").first()
    Verification.objects.filter(finding=blocker, commit=head).update(verdict="error")
    body = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": head.sha}).json()
    assert (body["verified"], body["mergeable"]) == (False, False)
    assert "could not be checked" in body["reason"]


def test_a_verification_of_older_evidence_does_not_count(anonymous_reader):
    pull_request, head = big_pull_request(40)
    Finding.objects.filter(pull_request=pull_request, status="open").exclude(number=10).update(
        status="dismissed", resolved_at=timezone.now()
    )
    # Its evidence changed after the verification (a store racing an edit): that verdict says nothing now.
    Finding.objects.filter(pull_request=pull_request, number=10).update(evidence_version=2)
    body = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": head.sha}).json()
    assert body["verified"] is False
    assert [(item["number"], item["verdict"]) for item in body["open_blockers"]] == [(10, None)]


def test_a_failed_last_run_leaves_the_commit_unverified(anonymous_reader):
    pull_request, head = big_pull_request(40)
    Finding.objects.filter(pull_request=pull_request, status="open").update(status="dismissed", resolved_at=timezone.now())
    assert anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": head.sha}).json()["mergeable"] is True
    VerificationRun.objects.create(pull_request=pull_request, commit=head, status="failed", finished_at=timezone.now())
    body = anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": head.sha}).json()
    assert (body["verified"], body["mergeable"]) == (False, False)
    assert "failed" in body["reason"]


def test_the_stored_answer_is_the_answer_built_in_full(anonymous_reader):
    pull_request, head = big_pull_request(40)
    VerificationRun.objects.create(pull_request=pull_request, commit=None, status="queued")
    pull_request_state_derive(pull_request_id=pull_request.pk)
    asked = [{"commit": head.sha}, {"commit": head.sha[:9]}, {}]
    stored = [anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", query).json() for query in asked]
    PullRequestGate.objects.all().delete()  # the view then builds the answer from the state in full
    cache.clear()
    built = [anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", query).json() for query in asked]
    assert stored == built
    assert stored[0]["open_blockers"][0]["url"] == "http://testserver/acme/big/pull/1/findings/10/"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares statements; SQLite plans in-process")
def test_on_postgresql_the_gate_query_is_kept_prepared(anonymous_reader, django_assert_max_num_queries):
    """Planning the gate's query is most of what it costs on PostgreSQL: after a few runs on a
    connection it is a prepared statement there, still counted as one query, with the same answer."""
    pull_request, head = big_pull_request(40)
    pull_request_state_derive(pull_request_id=pull_request.pk)
    answers = []
    for _ in range(8):
        with django_assert_max_num_queries(1):
            answers.append(anonymous_reader.get("/api/repos/acme/big/pulls/1/gate", {"commit": head.sha}).json())
    assert all(answer == answers[0] for answer in answers) and answers[0]["verified"] is True
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [row[0] for row in cursor.fetchall()]
    assert any("findings_pullrequestgate" in statement for statement in statements), statements
