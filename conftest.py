"""Shared fixtures: personas and the services the suite talks to."""
import os

import pytest


@pytest.fixture
def staff_maintainer(db):
    """A staff user who may change findings from the admin."""
    from tests.factories import UserFactory

    return UserFactory(
        username="maintainer",
        is_staff=True,
        permissions=[
            "findings.view_finding",
            "findings.change_finding",
            "findings.resolve_finding",
            "findings.view_evidence",
            "findings.change_evidence",
            "findings.view_verification",
            "findings.view_findingevent",
        ],
    )


@pytest.fixture
def staff_reader(db):
    """A staff user who may only look."""
    from tests.factories import UserFactory

    return UserFactory(username="onlooker", is_staff=True, permissions=["findings.view_finding"])


def pytest_report_header(config):
    from django.conf import settings

    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    from urllib.parse import urlsplit

    url = urlsplit(settings.CELERY_BROKER_URL)
    broker = f"{url.scheme}://{url.hostname}:{url.port}" if url.scheme else "none (tasks run eagerly in-process)"
    return [f"recheck: database={database} broker={broker} CI={os.environ.get('CI', '')}"]


@pytest.fixture(autouse=True)
def _mirror_root_per_test(settings, tmp_path):
    """Each test fetches into its own mirror root, so no test sees another's mirrors."""
    settings.RECHECK_MIRROR_ROOT = tmp_path / "mirrors"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The cache outlives a test's database transaction, and row ids repeat between tests."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
