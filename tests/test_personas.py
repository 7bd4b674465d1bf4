"""The personas hold what their names say, by the one permission function."""
import pytest

from access.permissions import Action, user_may
from tests.factories import RepositoryFactory
from tests.personas import member_of

pytestmark = pytest.mark.django_db


def test_each_role_persona_holds_its_role_and_no_more(no_role_user, reader_user, reviewer_user, maintainer_user,
                                                     superuser):
    private = RepositoryFactory(slug="acme/private", visibility="private")
    held = {
        user.username: {action for action in Action if user_may(user, action, private)}
        for user in (no_role_user, reader_user, reviewer_user, maintainer_user, superuser)
    }
    assert held["no-role"] == set()
    assert held["a-reader"] == {Action.READ}
    assert held["a-reviewer"] == {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT}
    assert held["a-maintainer"] == held["a-reviewer"] | {Action.RESOLVE}
    assert held["root"] == set(Action)


def test_a_membership_grants_its_role_on_its_repository_only(no_role_user):
    mine, other = RepositoryFactory(slug="acme/mine", visibility="private"), RepositoryFactory(slug="acme/other")
    member_of(mine, no_role_user, "maintainer")
    assert user_may(no_role_user, Action.RESOLVE, mine) and not user_may(no_role_user, Action.RESOLVE, other)


def test_token_personas_are_refused_or_read_as_their_token_says(token_client, reader_user):
    assert token_client(reader_user).get("/api/repos/").status_code == 200
    assert token_client(reader_user, expired=True, name="old").get("/api/repos/").status_code == 401
    assert token_client(reader_user, revoked=True, name="gone").get("/api/repos/").status_code == 401
    assert token_client().get("/api/repos/").status_code == 200  # public reads are on in the tests
