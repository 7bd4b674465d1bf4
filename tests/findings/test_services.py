import pytest

from findings.models import Finding, FindingEvent
from findings.services import finding_resolve
from recheck.errors import ResolutionError
from tests.factories import CommitFactory, FindingFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_marking_fixed_records_who_when_which_commit_and_why():
    finding = FindingFactory()
    commit = CommitFactory(repository=finding.pull_request.repository)
    user = UserFactory()
    event = finding_resolve(
        finding=finding, status="fixed", actor=user, source="api", commit=commit, note="Tolerance back to 100."
    )
    finding.refresh_from_db()
    assert (finding.status, finding.resolved_by, finding.resolved_commit) == ("fixed", user, commit)
    assert finding.resolution_note == "Tolerance back to 100." and finding.resolved_at
    assert (event.from_status, event.to_status, event.actor, event.commit) == ("open", "fixed", user, commit)


def test_fixing_needs_a_commit():
    with pytest.raises(ResolutionError, match="which commit"):
        finding_resolve(finding=FindingFactory(), status="fixed", actor=None, source="api")


def test_dismissing_needs_a_reason():
    with pytest.raises(ResolutionError, match="why"):
        finding_resolve(finding=FindingFactory(), status="dismissed", actor=None, source="api", note="  ")


def test_a_commit_of_another_repository_is_refused():
    with pytest.raises(ResolutionError, match="another repository"):
        finding_resolve(finding=FindingFactory(), status="fixed", actor=None, source="api", commit=CommitFactory())


def test_reopening_clears_the_resolution_and_keeps_the_history():
    finding = FindingFactory()
    commit = CommitFactory(repository=finding.pull_request.repository)
    finding_resolve(finding=finding, status="fixed", actor=None, source="admin", commit=commit)
    finding_resolve(finding=finding, status="open", actor=None, source="admin", note="Came back after rebase.")
    finding.refresh_from_db()
    assert finding.status == "open" and finding.resolved_at is None and finding.resolved_commit is None
    assert list(finding.history.values_list("from_status", "to_status")) == [("open", "fixed"), ("fixed", "open")]


def test_a_change_to_the_same_status_is_refused_and_writes_nothing():
    finding = FindingFactory()
    with pytest.raises(ResolutionError, match="already open"):
        finding_resolve(finding=finding, status="open", actor=None, source="api")
    assert not FindingEvent.objects.exists()


def test_an_unknown_status_is_refused():
    with pytest.raises(ResolutionError, match="Unknown status"):
        finding_resolve(finding=FindingFactory(), status="closed", actor=None, source="api")
    assert Finding.objects.get().status == "open"


def test_a_sha_is_recorded_inside_the_change_and_not_when_it_is_refused():
    from reviews.models import Commit

    finding = FindingFactory()
    event = finding_resolve(finding=finding, status="fixed", actor=None, source="api", commit_sha="ABCDEF1234")
    assert event.commit.sha == "abcdef1234" and event.commit.repository == finding.pull_request.repository
    with pytest.raises(ResolutionError, match="already fixed"):
        finding_resolve(finding=finding, status="fixed", actor=None, source="api", commit_sha="1234567abc")
    assert list(Commit.objects.values_list("sha", flat=True)) == ["abcdef1234"]


def test_a_sha_that_is_not_one_is_refused_naming_the_commit_field():
    with pytest.raises(ResolutionError, match="hexadecimal") as caught:
        finding_resolve(finding=FindingFactory(), status="fixed", actor=None, source="api", commit_sha="HEAD~1")
    assert caught.value.field == "commit"
