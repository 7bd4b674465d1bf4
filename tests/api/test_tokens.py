"""API tokens as a client meets them: stored only as a digest, working until they expire or are
revoked, and held to their scopes and repositories."""
import hashlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiToken
from access.tokens import TokenError, api_token_create, api_token_revoke
from findings.models import Finding, VerificationRun
from tests.factories import (
    EvidenceFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    UserFactory,
    VerificationFactory,
)
from tests.api.conftest import API_PERMISSIONS
from tests.api.test_actions import bundle

pytestmark = pytest.mark.django_db


def client_with(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


@pytest.fixture
def bot(db):
    return UserFactory(username="ci-bot", permissions=API_PERMISSIONS)


@pytest.fixture
def other_repository(db):
    """acme/secret#7, with one finding: what a token limited to acme/loader must not reach."""
    pull_request = PullRequestFactory(repository=RepositoryFactory(slug="acme/secret"), number=7, title="Secret plan")
    commit = PinnedCommitFactory(pull_request=pull_request).commit
    finding = FindingFactory(pull_request=pull_request, number=1, title="Secret finding")
    EvidenceFactory(finding=finding, commit=commit, position=0)
    VerificationFactory(finding=finding, commit=commit)
    VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    return pull_request


def test_only_the_digest_of_a_token_is_stored(bot):
    token, secret = api_token_create(user=bot, name="CI", scopes=["read"])
    assert token.digest == hashlib.sha512(secret.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")
        stored = [str(value) for row in cursor.fetchall() for value in row]
    assert secret not in stored and not any(secret in value for value in stored)
    assert len(token.token_key) < len(secret) // 3  # only a lookup prefix of the secret is kept


def test_a_token_works_and_records_its_last_use(bot, review):
    token, secret = api_token_create(user=bot, name="CI", scopes=["read"])
    assert token.last_used_at is None
    client = client_with(secret)
    assert client.get("/api/findings/", REMOTE_ADDR="192.0.2.7").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None and token.last_used_ip == "192.0.2.7"


def test_an_expired_token_is_refused_saying_it_expired(bot, review):
    token, secret = api_token_create(user=bot, name="CI", scopes=["read"], days=1)
    assert client_with(secret).get("/api/findings/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    response = client_with(secret).get("/api/findings/")
    assert response.status_code == 401
    assert "expired" in response.json()["detail"] and "create_api_token" in response.json()["detail"]
    assert ApiToken.objects.filter(pk=token.pk).exists()  # kept, so the admin still shows it


def test_a_revoked_token_is_refused_at_once_and_revoking_twice_is_an_error(bot, review, staff_maintainer):
    token, secret = api_token_create(user=bot, name="CI", scopes=["read"])
    assert client_with(secret).get("/api/findings/").status_code == 200
    api_token_revoke(token=token, revoked_by=staff_maintainer)
    response = client_with(secret).get("/api/findings/")
    assert response.status_code == 401 and "revoked" in response.json()["detail"]
    with pytest.raises(TokenError, match="already revoked"):
        api_token_revoke(token=token, revoked_by=staff_maintainer)


def test_a_token_that_was_never_issued_is_refused(review):
    assert client_with("rck_" + "0" * 64).get("/api/findings/").status_code == 401


def test_a_read_token_cannot_write_even_when_its_user_may(bot, review):
    _, secret = api_token_create(user=bot, name="Dashboard", scopes=["read"])
    client = client_with(secret)
    finding = review.findings[1]
    response = client.post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "No."}, format="json")
    assert response.status_code == 403 and "'resolve'" in response.json()["detail"]
    verify = client.post("/api/repos/acme/loader/pulls/4108/verify", {}, format="json")
    assert verify.status_code == 403
    assert client.post("/api/reviews/import", bundle(), format="json").status_code == 403
    finding.refresh_from_db()
    assert finding.status == Finding.Status.OPEN


def test_a_write_scope_does_not_give_reads(bot, review):
    _, secret = api_token_create(user=bot, name="Resolver", scopes=["resolve"])
    client = client_with(secret)
    assert client.get("/api/findings/").status_code == 403
    response = client.post(
        f"/api/findings/{review.findings[1].pk}/resolve", {"status": "dismissed", "note": "Out of scope."},
        format="json",
    )
    assert response.status_code == 200


def test_a_write_scope_needs_its_user_s_permission():
    user = UserFactory(username="reader")
    with pytest.raises(TokenError, match=r"may not do what the scope\(s\) resolve allow: grant a role first \(findings.resolve_finding"):
        api_token_create(user=user, name="Resolver", scopes=["read", "resolve"])
    assert not ApiToken.objects.exists()


def test_scopes_and_days_are_checked(bot):
    with pytest.raises(TokenError, match="Unknown scope"):
        api_token_create(user=bot, name="CI", scopes=["admin"])
    with pytest.raises(TokenError, match="1 to 366 days"):
        api_token_create(user=bot, name="CI", scopes=["read"], days=1000)
    with pytest.raises(TokenError, match="Name the token"):
        api_token_create(user=bot, name=" ", scopes=["read"])


LIMITED_READS = [
    "/api/repos/acme/{repo}/",
    "/api/repos/acme/{repo}/pulls/",
    "/api/repos/acme/{repo}/pulls/{number}/",
    "/api/repos/acme/{repo}/pulls/{number}/gate",
    "/api/repos/acme/{repo}/pulls/{number}/export",
    "/api/findings/{finding}/",
    "/api/findings/{finding}/history/",
    "/api/evidence/{evidence}/",
    "/api/pulls/{pull}/",
]


@pytest.fixture
def limited_client(bot, review, other_repository):
    _, secret = api_token_create(user=bot, name="Loader only", scopes=["read", "verify", "import", "resolve"],
                                 repositories=[review.repository])
    return client_with(secret)


def _urls(pull_request):
    finding = pull_request.findings.order_by("number").first()
    values = {
        "repo": pull_request.repository.slug.split("/")[1], "number": pull_request.number, "finding": finding.pk,
        "evidence": finding.evidence.first().pk, "pull": pull_request.pk,
    }
    return [url.format(**values) for url in LIMITED_READS]


def test_a_token_limited_to_a_repository_reads_it(limited_client, review):
    for url in _urls(review.pull_request):
        assert limited_client.get(url).status_code == 200, url


def test_a_token_limited_to_a_repository_gets_404_for_another_as_if_it_did_not_exist(
    limited_client, other_repository
):
    for url in _urls(other_repository):
        response = limited_client.get(url)
        assert response.status_code == 404, url
        assert "Secret" not in response.content.decode(), url
    by_number = limited_client.get("/api/repos/acme/secret/pulls/7/").json()["detail"]
    never_recorded = limited_client.get("/api/repos/acme/nowhere/pulls/7/").json()["detail"]
    assert by_number.replace("acme/secret", "acme/nowhere") == never_recorded


def _ids_of_the_other_repository(pull_request) -> dict:
    finding = pull_request.findings.get()
    return {
        "/api/repos/": pull_request.repository.slug, "/api/pulls/": pull_request.pk, "/api/findings/": finding.pk,
        "/api/evidence/": finding.evidence.get().pk, "/api/verifications/": finding.verifications.get().pk,
        "/api/runs/": VerificationRun.objects.get(pull_request=pull_request).pk,
    }


@pytest.mark.parametrize("url", ["/api/repos/", "/api/pulls/", "/api/findings/", "/api/evidence/",
                                 "/api/verifications/", "/api/runs/"])
def test_a_limited_token_s_lists_leave_other_repositories_out(limited_client, other_repository, url):
    body = limited_client.get(url).json()
    assert body["count"] >= 1 or url == "/api/runs/"
    assert _ids_of_the_other_repository(other_repository)[url] not in [row.get("id", row.get("slug")) for row in body["results"]]
    assert "acme/secret" not in str(body) and "Secret" not in str(body)


def test_a_limited_token_cannot_write_to_another_repository(limited_client, other_repository, queued_tasks):
    finding = other_repository.findings.get()
    resolve = limited_client.post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "x"},
                                  format="json")
    assert resolve.status_code == 404
    assert limited_client.post("/api/repos/acme/secret/pulls/7/verify", {}, format="json").status_code == 404
    data = bundle(repository={"slug": "acme/secret", "clone_url": "https://github.com/acme/secret.git"})
    refused = limited_client.post("/api/reviews/import", data, format="json")
    assert refused.status_code == 403 and "acme/loader only" in refused.json()["detail"]
    finding.refresh_from_db()
    assert finding.status == Finding.Status.OPEN and queued_tasks == []


def test_a_limited_token_writes_to_its_repository(limited_client, review, queued_tasks):
    assert limited_client.post("/api/repos/acme/loader/pulls/4108/verify", {}, format="json").status_code == 202
    data = bundle(repository={"slug": "acme/loader", "clone_url": "https://github.com/acme/loader.git"})
    assert limited_client.post("/api/reviews/import", data, format="json").status_code in (200, 201)


def test_a_token_request_takes_a_fixed_number_of_queries(limited_client, review, django_assert_max_num_queries):
    limited_client.get("/api/findings/")  # the first use records it; later ones within a minute do not write
    # The token with its user, its conditional last-use update, its repositories, the user's
    # instance-wide permissions (its own and its groups': does it read every repository?), the
    # version the count is cached by, the page's ids, its rows.
    with django_assert_max_num_queries(8):
        assert limited_client.get("/api/findings/").status_code == 200


def test_a_limited_token_whose_repositories_are_deleted_reaches_none(bot, review, other_repository, queued_tasks):
    """Fail closed: the list a token was limited to being empty must mean nothing, never everything."""
    token, secret = api_token_create(user=bot, name="Doomed", scopes=["read", "verify", "import", "resolve"],
                                     repositories=[review.repository])
    assert token.limited
    token_client = client_with(secret)
    reachable = _urls(other_repository)
    review.repository.delete()
    for url in reachable:
        assert token_client.get(url).status_code == 404, url
    for url in ["/api/repos/", "/api/pulls/", "/api/findings/", "/api/evidence/", "/api/verifications/", "/api/runs/"]:
        assert token_client.get(url).json()["results"] == [], url
    finding = other_repository.findings.get()
    resolve = token_client.post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "x"},
                                format="json")
    assert resolve.status_code == 404
    refused = token_client.post(
        "/api/reviews/import",
        bundle(repository={"slug": "acme/secret", "clone_url": "https://github.com/acme/secret.git"}),
        format="json",
    )
    assert refused.status_code == 403
    finding.refresh_from_db()
    assert finding.status == Finding.Status.OPEN and queued_tasks == []
