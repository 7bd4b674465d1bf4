"""A large bundle is imported by a worker: the request answers 202 with a status URL at once."""
import json
import time

import pytest
from rest_framework.test import APIClient

from findings.models import Finding, ImportJob
from tests.api.conftest import API_PERMISSIONS, token_client
from tests.api.test_actions import bundle
from tests.findings.test_tasks import celery_worker  # noqa: F401 (fixture)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def large_bundle(count: int) -> dict:
    findings = [
        {"number": n + 1, "kind": "blocker", "title": f"Finding {n + 1}", "summary": "A finding of a large review.",
         "evidence": [{"kind": "snippet", "path": f"src/module_{n % 50}.py", "start_line": 3, "end_line": 4,
                       "text": "x = 1\ny = 2\n"},
                      {"kind": "path", "path": "config.yaml", "expect": "exists"}]}
        for n in range(count)
    ]
    return bundle(findings=findings)


def poll(client, url: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get(url)
        body = response.json()
        if response.status_code == 503:  # SQLite locks readers out while a big import commits
            time.sleep(0.5)
            continue
        assert response.status_code == 200, body
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.2)
    raise AssertionError(f"{url} not finished after {timeout}s: {body}")


def test_a_9000_finding_bundle_is_imported_in_the_background(celery_worker):  # noqa: F811
    writer = token_client(UserFactory(username="ci-bot", permissions=API_PERMISSIONS))
    text = json.dumps(large_bundle(9000))
    assert len(text) > 2_000_000
    response = writer.post("/api/reviews/import", text, content_type="application/json")
    assert response.status_code == 202, response.content[:500]
    body = response.json()
    assert body["findings"] == 9000 and response["Location"] == body["status_url"]

    done = poll(writer, body["status_url"])
    assert done["status"] == "done", done
    assert "finding 9000" in done["report"]["created"]
    assert Finding.objects.count() == 9000
    assert ImportJob.objects.get().data == {}  # the kept bundle is dropped once imported


def test_a_background_import_of_an_invalid_bundle_fails_naming_the_fields_and_imports_nothing(celery_worker):  # noqa: F811
    writer = token_client(UserFactory(username="ci-bot", permissions=API_PERMISSIONS))
    broken = large_bundle(3)
    broken["findings"][2]["kind"] = "nit"
    response = writer.post("/api/reviews/import?background=1", broken, format="json")
    assert response.status_code == 202
    failed = poll(writer, response.json()["status_url"])
    assert failed["status"] == "failed" and failed["errors"][0]["field"] == "findings[2].kind"
    assert not Finding.objects.exists()


def test_the_status_of_an_import_needs_the_import_permission(celery_worker):  # noqa: F811
    writer = token_client(UserFactory(username="ci-bot", permissions=API_PERMISSIONS))
    url = writer.post("/api/reviews/import?background=1", bundle(), format="json").json()["status_url"]
    assert APIClient().get(url).status_code in (401, 403)
    assert token_client(UserFactory(username="onlooker")).get(url).status_code == 403
    assert poll(writer, url)["status"] == "done"
