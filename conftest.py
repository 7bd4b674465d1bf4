"""Shared fixtures: the personas (defined once, in tests/personas.py) and the services the suite
talks to."""
import os

import pytest


# -- Personas: the users a test acts as. Repository roles are granted with personas.member_of. --

@pytest.fixture
def no_role_user(db):
    """Signed in, with no role anywhere."""
    from tests.personas import user_with_role

    return user_with_role("no_role")


@pytest.fixture
def reader_user(db):
    """The instance-wide Reader role: reads every repository, private ones included."""
    from tests.personas import user_with_role

    return user_with_role("reader")


@pytest.fixture
def reviewer_user(db):
    """The instance-wide Reviewer role: writes, imports and verifies anywhere."""
    from tests.personas import user_with_role

    return user_with_role("reviewer")


@pytest.fixture
def maintainer_user(db):
    """The instance-wide Maintainer role: a Reviewer who also marks findings fixed, dismissed, open."""
    from tests.personas import user_with_role

    return user_with_role("maintainer")


@pytest.fixture
def superuser(db):
    from tests import personas

    return personas.superuser()


@pytest.fixture
def staff_maintainer(db):
    """A staff user who may change findings from the admin."""
    from tests import personas

    return personas.staff_maintainer()


@pytest.fixture
def staff_reader(db):
    """A staff user who may only look."""
    from tests import personas

    return personas.staff_reader()


@pytest.fixture
def token_client(db):
    """A factory of API clients holding a token: `token_client(user, scopes=..., repositories=...,
    expired=..., revoked=...)`; without a user, an anonymous caller."""
    from tests.personas import api_client

    return api_client


def pytest_configure(config):
    # Tests patch tasks (`findings.tasks.run_verification.delay`) before anything hands work on:
    # the project's Celery app must be the current one by then, as a process that enqueues makes it.
    import django

    django.setup()
    import recheck.celery  # noqa: F401


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

    from recheck.cache import _ASK_AGAIN_AT

    _ASK_AGAIN_AT.clear()  # a Redis a test found down is asked again by the next
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def eager_tasks():
    """Tasks run in-process for this test even where a broker is configured (CI): for tests about
    what a request leads to once its work is done, not about the worker that would do it."""
    from recheck.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = saved
