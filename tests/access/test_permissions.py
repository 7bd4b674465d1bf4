"""`user_may`, the one permission function, and the roles' groups it reads."""
import pytest
from django.contrib.auth.models import AnonymousUser, Group

from access.permissions import Action, refusal, user_may
from tests.factories import RepositoryFactory, UserFactory

pytestmark = pytest.mark.django_db

EVERY_WRITE = [Action.WRITE, Action.IMPORT, Action.VERIFY, Action.RESOLVE, Action.SETTINGS]


def holds(user, repository=None):
    return {action for action in Action if user_may(user, action, repository)}


def test_the_migration_makes_the_three_roles():
    assert set(Group.objects.values_list("name", flat=True)) >= {"Reader", "Reviewer", "Maintainer"}


def test_each_role_holds_what_its_name_says(settings):
    settings.RECHECK_PUBLIC_READ = False
    repository = RepositoryFactory()
    reader, reviewer, maintainer = (UserFactory(groups=[role]) for role in ("Reader", "Reviewer", "Maintainer"))
    assert holds(reader, repository) == {Action.READ}
    assert holds(reviewer, repository) == {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT}
    assert holds(maintainer, repository) == {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT, Action.RESOLVE}


def test_staff_status_alone_grants_nothing_and_a_superuser_everything(settings):
    settings.RECHECK_PUBLIC_READ = False
    assert holds(UserFactory(is_staff=True)) == {Action.READ}
    assert holds(UserFactory(is_superuser=True)) == set(Action)


def test_an_anonymous_visitor_reads_only_when_reading_is_public(settings):
    settings.RECHECK_PUBLIC_READ = True
    assert holds(AnonymousUser()) == {Action.READ}
    settings.RECHECK_PUBLIC_READ = False
    assert holds(AnonymousUser()) == set()


def test_an_inactive_user_holds_nothing_it_was_given(settings):
    settings.RECHECK_PUBLIC_READ = False
    assert holds(UserFactory(groups=["Maintainer"], is_active=False)) == set()


def test_a_refusal_says_which_role_to_ask_for():
    repository = RepositoryFactory(slug="acme/rl")
    reader = UserFactory(username="rita", groups=["Reader"])
    assert refusal(reader, Action.RESOLVE, repository) == (
        "rita may not mark findings fixed, dismissed or open in acme/rl: that needs the Maintainer role; "
        "ask an admin of the repository or of this server to grant it."
    )
    assert refusal(AnonymousUser(), Action.VERIFY, repository) == "Sign in to start verifications of acme/rl."


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_gets_its_roles_back():
    """A transactional test's flush (or an operator's) empties the groups the migration made."""
    from django.core.management import call_command

    call_command("flush", interactive=False, verbosity=0)
    reviewer = UserFactory(groups=["Reviewer"])
    assert holds(reviewer) >= {Action.WRITE, Action.VERIFY} and Action.RESOLVE not in holds(reviewer)
