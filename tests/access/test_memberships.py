"""Roles per repository: memberships of users and groups, public and private repositories, and the
one permission function's answers on them; the admin, the commands and imports asking it too."""
import pytest
from django.contrib.auth.models import AnonymousUser, Group
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.test import Client

from access.models import ApiToken, AuditEntry, Membership
from access.permissions import Action, user_may
from reviews.selectors import readable_repositories
from access.tokens import TokenError, api_token_create
from findings.exchange.bundle import bundle_export
from findings.services.review_import import ImportRefused, review_import
from findings.models import Finding
from reviews.models import Repository
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.api.test_actions import bundle

pytestmark = pytest.mark.django_db

PRIVATE = Repository.Visibility.PRIVATE


def holds(user, repository=None):
    return {action for action in Action if user_may(user, action, repository)}


def fresh(user):
    """The user as the next request loads it (memberships are read once per user object)."""
    return type(user).objects.get(pk=user.pk)


def test_each_role_of_a_membership_holds_its_actions_on_its_repository_only(settings):
    settings.RECHECK_PUBLIC_READ = False
    mine, other = RepositoryFactory(visibility=PRIVATE), RepositoryFactory(visibility=PRIVATE)
    expected = {
        "reader": {Action.READ},
        "reviewer": {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT},
        "maintainer": {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT, Action.RESOLVE},
        "admin": set(Action),
    }
    for role, actions in expected.items():
        user = UserFactory()
        Membership.objects.create(repository=mine, user=user, role=role)
        assert holds(user, mine) == actions, role
        assert holds(user, other) == set(), role
        # Without a repository: "on at least one", what a link or an endpoint's first gate asks.
        assert holds(user) == actions, role


def test_a_groups_membership_is_every_members_and_the_higher_role_wins():
    repository = RepositoryFactory(visibility=PRIVATE)
    team = Group.objects.create(name="loader-team")
    user = UserFactory()
    user.groups.add(team)
    Membership.objects.create(repository=repository, group=team, role="maintainer")
    Membership.objects.create(repository=repository, user=user, role="reader")
    assert holds(fresh(user), repository) == {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT, Action.RESOLVE}
    assert list(readable_repositories(fresh(user))) == [repository]


def test_a_membership_is_one_user_or_one_group_once_per_repository():
    repository, user, team = RepositoryFactory(), UserFactory(), Group.objects.create(name="t")
    Membership.objects.create(repository=repository, user=user, role="reader")
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(repository=repository, user=user, role="admin")
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(repository=repository, user=user, group=team, role="admin")
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(repository=repository, role="admin")
    Membership.objects.create(repository=repository, group=team, role="admin")


def test_an_instance_wide_role_holds_its_actions_on_every_repository_private_ones_too(settings):
    settings.RECHECK_PUBLIC_READ = False
    private = RepositoryFactory(visibility=PRIVATE)
    reviewer = UserFactory(groups=["Reviewer"])
    assert holds(reviewer, private) == {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT}
    assert set(readable_repositories(reviewer)) == {private}
    assert holds(UserFactory(is_superuser=True), private) == set(Action)


def test_a_private_repository_is_read_only_with_a_role_and_a_public_one_as_the_server_reads(settings):
    public, private = RepositoryFactory(), RepositoryFactory(visibility=PRIVATE)
    nobody = UserFactory()
    settings.RECHECK_PUBLIC_READ = True
    assert user_may(AnonymousUser(), Action.READ, public) and user_may(nobody, Action.READ, public)
    assert not user_may(AnonymousUser(), Action.READ, private) and not user_may(nobody, Action.READ, private)
    assert set(readable_repositories(AnonymousUser())) == {public}
    settings.RECHECK_PUBLIC_READ = False
    assert not user_may(AnonymousUser(), Action.READ, public) and user_may(nobody, Action.READ, public)
    assert list(readable_repositories(AnonymousUser())) == []
    # A role on a public repository is not needed to read it, and gives writes.
    Membership.objects.create(repository=public, user=nobody, role="reviewer")
    assert holds(fresh(nobody), public) == {Action.READ, Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT}


def test_readable_repositories_is_one_query_whatever_the_memberships(django_assert_num_queries):
    user = UserFactory()
    for _ in range(5):
        Membership.objects.create(repository=RepositoryFactory(visibility=PRIVATE), user=user, role="reader")
    RepositoryFactory(visibility=PRIVATE)
    user = fresh(user)
    user.get_all_permissions()  # the instance-wide role is read once per user, as Django keeps it
    with django_assert_num_queries(1):
        assert len(list(readable_repositories(user))) == 5
    with django_assert_num_queries(1):
        assert Finding.objects.readable_by(user).count() == 0


def test_findings_of_a_private_repository_are_hidden_from_lists_search_and_counts():
    private = RepositoryFactory(slug="hidden/one", visibility=PRIVATE)
    FindingFactory(pull_request=PullRequestFactory(repository=private), title="Hidden wombat")
    FindingFactory(pull_request=PullRequestFactory(repository=RepositoryFactory(slug="open/one")), title="Open wombat")
    nobody = UserFactory()
    assert [f.title for f in Finding.objects.readable_by(nobody).search("wombat")] == ["Open wombat"]
    client = Client()
    client.force_login(nobody)
    page = client.get("/", {"q": "wombat"}).content.decode()
    assert "Open wombat" in page and "Hidden wombat" not in page and "hidden/one" not in page
    assert client.get("/hidden/one/").status_code == 404
    member = UserFactory()
    Membership.objects.create(repository=private, user=member, role="reader")
    client.force_login(member)
    page = client.get("/", {"q": "wombat"}).content.decode()
    assert "Hidden wombat" in page and client.get("/hidden/one/").status_code == 200


def test_the_admin_lists_and_opens_only_what_the_staff_user_may_read(client):
    mine = RepositoryFactory(slug="mine/repo", visibility=PRIVATE)
    theirs = RepositoryFactory(slug="their/repo", visibility=PRIVATE)
    FindingFactory(pull_request=PullRequestFactory(repository=mine), title="My finding")
    hidden = FindingFactory(pull_request=PullRequestFactory(repository=theirs), title="Their finding")
    # Editing findings is the staff user's model permission; reading is by membership only.
    staff = UserFactory(is_staff=True, permissions=["findings.change_finding"])
    Membership.objects.create(repository=mine, user=staff, role="reviewer")
    client.force_login(staff)
    listing = client.get("/admin/findings/finding/").content.decode()
    assert "My finding" in listing and "Their finding" not in listing and "their/repo" not in listing
    response = client.get(f"/admin/findings/finding/{hidden.pk}/change/")
    assert response.status_code == 302 and "Their finding" not in response.content.decode()


def test_membership_changes_in_the_admin_are_audited_and_scoped_to_the_repositories_one_administers(client):
    mine, theirs = RepositoryFactory(slug="mine/repo"), RepositoryFactory(slug="their/repo")
    repo_admin = UserFactory(username="repo-admin", is_staff=True)
    Membership.objects.create(repository=mine, user=repo_admin, role="admin")
    Membership.objects.create(repository=theirs, user=UserFactory(username="their-reader"), role="reader")
    newcomer = UserFactory(username="newcomer")
    client.force_login(repo_admin)
    listing = client.get("/admin/access/membership/").content.decode()
    assert "mine/repo" in listing and "their-reader" not in listing
    response = client.post("/admin/access/membership/add/", {"repository": theirs.pk, "user": newcomer.pk,
                                                              "role": "admin"})
    assert response.status_code == 200 and not Membership.objects.filter(user=newcomer).exists()  # not a choice
    response = client.post("/admin/access/membership/add/", {"repository": mine.pk, "user": newcomer.pk,
                                                              "role": "reviewer"})
    assert response.status_code == 302
    membership = Membership.objects.get(user=newcomer)
    entry = AuditEntry.objects.get(action="membership.add")
    assert entry.actor == repo_admin and entry.repository == mine and entry.changes["role"] == [None, "reviewer"]
    other = Membership.objects.get(repository=theirs)
    assert client.get(f"/admin/access/membership/{other.pk}/change/").status_code in (302, 403, 404)
    assert client.post(f"/admin/access/membership/{membership.pk}/delete/", {"post": "yes"}).status_code == 302
    assert AuditEntry.objects.filter(action="membership.delete", repository=mine).count() == 1


def test_a_token_is_made_only_for_repositories_and_scopes_its_user_holds():
    private = RepositoryFactory(slug="hidden/tok", visibility=PRIVATE)
    public = RepositoryFactory(slug="open/tok")
    user = UserFactory(username="tokuser")
    Membership.objects.create(repository=public, user=user, role="reviewer")
    with pytest.raises(TokenError, match="No repository hidden/tok is recorded"):
        api_token_create(user=user, name="x", scopes=["read"], repositories=[private])
    with pytest.raises(TokenError, match="resolve"):
        api_token_create(user=fresh(user), name="x", scopes=["read", "resolve"], repositories=[public])
    token, _ = api_token_create(user=fresh(user), name="ok", scopes=["read", "verify", "import"],
                                repositories=[public])
    assert token.scopes == ["read", "verify", "import"]


def test_create_api_token_gives_by_default_the_writes_the_user_holds_on_its_repositories(capsys):
    repository = RepositoryFactory(slug="open/cmd")
    user = UserFactory(username="cmduser")
    Membership.objects.create(repository=repository, user=user, role="maintainer")
    call_command("create_api_token", "cmduser", "--repository", "open/cmd")
    token = ApiToken.objects.get(user=user)
    assert token.scopes == ["read", "verify", "import", "resolve", "reports:write"]
    assert list(token.repositories.all()) == [repository]


def test_an_import_needs_the_role_on_its_repository_and_hides_a_private_one():
    private = RepositoryFactory(slug="hidden/imp", visibility=PRIVATE)
    mine = RepositoryFactory(slug="open/imp")
    reviewer = UserFactory(username="imp")
    Membership.objects.create(repository=mine, user=reviewer, role="reviewer")
    review_import(data=bundle(repository={"slug": "open/imp", "clone_url": "https://github.com/open/imp.git"}),
                  actor=reviewer)
    refusals = []
    for slug in ("hidden/imp", "never/seen"):
        with pytest.raises(ImportRefused) as refused:
            review_import(data=bundle(repository={"slug": slug, "clone_url": f"https://github.com/{slug}.git"}),
                          actor=fresh(reviewer))
        refusals.append(str(refused.value).replace(slug, "<slug>"))
    # The same words for a private repository as for one that does not exist.
    assert refusals[0] == refusals[1] and "Reviewer role" in refusals[0]
    assert not private.pull_requests.exists() and not Repository.objects.filter(slug="never/seen").exists()
    assert AuditEntry.objects.filter(action="review.import", outcome="refused").count() == 2


def test_a_bundle_makes_a_new_repository_private_and_never_changes_an_existing_ones_visibility():
    admin = UserFactory(is_superuser=True)
    data = bundle(repository={"slug": "new/private", "clone_url": "https://github.com/new/private.git",
                              "visibility": "private"})
    review_import(data=data, actor=admin)
    repository = Repository.objects.get(slug="new/private")
    assert repository.visibility == PRIVATE
    assert bundle_export(pull_request=repository.pull_requests.get())["repository"]["visibility"] == "private"
    data["repository"]["visibility"] = "public"
    from findings.services.review_import import BundleInvalid

    with pytest.raises(BundleInvalid, match="repository.visibility"):
        review_import(data=data, actor=admin)
    repository.refresh_from_db()
    assert repository.visibility == PRIVATE


def test_an_api_write_on_a_readable_repository_without_the_role_is_a_403_naming_it_and_a_hidden_one_a_404(
    monkeypatch,
):
    from types import SimpleNamespace

    from rest_framework.test import APIClient

    from findings import tasks

    monkeypatch.setattr(tasks.run_verification, "delay", lambda run_id: SimpleNamespace(id=f"task-{run_id}"))
    mine = RepositoryFactory(slug="mine/api", visibility=PRIVATE)
    public = RepositoryFactory(slug="open/api")
    hidden = RepositoryFactory(slug="hidden/api", visibility=PRIVATE)
    for repository in (mine, public, hidden):
        PullRequestFactory(repository=repository, number=5)
    reviewer = UserFactory(username="api-reviewer")
    Membership.objects.create(repository=mine, user=reviewer, role="reviewer")
    client = APIClient()
    client.force_login(reviewer)
    assert client.post("/api/repos/mine/api/pulls/5/verify", {}, format="json").status_code == 202
    refused = client.post("/api/repos/open/api/pulls/5/verify", {}, format="json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == (
        "api-reviewer may not start verifications of open/api: that needs the Reviewer role; "
        "ask an admin of the repository or of this server to grant it."
    )
    entry = AuditEntry.objects.get(outcome="refused")
    assert (entry.action, entry.repository) == ("verification.request", public)
    missing = client.post("/api/repos/hidden/api/pulls/5/verify", {}, format="json")
    ghost = client.post("/api/repos/ghost/api/pulls/5/verify", {}, format="json")
    assert missing.status_code == ghost.status_code == 404
    assert missing.json()["detail"].replace("hidden/api", "ghost/api") == ghost.json()["detail"]
    assert AuditEntry.objects.filter(outcome="refused").count() == 1
