"""A GitHub App with a key made for the test, a fake GitHub speaking its REST API on 127.0.0.1,
and tasks run in-process (also when the suite runs against a broker), so a test sees what a
worker would have sent."""
import re

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.cache import cache

from reviews.models import PullRequest
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder
from tests.forge.fake_github import FakeGitHub

APP_ID = "4242"


@pytest.fixture(autouse=True)
def fresh_forge_budget():
    """The forge budget is kept by the process (the suite counts in no Redis): a rate limit one
    test's fake forge answered must not hold back the next test's calls."""
    from forge.outbox.budget import _budget

    _budget.cache_clear()
    yield
    _budget.cache_clear()


@pytest.fixture(scope="session")
def app_key():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return private, public


@pytest.fixture
def fake_github(httpserver, settings, app_key, eager_tasks):
    """The fake GitHub, with Recheck configured as a GitHub App against it."""
    private, public = app_key
    fake = FakeGitHub(app_id=APP_ID, public_key=public)
    httpserver.expect_request(re.compile(".*")).respond_with_handler(fake.handle)
    settings.RECHECK_GITHUB_API_URL = httpserver.url_for("/")
    settings.RECHECK_GITHUB_APP_ID = APP_ID
    settings.RECHECK_GITHUB_APP_PRIVATE_KEY = private
    settings.RECHECK_GITHUB_TOKEN = ""
    settings.RECHECK_SITE_URL = "https://recheck.example.com"
    # Backoff in fractions of a second: a test waits for the real due times, briefly.
    settings.RECHECK_GITHUB_BACKOFF_BASE_SECONDS = 0.05
    settings.RECHECK_GITHUB_BACKOFF_MAX_SECONDS = 0.2
    cache.clear()
    yield fake
    cache.clear()
    assert fake.invalid == [], "requests GitHub's schema refuses"


@pytest.fixture
def token_only(fake_github, settings):
    """Only a personal access token: no App."""
    settings.RECHECK_GITHUB_APP_ID = ""
    settings.RECHECK_GITHUB_APP_PRIVATE_KEY = ""
    settings.RECHECK_GITHUB_TOKEN = fake_github.personal_token
    return fake_github


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n")
    builder.reviewed = builder.commit("reviewed")
    return builder


@pytest.fixture
def pull_request(repo, fake_github) -> PullRequest:
    pull_request = import_review(repo, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    pull_request.repository.publish_checks = True
    pull_request.repository.save()
    fake_github.install("acme/loader")
    return pull_request


# The GitLab world's fixtures (a fake GitLab, a nested-group project and its merge request).
from tests.forge.gitlab_world import fake_gitlab, gitlab_repo, merge_request  # noqa: E402, F401
