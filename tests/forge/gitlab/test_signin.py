"""Signing in with GitLab (the fake self-managed GitLab of tests/fakeforge.py, over the wire):
the account's groups, subgroups by their full path, are mapped to roles as GitHub's organisations
are: with RECHECK_SIGNIN_GRANT_READER, the Reader role on the GitLab projects of those groups and
their subgroups, and on no GitHub repository whose owner happens to be spelled the same."""
import pytest

from access.models import Membership
from access.permissions import Action, user_may
from reviews.models import Repository
from tests.factories import RepositoryFactory
from tests.forge.test_signin import forge, fresh_rate_limits, sign_in, signed_in_user  # noqa: F401
from tests.fakeforge import Account

pytestmark = pytest.mark.django_db


def test_a_gitlab_member_reads_the_projects_of_their_groups_and_subgroups(client, forge, settings):  # noqa: F811
    settings.RECHECK_SIGNIN_GRANT_READER = True
    settings.RECHECK_SIGNIN_ALLOWED = {**settings.RECHECK_SIGNIN_ALLOWED, "gitlab": ["acme/reviewers"]}
    private = Repository.Visibility.PRIVATE
    nested = RepositoryFactory(slug="acme/reviewers/tools/loader", forge="gitlab", visibility=private)
    direct = RepositoryFactory(slug="acme/reviewers/loader", forge="gitlab", visibility=private)
    github_namesake = RepositoryFactory(slug="acme/reviewers", forge="github", visibility=private)
    other_group = RepositoryFactory(slug="acme/elsewhere/loader", forge="gitlab", visibility=private)

    response = sign_in(client, forge, "gitlab", Account(id=301, login="gina", email="gina@example.com",
                                                        organisations=["acme/reviewers", "acme/reviewers/tools"]))

    assert response.status_code == 302
    user = signed_in_user(client)
    assert not user.groups.exists()
    assert sorted(Membership.objects.filter(user=user).values_list("repository__slug", "role")) == [
        ("acme/reviewers/loader", "reader"), ("acme/reviewers/tools/loader", "reader"),
    ]
    assert user_may(user, Action.READ, nested) and user_may(user, Action.READ, direct)
    assert not user_may(user, Action.READ, github_namesake) and not user_may(user, Action.READ, other_group)
    assert not user_may(user, Action.WRITE, nested)


def test_a_github_member_gets_no_role_on_a_gitlab_group_of_the_same_name(client, forge, settings):  # noqa: F811
    settings.RECHECK_SIGNIN_GRANT_READER = True
    RepositoryFactory(slug="acme/platform/loader", forge="gitlab", visibility=Repository.Visibility.PRIVATE)
    RepositoryFactory(slug="acme/loader", forge="github", visibility=Repository.Visibility.PRIVATE)

    sign_in(client, forge, "github", Account(id=302, login="gus", email="gus@example.com", organisations=["acme"]))

    user = signed_in_user(client)
    assert list(Membership.objects.filter(user=user).values_list("repository__slug", flat=True)) == ["acme/loader"]
