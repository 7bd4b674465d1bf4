"""`manage.py demo_users`: three users to try the roles with, on a laptop only."""
import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from access.permissions import Action, user_may
from tests.factories import RepositoryFactory

pytestmark = pytest.mark.django_db


def run() -> str:
    out = StringIO()
    call_command("demo_users", stdout=out)
    return re.search(r"password: (\S+)", out.getvalue()).group(1)


def test_the_demo_users_log_in_with_the_printed_password_and_hold_their_roles(settings):
    settings.DEBUG = True
    first = run()
    password = run()  # again: a new password, and it is the one that works
    assert password != first
    repository = RepositoryFactory()
    users = {user.username: user for user in get_user_model().objects.filter(username__in=("reader", "reviewer", "maintainer"))}
    assert [user_may(users[name], Action.RESOLVE, repository) for name in ("reader", "reviewer", "maintainer")] == [
        False, False, True]
    assert user_may(users["reviewer"], Action.WRITE, repository) and not user_may(users["reader"], Action.WRITE, repository)
    client = Client()
    assert client.login(username="reviewer", password=password)
    assert not client.login(username="reviewer", password=first)


def test_the_demo_gets_them_with_debug_off(settings):
    settings.DEBUG, settings.RECHECK_DEMO = False, True
    password = run()
    assert Client().login(username="maintainer", password=password)


def test_a_server_never_gets_them(settings):
    settings.DEBUG, settings.RECHECK_DEMO = False, False
    with pytest.raises(CommandError, match="RECHECK_DEMO=1"):
        call_command("demo_users")
    assert not get_user_model().objects.filter(username="reviewer").exists()
