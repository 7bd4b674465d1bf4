"""A GitLab project in nested groups tracked by Recheck, the fake GitLab it reports to, and its
documented webhook examples (webhook_examples/gitlab/, from GitLab's "Webhook events" page,
changed only in names, ids and SHAs), delivered as GitLab delivers them."""
import copy
import json
import re
import uuid
from pathlib import Path

import pytest
from django.core.cache import cache

from findings.services.review_import import review_import
from reviews.models import PullRequest
from tests.findings.services.test_verification import LOADER
from tests.forge.fake_gitlab import FakeGitLab
from tests.gitrepo import GitRepoBuilder

EXAMPLES = Path(__file__).parent / "webhook_examples" / "gitlab"
SECRET = "gitlab-webhook-secret-for-tests"
SLUG = "platform/tools/recheck-demo"
PROJECT_ID = 4242
IID = 12


def example(name: str) -> dict:
    return copy.deepcopy(json.loads((EXAMPLES / f"{name}.json").read_text()))


def merge_request_event(action: str, head: str, *, oldrev: str | None = None, iid: int = IID, **attributes) -> dict:
    payload = example("merge_request")
    payload["object_attributes"].update(action=action, iid=iid, **attributes)
    payload["object_attributes"]["last_commit"]["id"] = head
    if oldrev:
        payload["object_attributes"]["oldrev"] = oldrev
    return payload


def deliver_hook(client, payload: dict, *, event: str = "Merge Request Hook", event_uuid: str | None = None,
                 token: str | None = SECRET, body: bytes | None = None):
    headers = {"HTTP_X_GITLAB_EVENT": event, "HTTP_X_GITLAB_EVENT_UUID": event_uuid or str(uuid.uuid4())}
    if token is not None:
        headers["HTTP_X_GITLAB_TOKEN"] = token
    return client.post("/api/hooks/gitlab", data=body if body is not None else json.dumps(payload),
                       content_type="application/json", **headers)


@pytest.fixture
def fake_gitlab(httpserver, settings, eager_tasks):
    fake = FakeGitLab()
    fake.add_project(PROJECT_ID, SLUG, merge_requests=[IID])
    httpserver.expect_request(re.compile(".*")).respond_with_handler(fake.handle)
    settings.RECHECK_GITLAB_URL = httpserver.url_for("/").rstrip("/")
    settings.RECHECK_GITLAB_TOKEN = fake.token
    settings.RECHECK_GITLAB_WEBHOOK_SECRET = SECRET
    settings.RECHECK_SITE_URL = "https://recheck.example.com"
    settings.RECHECK_GITHUB_BACKOFF_BASE_SECONDS = 0.05
    settings.RECHECK_GITHUB_BACKOFF_MAX_SECONDS = 0.2
    cache.clear()
    yield fake
    cache.clear()
    assert fake.invalid == [], "requests GitLab's API refuses"


@pytest.fixture
def gitlab_repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n")
    builder.reviewed = builder.commit("reviewed")
    return builder


@pytest.fixture
def merge_request(gitlab_repo, fake_gitlab, settings) -> PullRequest:
    """The review of merge request !12 of platform/tools/recheck-demo, a self-managed GitLab's
    project (the fake's address), reporting its status and its note."""
    review_import(data={
        "repository": {"slug": SLUG, "forge": "gitlab", "forge_url": settings.RECHECK_GITLAB_URL,
                       "clone_url": str(gitlab_repo.path), "web_url": f"https://gitlab.example.com/{SLUG}"},
        "pull_request": {"number": IID, "title": "Loader"},
        "commits": [{"sha": gitlab_repo.reviewed, "role": "reviewed"}],
        "findings": [
            {"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops",
             "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": 10}]},
            {"number": 2, "kind": "blocker", "title": "Debug flag left on",
             "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}]},
        ],
    }, actor=None)
    pull_request = PullRequest.objects.select_related("repository").get(repository__slug=SLUG, number=IID)
    repository = pull_request.repository
    repository.publish_checks = repository.publish_comment = True
    repository.save()
    return pull_request
