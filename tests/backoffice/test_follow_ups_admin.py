"""Follow-ups in the admin: read-only, with their history, and only those of repositories the
staff user may read."""
import pytest

from reviews.models import Repository
from tests.findings.follow_up_world import check, merged_world, push_the_move_and_the_fix
from tests.personas import site_client, staff_reader, superuser

pytestmark = pytest.mark.django_db
LIST = "/admin/findings/followup/"


def test_the_admin_lists_follow_ups_with_their_history_and_changes_nothing(tmp_path):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world)
    client = site_client(superuser())
    listing = client.get(LIST).content.decode()
    assert "Follow-up of acme/loader#7/3" in listing and "Verified fixed, to be marked" in listing
    page = client.get(f"{LIST}{world.follow_up(3).pk}/change/").content.decode()
    assert "Checked on the default branch" in page and 'name="_save"' not in page
    assert client.post(f"{LIST}{world.follow_up(3).pk}/delete/", {"post": "yes"}).status_code == 403


def test_a_staff_user_sees_no_follow_up_of_a_repository_they_may_not_read(tmp_path):
    world = merged_world(tmp_path)
    Repository.objects.filter(pk=world.pull_request.repository_id).update(visibility="private")
    reader = staff_reader()
    reader.user_permissions.clear()
    from django.contrib.auth.models import Permission

    reader.user_permissions.add(Permission.objects.get(codename="view_followup"))
    client = site_client(reader)
    assert "acme/loader#7" not in client.get(LIST).content.decode()
    assert client.get(f"{LIST}{world.follow_up(2).pk}/change/").status_code in (302, 404)
