"""The writes that once left no trace: setting a finding's tags, linking two findings, removing a
link and describing a tag. Each is recorded with who, from where and what changed (before and
after), and each checks its actor in the service, whatever interface calls it."""
import pytest

from access.models import AuditEntry
from access.permissions import ActionRefused
from findings.models import FindingLink
from findings.services.tags_and_links import finding_link_create, finding_link_delete, finding_tags_set, tag_describe
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.personas import api_client, member_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    alpha = RepositoryFactory(slug="acme/alpha")
    beta = RepositoryFactory(slug="acme/beta")
    writer = member_of(alpha, UserFactory(username="wren"), "reviewer")
    source = FindingFactory(pull_request=PullRequestFactory(repository=alpha, number=1), number=1)
    target = FindingFactory(pull_request=PullRequestFactory(repository=beta, number=2), number=3)
    return alpha, beta, writer, source, target


def _entry(action: str) -> AuditEntry:
    return AuditEntry.objects.get(action=action, outcome="done")


def test_setting_a_findings_tags_is_audited_with_the_tags_before_and_after(world):
    alpha, _beta, writer, source, _target = world
    client = api_client(writer, scopes=["read", "import"])
    client.put(f"/api/findings/{source.pk}/tags", {"tags": ["loops"]}, format="json")
    assert client.put(f"/api/findings/{source.pk}/tags", {"tags": ["cache", "loops"]}, format="json").status_code == 200
    entries = AuditEntry.objects.filter(action="finding.tags").order_by("id")
    assert [entry.changes["tags"] for entry in entries] == [[[], ["loops"]], [["loops"], ["cache", "loops"]]]
    assert {(entry.actor, entry.source, entry.repository, entry.target) for entry in entries} == {
        (writer, "api", alpha, "acme/alpha#1 finding 1")
    }
    # The same tags again change nothing and record nothing.
    client.put(f"/api/findings/{source.pk}/tags", {"tags": ["cache", "loops"]}, format="json")
    assert AuditEntry.objects.filter(action="finding.tags").count() == 2


def test_linking_and_unlinking_are_audited(world):
    alpha, _beta, writer, source, target = world
    client = api_client(writer, scopes=["read", "import"])
    made = client.post(f"/api/findings/{source.pk}/links", {"kind": "duplicate_of", "finding": target.reference},
                       format="json")
    assert made.status_code == 201, made.content
    link = _entry("finding.link")
    assert (link.actor, link.repository, link.changes) == (writer, alpha, {"link": [None, "duplicate_of acme/beta#2/3"]})
    assert client.delete(f"/api/findings/{source.pk}/links/{made.json()['id']}").status_code == 204
    unlink = _entry("finding.unlink")
    assert (unlink.actor, unlink.repository, unlink.changes) == (
        writer, alpha, {"link": ["duplicate_of acme/beta#2/3", None]}
    )


def test_describing_a_tag_is_audited_in_its_repository(world):
    alpha, _beta, writer, _source, _target = world
    client = api_client(writer, scopes=["read", "import"])
    url = "/api/tags/loops/description"
    client.put(url, {"repository": "acme/alpha", "description": "Loops forever."}, format="json")
    client.put(url, {"repository": "acme/alpha", "description": "Never stops."}, format="json")
    entries = AuditEntry.objects.filter(action="tag.describe").order_by("id")
    assert [entry.changes["description"] for entry in entries] == [["", "Loops forever."],
                                                                   ["Loops forever.", "Never stops."]]
    assert {(entry.actor, entry.repository, entry.target) for entry in entries} == {
        (writer, alpha, "tag loops in acme/alpha")
    }


def test_each_service_refuses_an_actor_without_the_role_and_records_the_refusal(world):
    _alpha, beta, writer, source, target = world
    stranger = UserFactory(username="sam")
    with pytest.raises(ActionRefused):
        finding_tags_set(finding=target, slugs=["loops"], actor=writer)
    with pytest.raises(ActionRefused):
        tag_describe(slug="loops", repository=beta, description="x", actor=writer)
    with pytest.raises(ActionRefused):
        finding_link_create(source=target, target=source, kind="same_cause", actor=writer)
    link = finding_link_create(source=source, target=target, kind="same_cause", actor=writer)
    with pytest.raises(ActionRefused):
        finding_link_delete(link=link, actor=stranger)
    assert FindingLink.objects.filter(pk=link.pk).exists() and not target.tags.exists()
    refused = AuditEntry.objects.filter(outcome="refused").values_list("action", flat=True)
    assert sorted(refused) == ["finding.link", "finding.tags", "finding.unlink", "tag.describe"]
    # Either end's Reviewer may remove a link.
    member_of(beta, stranger, "reviewer")
    finding_link_delete(link=link, actor=stranger)
    assert not FindingLink.objects.exists()
