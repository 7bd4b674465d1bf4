"""What a tag means in each repository, in the admin: a staff user lists and changes only the
descriptions of repositories they may read and write, each change audited."""
import pytest
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from findings.models import Tag, TagDescription
from tests.factories import RepositoryFactory, UserFactory
from tests.personas import member_of

pytestmark = pytest.mark.django_db


def test_a_staff_reviewer_sees_and_changes_only_their_repositorys_descriptions():
    mine = RepositoryFactory(slug="acme/mine", visibility="private")
    hidden = RepositoryFactory(slug="hidden-org/quokka", visibility="private")
    tag = Tag.objects.create(slug="loops")
    own = TagDescription.objects.create(tag=tag, repository=mine, description="Ours")
    secret = TagDescription.objects.create(tag=tag, repository=hidden, description="Quokka things")
    staff = UserFactory(username="sal", is_staff=True, permissions=[
        "findings.view_tagdescription", "findings.change_tagdescription", "findings.add_tagdescription",
    ])
    member_of(mine, staff, "reviewer")
    client = Client()
    client.force_login(staff)
    listing = client.get(reverse("admin:findings_tagdescription_changelist")).content.decode()
    assert "Ours" in listing and "Quokka things" not in listing
    assert client.get(reverse("admin:findings_tagdescription_change", args=[secret.pk])).status_code in (302, 404)
    added = client.get(reverse("admin:findings_tagdescription_add")).content.decode()
    assert "acme/mine" in added and "hidden-org/quokka" not in added
    done = client.post(reverse("admin:findings_tagdescription_change", args=[own.pk]),
                       {"tag": tag.pk, "repository": mine.pk, "description": "Loops forever."})
    assert done.status_code == 302
    own.refresh_from_db()
    assert own.description == "Loops forever."
    entry = AuditEntry.objects.get(action="tagdescription.edit")
    assert (entry.repository, entry.changes) == (mine, {"description": ["Ours", "Loops forever."]})
    secret.refresh_from_db()
    assert secret.description == "Quokka things"
