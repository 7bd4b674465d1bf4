import pytest
from django.core.cache import cache
from django.utils import timezone

from findings.models import Finding, VerificationRun
from tests.factories import CommitFactory, FindingFactory, PinnedCommitFactory, PullRequestFactory, VerificationFactory

pytestmark = pytest.mark.django_db

GATE = "/api/repos/acme/loader/pulls/4108/gate"


def close(finding, status=Finding.Status.FIXED):
    Finding.objects.filter(pk=finding.pk).update(status=status, resolved_at=timezone.now())


def test_open_blockers_close_the_gate_and_each_shows_its_verdict(anonymous_reader, review):
    body = anonymous_reader.get(GATE, {"commit": review.head.sha}).json()
    assert (body["mergeable"], body["verified"], body["commit"]) == (False, True, review.head.sha)
    assert [(item["number"], item["verdict"]) for item in body["open_blockers"]] == [
        (1, "present"), (2, "likely_fixed")
    ]
    assert body["open_blockers"][0]["url"] == "http://testserver/acme/loader/pull/4108/findings/1/"
    assert body["how_to_verify"] is None
    assert "1 look likely fixed: a human marks them fixed" in body["reason"]


def test_a_likely_fixed_blocker_still_blocks_until_a_human_marks_it_fixed(anonymous_reader, review):
    close(review.findings[1])
    body = anonymous_reader.get(GATE, {"commit": review.head.sha}).json()
    assert body["mergeable"] is False
    assert [(item["number"], item["verdict"]) for item in body["open_blockers"]] == [(2, "likely_fixed")]
    close(review.findings[2])
    assert anonymous_reader.get(GATE, {"commit": review.head.sha}).json()["mergeable"] is True


def test_with_no_open_blocker_the_gate_opens_and_cleanups_do_not_count(anonymous_reader, review):
    close(review.findings[1])
    close(review.findings[2], Finding.Status.DISMISSED)
    body = anonymous_reader.get(GATE, {"commit": review.head.sha}).json()
    assert (body["mergeable"], body["verified"], body["open_blockers"]) == (True, True, [])
    assert body["reason"].startswith("No open blocker at")


def test_a_fixed_blocker_whose_evidence_holds_again_is_reported_without_blocking(anonymous_reader, review):
    close(review.findings[1])
    close(review.findings[2])
    # Fixed after the head was pinned: the people who fixed them saw it, so nothing looks regressed there.
    body = anonymous_reader.get(GATE, {"commit": review.head.sha}).json()
    assert (body["mergeable"], body["possibly_regressed"]) == (True, [])
    # A push pinned after they were fixed, where the evidence of 1 and 3 holds again.
    pushed = PinnedCommitFactory(pull_request=review.pull_request, role="head").commit
    for number, verdict in ((1, "present"), (2, "likely_fixed"), (3, "partly_fixed")):
        VerificationFactory(finding=review.findings[number], commit=pushed, verdict=verdict)
    body = anonymous_reader.get(GATE, {"commit": pushed.sha}).json()
    assert body["mergeable"] is True
    assert sorted(item["number"] for item in body["possibly_regressed"]) == [1, 3]
    assert "look regressed" in body["reason"]


def test_an_unverified_commit_closes_the_gate_and_says_how_to_verify_it(anonymous_reader, review):
    pushed = CommitFactory(repository=review.repository)
    body = anonymous_reader.get(GATE, {"commit": pushed.sha[:10]}).json()
    assert (body["mergeable"], body["verified"], body["commit"]) == (False, False, pushed.sha)
    assert [item["verdict"] for item in body["open_blockers"]] == [None, None]
    assert body["how_to_verify"] == (
        f'POST http://testserver/api/repos/acme/loader/pulls/4108/verify {{"commit": "{pushed.sha}"}}'
    )
    assert "not yet verified" in body["reason"]


def test_a_partly_verified_commit_is_not_verified(anonymous_reader, review):
    pushed = CommitFactory(repository=review.repository)
    VerificationFactory(finding=review.findings[1], commit=pushed, verdict="likely_fixed")
    body = anonymous_reader.get(GATE, {"commit": pushed.sha}).json()
    assert (body["verified"], body["mergeable"]) == (False, False)


def test_the_gate_points_at_a_verification_under_way(anonymous_reader, review):
    pushed = CommitFactory(repository=review.repository)
    run = VerificationRun.objects.create(pull_request=review.pull_request, commit=pushed)
    VerificationRun.objects.create(pull_request=review.pull_request, commit=review.head)
    body = anonymous_reader.get(GATE, {"commit": pushed.sha}).json()
    assert body["verification_run"] == {
        "id": run.pk, "status": "queued", "status_url": f"http://testserver/api/runs/{run.pk}/"
    }


def test_without_a_commit_the_gate_uses_the_latest_pinned_head(anonymous_reader, review):
    assert anonymous_reader.get(GATE).json()["commit"] == review.head.sha
    newer = PinnedCommitFactory(pull_request=review.pull_request, role="head").commit
    body = anonymous_reader.get(GATE).json()
    assert (body["commit"], body["verified"]) == (newer.sha, False)


def test_without_a_commit_or_a_pinned_head_the_gate_asks_for_one(anonymous_reader, db):
    PullRequestFactory(repository__slug="acme/loader", number=4108)
    response = anonymous_reader.get(GATE)
    assert response.status_code == 400
    assert "no pinned head commit: pass ?commit=<sha>" in response.json()["detail"]


def test_an_unknown_commit_is_a_400_that_says_how_to_verify_it(anonymous_reader, review):
    response = anonymous_reader.get(GATE, {"commit": "1234567abc"})
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "Commit 1234567abc is not recorded for acme/loader. Request its verification first: "
        'POST http://testserver/api/repos/acme/loader/pulls/4108/verify {"commit": "1234567abc"}'
    )


def test_an_ambiguous_commit_is_a_400_naming_the_candidates(anonymous_reader, review):
    CommitFactory(repository=review.repository, sha="feedbee" + "0" * 33)
    CommitFactory(repository=review.repository, sha="feedbee" + "1" * 33)
    response = anonymous_reader.get(GATE, {"commit": "feedbee"})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "ambiguous" in detail and "feedbee" + "0" * 33 in detail and "feedbee" + "1" * 33 in detail


def test_a_malformed_commit_is_a_400(anonymous_reader, review):
    response = anonymous_reader.get(GATE, {"commit": "HEAD~1"})
    assert response.status_code == 400 and "hexadecimal" in response.json()["detail"]


def test_a_commit_of_another_repository_is_unknown_here(anonymous_reader, review):
    elsewhere = CommitFactory()
    assert anonymous_reader.get(GATE, {"commit": elsewhere.sha}).status_code == 400


def test_an_unknown_pull_request_is_a_404(anonymous_reader, review):
    assert anonymous_reader.get("/api/repos/acme/loader/pulls/9/gate").status_code == 404


def test_the_gate_takes_a_fixed_number_of_queries(anonymous_reader, review, django_assert_max_num_queries):
    for number in range(10, 30):
        FindingFactory(pull_request=review.pull_request, number=number)
    # The first read after a change derives the PR's state (a fixed number of queries, however
    # many findings) and stores it, with its list rows and the events of its timeline (the mark,
    # who decided, the events, and what notify writes of them: the webhooks and mail it is for);
    # a read afresh after that is the generation and the stored state. (One of them reads why
    # verdicts are errors: their items' check outcomes; two the repository's merge policy and the
    # PR's overrides.)
    with django_assert_max_num_queries(36):
        assert anonymous_reader.get(GATE, {"commit": review.head.sha}).status_code == 200
    cache.clear()
    with django_assert_max_num_queries(2):
        assert anonymous_reader.get(GATE, {"commit": review.head.sha}).status_code == 200
