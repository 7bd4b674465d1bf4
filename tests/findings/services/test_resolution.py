import pytest

from access.models import AuditEntry
from findings.models import Finding, FindingEvent
from findings.services.resolution import finding_resolve
from core.errors import EvidenceStillHolds, ResolutionCommitError, ResolutionError
from reviews.mirrors import repository_fetch
from reviews.models import Commit
from tests.factories import CommitFactory, FindingFactory, UserFactory
from tests.findings.decision_data import fetched_review

pytestmark = pytest.mark.django_db


def test_marking_fixed_records_who_when_which_commit_and_why():
    finding = FindingFactory()
    commit = CommitFactory(repository=finding.pull_request.repository)
    user = UserFactory(groups=["Maintainer"])
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


def test_the_import_records_a_bundles_sha_as_given_and_not_when_it_is_refused():
    """A bundle records a decision made elsewhere and may come before its repository is fetched:
    only the import passes sha_in_mirror=False."""
    from reviews.models import Commit

    finding = FindingFactory()
    event = finding_resolve(finding=finding, status="fixed", actor=None, source="import", commit_sha="ABCDEF1234",
                            sha_in_mirror=False)
    assert event.commit.sha == "abcdef1234" and event.commit.repository == finding.pull_request.repository
    with pytest.raises(ResolutionError, match="already fixed"):
        finding_resolve(finding=finding, status="fixed", actor=None, source="import", commit_sha="1234567abc",
                        sha_in_mirror=False)
    assert list(Commit.objects.values_list("sha", flat=True)) == ["abcdef1234"]


def test_a_sha_that_is_not_one_is_refused_naming_the_commit_field():
    with pytest.raises(ResolutionError, match="hexadecimal") as caught:
        finding_resolve(finding=FindingFactory(), status="fixed", actor=None, source="api", commit_sha="HEAD~1")
    assert caught.value.field == "commit"


# --- A typed SHA must name one commit of the repository's mirror -----------------------------


def test_a_sha_is_resolved_in_the_mirror_and_recorded_in_full(tmp_path):
    review = fetched_review(tmp_path)
    event = finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="api",
                            commit_sha=review.fix[:9].upper())
    assert event.commit.sha == review.fix and event.commit.resolved
    assert review.fixed_one.resolved_commit == event.commit


def test_an_unknown_sha_is_refused_saying_so_and_writes_nothing(tmp_path):
    review = fetched_review(tmp_path)
    commits = Commit.objects.count()
    with pytest.raises(ResolutionCommitError, match="No commit deadbeef in acme/loader") as caught:
        finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="api", commit_sha="deadbeef")
    assert caught.value.field == "commit" and caught.value.candidates == ()
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(to_status="fixed").exists()
    assert Commit.objects.count() == commits
    refusal = AuditEntry.objects.get(action="finding.resolve")
    assert refusal.outcome == "refused" and "No commit deadbeef" in refusal.message


def test_an_ambiguous_sha_is_refused_naming_the_candidates(tmp_path):
    review = fetched_review(tmp_path)
    repo = review.repo
    first, second = repo.colliding_commits()
    repo.update_ref("refs/heads/one", first).update_ref("refs/heads/two", second)
    repository_fetch(repository=review.pull_request.repository)
    with pytest.raises(ResolutionCommitError, match="ambiguous") as caught:
        finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="api", commit_sha=first[:7])
    assert caught.value.candidates == tuple(sorted([first, second]))
    assert first in str(caught.value) and second in str(caught.value)
    assert review.fixed_one.status == "open"


def test_a_repository_not_fetched_yet_is_refused_saying_to_fetch_it_first():
    finding = FindingFactory()
    commit = CommitFactory(repository=finding.pull_request.repository)
    with pytest.raises(ResolutionCommitError, match="has not been fetched yet.*fetch the repository first"):
        finding_resolve(finding=finding, status="fixed", actor=None, source="api", commit_sha=commit.sha)
    assert Finding.objects.get().status == "open" and not FindingEvent.objects.exists()


def test_a_mirror_removed_since_the_last_fetch_is_refused_not_taken_for_fixed(tmp_path):
    import shutil

    from reviews.mirrors import repository_mirror_dir

    review = fetched_review(tmp_path)
    shutil.rmtree(repository_mirror_dir(review.pull_request.repository))
    with pytest.raises(ResolutionCommitError, match="fetch the repository first"):
        finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="site", commit_sha=review.fix)
    assert review.fixed_one.status == "open"


# --- Where the evidence still holds ----------------------------------------------------------


def test_marking_fixed_where_the_evidence_still_holds_is_refused_with_the_verdict(tmp_path):
    review = fetched_review(tmp_path)
    with pytest.raises(EvidenceStillHolds) as caught:
        finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="site",
                        commit_sha=review.reviewed[:8])
    error = caught.value
    assert (error.sha, error.verdict, error.verdict_phrase) == (review.reviewed, "present", "still present")
    assert f"The evidence still holds at {review.reviewed[:12]}" in str(error)
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(to_status="fixed").exists()


def test_confirming_anyway_needs_a_note(tmp_path):
    review = fetched_review(tmp_path)
    with pytest.raises(ResolutionError, match="needs a note") as caught:
        finding_resolve(finding=review.still_there, status="fixed", actor=None, source="site",
                        commit_sha=review.fix, still_holds_confirmed=True, note="  ")
    assert caught.value.field == "note" and not isinstance(caught.value, EvidenceStillHolds)
    assert review.still_there.status == "open"


def test_confirmed_with_a_note_it_is_marked_fixed_anyway(tmp_path):
    review = fetched_review(tmp_path)
    event = finding_resolve(finding=review.still_there, status="fixed", actor=None, source="site",
                            commit_sha=review.fix, still_holds_confirmed=True, note="The flag is read nowhere now.")
    assert event.commit.sha == review.fix and event.note == "The flag is read nowhere now."
    assert review.still_there.status == "fixed"


def test_a_recorded_commit_where_the_evidence_holds_needs_the_confirmation_too(tmp_path):
    review = fetched_review(tmp_path)
    reviewed = Commit.objects.get(sha=review.reviewed)
    with pytest.raises(EvidenceStillHolds):
        finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="command", commit=reviewed)


def test_at_a_commit_where_it_is_likely_fixed_no_confirmation_is_asked(tmp_path):
    review = fetched_review(tmp_path)
    event = finding_resolve(finding=review.fixed_one, status="fixed", actor=None, source="site", commit_sha=review.fix)
    assert event.to_status == "fixed" and event.source == "site"


def test_a_partly_fixed_verdict_counts_as_still_holding():
    from tests.factories import VerificationFactory

    finding = FindingFactory()
    commit = CommitFactory(repository=finding.pull_request.repository)
    VerificationFactory(finding=finding, commit=commit, verdict="partly_fixed")
    with pytest.raises(EvidenceStillHolds, match="partly fixed"):
        finding_resolve(finding=finding, status="fixed", actor=None, source="command", commit=commit)
