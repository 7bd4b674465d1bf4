"""The audit log on the site: instance admins read the entries of repositories they may read, see
each field an entry changed, and set a change back with the role that changes it."""
import pytest
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from findings.models import Finding
from findings.services.authoring import finding_write
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.personas import member_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def edited():
    """A title changed by the editor in acme/alpha, and an entry of the private hidden-org/quokka."""
    alpha = RepositoryFactory(slug="acme/alpha")
    pull_request = PullRequestFactory(repository=alpha, number=41)
    finding = FindingFactory(pull_request=pull_request, number=1, kind="blocker", title="Old title")
    finding_write(pull_request=pull_request, finding=finding, actor=None, source="site",
                  item={"number": 1, "kind": "blocker", "title": "New title"})
    hidden = RepositoryFactory(slug="hidden-org/quokka", visibility="private")
    AuditEntry.objects.create(action="pullrequest.edit", target="hidden-org/quokka#5", repository=hidden,
                              changes={"title": ["Quokka draft", "Quokka plan"]})
    return alpha, AuditEntry.objects.get(action="finding.edit")


def admin_of_the_log(alpha, role: str = "reviewer") -> Client:
    user = UserFactory(username="ada", permissions=["access.view_auditentry"])
    member_of(alpha, user, role)
    client = Client()
    client.force_login(user)
    return client


def test_an_instance_admin_reads_the_entries_of_repositories_they_read_and_reverts_a_field(
    edited, django_assert_max_num_queries
):
    alpha, entry = edited
    client = admin_of_the_log(alpha)
    with django_assert_max_num_queries(8):
        log = client.get(reverse("findings:audit_log"))
    assert log.status_code == 200
    html = log.content.decode()
    assert "finding.edit" in html and "quokka" not in html.lower()
    page = client.get(reverse("findings:audit_entry", args=[entry.pk]))
    assert page.status_code == 200 and "Old title" in page.content.decode()
    assert "Set <code>title</code> back" in page.content.decode()
    done = client.post(reverse("findings:audit_entry_revert", args=[entry.pk]), {"change": "title"})
    assert done.status_code == 302
    assert Finding.objects.get().title == "Old title"
    revert = AuditEntry.objects.get(action="audit.revert")
    assert (revert.actor.username, revert.source, revert.changes) == ("ada", "site", {"title": ["New title", "Old title"]})
    # B's entry is answered as one that does not exist.
    hidden = AuditEntry.objects.get(repository__slug="hidden-org/quokka")
    assert client.get(reverse("findings:audit_entry", args=[hidden.pk])).status_code == 404
    assert client.get(reverse("findings:audit_entry", args=[10**9])).status_code == 404


def test_a_reader_of_the_repository_sees_no_revert_and_cannot_revert(edited):
    alpha, entry = edited
    client = admin_of_the_log(alpha, role="reader")
    page = client.get(reverse("findings:audit_entry", args=[entry.pk])).content.decode()
    assert "Set <code>title</code> back" not in page
    assert client.post(reverse("findings:audit_entry_revert", args=[entry.pk]), {"change": "title"}).status_code == 403
    assert Finding.objects.get().title == "New title"


def test_the_log_is_for_instance_admins_only(edited):
    alpha, entry = edited
    reviewer = Client()
    reviewer.force_login(member_of(alpha, UserFactory(username="rae"), "reviewer"))
    assert reviewer.get(reverse("findings:audit_log")).status_code == 403
    assert reviewer.post(reverse("findings:audit_entry_revert", args=[entry.pk]), {"change": "title"}).status_code == 403
    assert Client().get(reverse("findings:audit_log")).status_code == 302
    assert Finding.objects.get().title == "New title"
