"""Every operation of the API, taken from its OpenAPI schema (so a new endpoint is covered without
editing this test), for the token personas: an expired token and a revoked one get a 401 for
every operation; a token limited to acme/loader gets a 404 (a 403 for an import, whose body names
the repository) for everything of acme/secret, and its lists never mention acme/secret; a token
with only the read scope reads acme/loader and writes nothing. Nothing of acme/secret changes."""
import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiToken, AuditEntry
from access.tokens import api_token_create, api_token_revoke
from findings.models import Finding, FindingLink, GateOverride, ImportJob, Tag, VerificationRun
from forge.models import ReviewThread
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

SECRET_WORDS = ("acme/secret", "Secret plan", "Secret finding")


@pytest.fixture
def secret_review(db):
    repository = RepositoryFactory(slug="acme/secret")
    pull_request = PullRequestFactory(repository=repository, number=7, title="Secret plan")
    commit = PinnedCommitFactory(pull_request=pull_request).commit
    finding = FindingFactory(pull_request=pull_request, number=1, title="Secret finding")
    evidence = EvidenceFactory(finding=finding, commit=commit, position=0)
    verification = VerificationFactory(finding=finding, commit=commit)
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    return {"repository": repository, "pull_request": pull_request, "finding": finding, "evidence": evidence,
            "verification": verification, "run": run}


def targets(review, secret=None, *, user=None) -> dict:
    """The identifiers a path parameter takes, by the collection it follows, for one review (and
    an import of it that `user` asked for)."""
    slug = (secret["repository"] if secret else review.repository).slug
    job = ImportJob.objects.create(data={"repository": {"slug": slug}}, findings=1, requested_by=user)
    tag = Tag.objects.create(slug="secret-kind" if secret else "silent-failure")
    if secret is None:
        review.findings[1].tags.add(tag)
        link = FindingLink.objects.create(source=review.findings[1], target=review.findings[2], kind="same_cause")
        finding = review.findings[1]
        pull_request, repository = review.pull_request, review.repository
        evidence, verification = finding.evidence.first(), review.verifications[1]
        run = VerificationRun.objects.create(pull_request=pull_request, commit=review.head)
    else:
        finding, pull_request, repository = secret["finding"], secret["pull_request"], secret["repository"]
        evidence, verification, run = secret["evidence"], secret["verification"], secret["run"]
        link = FindingLink.objects.create(
            source=finding, target=FindingFactory(pull_request=pull_request, number=2), kind="same_cause"
        )
        finding.tags.add(tag)
    entry = AuditEntry.objects.create(action="pullrequest.edit", target=pull_request.reference, repository=repository,
                                      changes={"title": ["Before", pull_request.title]})
    thread = ReviewThread.objects.create(pull_request=pull_request, root_comment_id=8001 if secret else 8000,
                                         path="src/loader.py", original_line=3)
    from notify.models import WebhookEndpoint, WebhookMessage

    webhook = WebhookEndpoint.objects.create(repository=repository, url="https://hooks.example.com/recheck",
                                             kinds=["gate.changed"], secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
    message = WebhookMessage.objects.create(endpoint=webhook, pull_request=pull_request, kind="gate.changed",
                                            message_id=f"msg_matrix_{webhook.pk}")
    override = GateOverride.objects.create(pull_request=pull_request, commit=run.commit, reason="urgent_fix",
                                           by_label="someone")
    owner, name = repository.slug.split("/")
    return {"webhooks": webhook.pk, "messages": message.pk, "owner": owner, "name": name, "number": pull_request.number, "findings": finding.pk, "audit": entry.pk,
            "thread_id": thread.root_comment_id, "overrides": override.pk,
            "evidence": evidence.pk, "verifications": verification.pk, "runs": run.pk, "pulls": pull_request.pk,
            "imports": job.pk, "links": link.pk, "files": "src/loader.py",
            "tags": tag.slug, "sha": run.commit.sha}


def operations(client) -> list[tuple[str, str, dict]]:
    schema = client.get("/api/schema/", {"format": "json"}).json()
    found = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            secured = any("tokenAuth" in requirement for requirement in operation.get("security", []))
            if secured:
                found.append((method, path, operation))
    return found


def fill(path: str, ids: dict) -> str:
    def value(match):
        name = match.group(1)
        if name in ids:
            return str(ids[name])
        collection = path[: match.start()].rstrip("/").rsplit("/", 1)[-1]
        assert collection in ids, f"No identifier for {{{name}}} after /{collection}/ in {path}: add it to targets()"
        return str(ids[collection])

    return re.sub(r"\{(\w+)\}", value, path)


def body_for(path: str, repository_slug: str) -> dict:
    if path.endswith("/publishing"):
        return {"publish_checks": True}
    if path.endswith("/resolve"):
        return {"status": "dismissed", "note": "Not ours."}
    if path.endswith("/reviews/import"):
        return bundle(repository={"slug": repository_slug, "clone_url": f"https://github.com/{repository_slug}.git"})
    if path.endswith("/description"):
        return {"repository": repository_slug, "description": "What these have in common."}
    if path.endswith("/revert"):
        return {"change": "title"}
    return {}


def call(client, method: str, url: str, body: dict):
    if url.endswith("/reports/"):
        url += "?check=unit-tests&conclusion=failure"  # a report's parameters are its query
    return client.get(url) if method == "get" else getattr(client, method)(url, body, format="json")


def with_token(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


@pytest.fixture
def bot(db):
    return UserFactory(
        username="ci-bot",
        permissions=API_PERMISSIONS + ["reviews.change_repository", "findings.change_finding", "findings.change_tag"],
    )


ALL_SCOPES = ["read", "verify", "import", "resolve", "reports:write", "settings"]


@pytest.mark.parametrize("persona", ["expired", "revoked"])
def test_an_expired_or_revoked_token_gets_401_for_every_operation(review, bot, persona, queued_tasks):
    token, secret = api_token_create(user=bot, name=persona, scopes=ALL_SCOPES)
    if persona == "expired":
        ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(minutes=1))
    else:
        api_token_revoke(token=token)
    client = with_token(secret)
    ids = targets(review, user=bot)
    statuses = dict(Finding.objects.values_list("pk", "status"))
    ops = operations(APIClient())
    assert len(ops) >= 15
    for method, path, _ in ops:
        url = fill(path, ids)
        response = call(client, method, url, body_for(path, "acme/loader"))
        assert response.status_code == 401, (method, url, response.status_code)
        assert persona in response.json()["detail"], (method, url)
    assert queued_tasks == [] and dict(Finding.objects.values_list("pk", "status")) == statuses


def test_a_token_limited_to_one_repository_sees_nothing_of_another(review, secret_review, bot, queued_tasks):
    _, secret = api_token_create(user=bot, name="Loader only", scopes=ALL_SCOPES, repositories=[review.repository])
    client = with_token(secret)
    ids = targets(review, secret_review, user=bot)
    for method, path, _ in operations(APIClient()):
        url = fill(path, ids)
        body = body_for(path, "acme/secret")
        response = call(client, method, url, body)
        text = response.content.decode()
        if path.startswith("/api/audit/"):
            assert response.status_code == 403, (method, url)  # instance admins only, before any lookup
        elif "{" in path:
            assert response.status_code == 404, (method, url, response.status_code, text[:200])
        elif method != "get":
            assert response.status_code == 403, (method, url, response.status_code)
        else:
            assert response.status_code in (200, 403), (method, url, response.status_code)
        # Only what the request itself named may come back (an import's refusal names its bundle's repository).
        asked = url + json.dumps(body)
        leaked = [word for word in SECRET_WORDS if word in text and word not in asked]
        assert not leaked, (method, url, leaked)
    secret_review["finding"].refresh_from_db()
    assert secret_review["finding"].status == Finding.Status.OPEN and queued_tasks == []
    assert VerificationRun.objects.filter(pull_request=secret_review["pull_request"]).count() == 1
    secret_review["repository"].refresh_from_db()
    assert not secret_review["repository"].publish_checks


def test_a_read_token_reads_every_operation_of_its_repository_and_writes_none(review, bot, queued_tasks):
    _, secret = api_token_create(user=bot, name="Reader", scopes=["read"])
    client = with_token(secret)
    ids = targets(review, user=bot)
    for method, path, _ in operations(APIClient()):
        url = fill(path, ids)
        response = call(client, method, url, body_for(path, "acme/loader"))
        if method != "get":
            assert response.status_code == 403 and "scope" in response.json()["detail"], (method, url)
        elif path == "/api/audit/":
            assert response.status_code == 403, (method, url)  # instance admins only
        elif "/webhooks/" in path:
            # A repository's outgoing webhooks are its Admin's settings: the settings scope reads them.
            assert response.status_code == 403 and "scope" in response.json()["detail"], (method, url)
        elif path.endswith("/changes"):
            # Read, and answered: this review's repository was never fetched, which it says.
            assert response.status_code == 409 and "not been fetched" in response.json()["detail"], (method, url)
        else:
            assert response.status_code == 200, (method, url, response.status_code)
    assert queued_tasks == []
