"""The merge gate's answer is cached per pull request and commit, and every write that can change
the answer changes it: a verification, a resolve, an import, a pin, a run, a bulk update."""
import re

import pytest
from django.apps import apps
from django.db import connection
from django.db.models.signals import post_delete, post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from findings.services.review_import import review_import
from findings.models import EvidenceResult, Finding, PullRequestGate, PullRequestState, Verification
from findings.services.runs import verification_run_finish, verification_run_request
from findings.services.resolution import finding_resolve
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_pin_commit
from tests.findings.services.test_verification import LOADER, import_review

pytestmark = pytest.mark.django_db

GATE = "/api/repos/acme/loader/pulls/7/gate"


def gate(client, sha=None):
    response = client.get(GATE, {"commit": sha} if sha else {})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_second_ask_is_answered_from_the_cache(anonymous_reader, repo, django_assert_max_num_queries):
    import_review(repo)
    first = gate(anonymous_reader, repo.reviewed)
    # One query, for the pull request's generation: the commit as asked for is in the key.
    with django_assert_max_num_queries(1):
        assert gate(anonymous_reader, repo.reviewed) == first
    # Another spelling of the same commit is a key of its own, answered alike.
    assert gate(anonymous_reader, repo.reviewed[:8].upper()) == first
    with django_assert_max_num_queries(1):
        assert gate(anonymous_reader, repo.reviewed[:8]) == first


def test_abbreviations_answer_for_what_they_name_now(anonymous_reader, repo):
    """The key holds the SHA as asked; recording a commit that makes an abbreviation ambiguous, or
    resolving one, moves the generation, so a cached answer cannot name the wrong commit."""
    import_review(repo)
    short = repo.reviewed[:7]
    assert repo.reviewed.startswith(gate(anonymous_reader, short)["commit"])
    pull_request = PullRequest.objects.get(number=7)
    twin = short + "0" * 33 if not repo.reviewed.startswith(short + "0" * 33) else short + "1" * 33
    Commit.objects.create(repository=pull_request.repository, sha=twin, resolved=True)
    response = anonymous_reader.get(GATE, {"commit": short})
    assert response.status_code == 400 and "ambiguous" in response.json()["detail"], response.content


def test_the_browsable_api_gets_the_same_answer(anonymous_reader, repo):
    import_review(repo)
    first = gate(anonymous_reader, repo.reviewed)
    response = anonymous_reader.get(GATE, {"commit": repo.reviewed}, HTTP_ACCEPT="text/html")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert first["reason"] in response.content.decode()


def test_a_token_limited_to_other_repositories_is_not_served_a_cached_answer(anonymous_reader, repo, db):
    from access.tokens import api_token_create
    from reviews.models import Repository
    from tests.factories import UserFactory

    import_review(repo)
    gate(anonymous_reader, repo.reviewed)  # cached now
    other = Repository.objects.create(slug="acme/other", clone_url="https://example.com/acme/other.git")
    _, secret = api_token_create(user=UserFactory(), name="CI", scopes=["read"], repositories=[other])
    response = anonymous_reader.get(GATE, {"commit": repo.reviewed}, HTTP_AUTHORIZATION=f"Token {secret}")
    assert response.status_code == 404, response.content


def test_every_write_that_changes_the_answer_changes_it(anonymous_reader, token_with_permission, repo):
    pull_request = import_review(repo)
    commit = Commit.objects.get(sha__startswith=repo.reviewed[:8])

    before = gate(anonymous_reader, repo.reviewed)
    assert (before["verified"], [b["verdict"] for b in before["open_blockers"]]) == (False, [None, None])

    # A verification.
    pull_request_verify(pull_request=pull_request, commit=commit)
    answer = gate(anonymous_reader, repo.reviewed)
    assert (answer["verified"], [b["verdict"] for b in answer["open_blockers"]]) == (True, ["present", "present"])

    # A resolve, through the API.
    finding = Finding.objects.get(pull_request=pull_request, number=2)
    response = token_with_permission.post(
        f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "Not ours."}, format="json"
    )
    assert response.status_code == 200, response.content
    assert [b["number"] for b in gate(anonymous_reader, repo.reviewed)["open_blockers"]] == [1]

    # A resolve through the service the admin calls.
    finding_resolve(finding=finding, status="open", actor=None, source="admin")
    assert [b["number"] for b in gate(anonymous_reader, repo.reviewed)["open_blockers"]] == [1, 2]

    # An import that adds a blocker.
    review_import(data={
        "repository": {"slug": "acme/loader", "clone_url": str(repo.path)},
        "pull_request": {"number": 7, "title": "Loader"},
        "findings": [{"number": 9, "kind": "blocker", "title": "One more", "evidence": []}],
    })
    answer = gate(anonymous_reader, repo.reviewed)
    assert [b["number"] for b in answer["open_blockers"]] == [1, 2, 9] and answer["verified"] is False

    # A bulk update, as an admin list action or a script would make.
    Finding.objects.filter(pull_request=pull_request, number=9).update(title="Renamed")
    assert gate(anonymous_reader, repo.reviewed)["open_blockers"][2]["title"] == "Renamed"

    # A pin: the gate without a commit answers for the latest pinned head.
    head = repo.write("src/loader.py", "# pushed\n" + LOADER).commit("head")
    pull_request_pin_commit(
        pull_request=pull_request,
        commit=Commit.objects.create(
            repository=pull_request.repository, sha=head, resolved=True, committed_at=timezone.now()
        ),
        role="head",
    )
    assert gate(anonymous_reader)["commit"] == head

    # A verification of a commit whose abbreviations are all resolved already (resolving one is
    # a write of its own).
    assert gate(anonymous_reader, head)["verified"] is False
    pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=head), fetch=True)
    answer = gate(anonymous_reader, head)
    assert answer["verified"] is True and {b["verdict"] for b in answer["open_blockers"]} >= {"present"}

    # A run requested, then finished.
    run = verification_run_request(pull_request=pull_request, commit_sha=head)
    assert gate(anonymous_reader, head)["verification_run"]["id"] == run.pk
    verification_run_finish(run, message="done")
    assert gate(anonymous_reader, head)["verification_run"] is None

    # A verification's verdicts changed by a bulk update.
    Verification.objects.filter(finding__pull_request=pull_request, commit=commit).update(verdict="likely_fixed")
    assert {b["verdict"] for b in gate(anonymous_reader, repo.reviewed)["open_blockers"]} == {"likely_fixed", None}


# Written with a stored state, from it (findings.state.timeline, notify's receivers).
TIMELINE_MODELS = {"findings.TimelineMark", "findings.ReviewEvent", "findings.FindingEvent", "notify.WebhookEndpoint",
                   "notify.WebhookMessage", "notify.Subscription", "notify.MailMessage"}


def test_every_table_the_gate_reads_moves_the_generation_when_written(anonymous_reader, review):
    """A table added to the gate's reads without a way to move the generation fails here."""
    with CaptureQueriesContext(connection) as queries:
        assert anonymous_reader.get(GATE.replace("/7/", "/4108/"), {"commit": review.head.sha}).status_code == 200
    tables = {name for query in queries.captured_queries for name in re.findall(r'"(\w+_\w+)"\."', query["sql"])}
    models = {model._meta.db_table: model for model in apps.get_models()}
    read = {models[table] for table in tables if table in models}
    assert {model.__name__ for model in read} >= {"Finding", "Verification", "PullRequest", "Commit"}
    # Evidence results are written by the verification store alone, which moves the generation
    # itself (findings.receivers); the stored state is keyed by the generation it was derived at.
    for model in read - {PullRequest, EvidenceResult, PullRequestState, PullRequestGate}:
        if model._meta.label in TIMELINE_MODELS:
            continue  # written with the state, from it, and never read to answer
        assert post_save.has_listeners(model) and post_delete.has_listeners(model), model
        if model._meta.label not in ("reviews.Repository", "findings.VerificationRun", "authtoken.Token"):
            # Bulk writes send no signals: the model's queryset moves the generation itself.
            assert "update" in type(model._default_manager.all()).__dict__ or any(
                "update" in klass.__dict__ for klass in type(model._default_manager.all()).__mro__[:-2]
            ), model


def test_a_cache_key_is_valid_whatever_the_caller_typed():
    """The SHA and the origin come from the request: the key is hashed, so no cache backend sees
    control characters, spaces or an unbounded length."""
    from django.core.cache.backends.base import memcache_key_warnings

    from findings.selectors.gate import gate_cache_key

    key = gate_cache_key(pull_request_id=2, generation=49, sha="dãi\x10é " * 100, origin="http://localhost/")
    assert list(memcache_key_warnings(key)) == []
    assert key != gate_cache_key(pull_request_id=2, generation=49, sha="abc", origin="http://localhost/")


def test_a_cached_answer_of_a_private_repository_goes_only_to_those_who_may_read_it(private_review, repo):
    """The cache is looked up before the pull request is read in full: the lookup itself must hold
    the caller to what it may read, or an answer a maintainer caused to be cached would reach
    anyone who asks for the same URL."""
    cached = gate(private_review.member, repo.reviewed)  # an answer the member's read put in the cache
    for client in private_review.others:
        response = client.get(GATE, {"commit": repo.reviewed})
        assert response.status_code == 404, response.content
        assert b"open_blockers" not in response.content

    # A membership taken away takes the cached answer with it.
    assert gate(private_review.member, repo.reviewed) == cached
    private_review.membership.delete()
    assert private_review.member.get(GATE, {"commit": repo.reviewed}).status_code == 404
