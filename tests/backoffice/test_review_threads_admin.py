"""The review threads in the admin: read-only, and a staff user lists only the threads of the
repositories they may read."""
import pytest
from django.contrib.auth.models import Permission

from forge.threads.models import ReviewThread
from tests.factories import PullRequestFactory, RepositoryFactory, UserFactory
from tests.personas import member_of, site_client

pytestmark = pytest.mark.django_db

URL = "/admin/reporting/reviewthread/"


def test_staff_see_the_threads_of_their_repositories_only_and_change_none():
    mine = PullRequestFactory(repository=RepositoryFactory(slug="acme/mine", visibility="private"), number=1)
    other = PullRequestFactory(repository=RepositoryFactory(slug="acme/other", visibility="private"), number=2)
    ReviewThread.objects.create(pull_request=mine, root_comment_id=111, path="src/mine.py")
    theirs = ReviewThread.objects.create(pull_request=other, root_comment_id=222, path="src/theirs.py")
    staff = UserFactory(username="stella", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_reviewthread"))
    member_of(mine.repository, staff, "reviewer")
    client = site_client(staff)

    page = client.get(URL).content.decode()

    assert "src/mine.py" in page and "src/theirs.py" not in page
    assert client.get(f"{URL}{theirs.pk}/change/").status_code in (302, 404)
    assert client.get(f"{URL}add/").status_code == 403
