"""Writing a finding and its evidence (findings.services.authoring): the services the editor and the import share."""
import pytest

from access.models import AuditEntry
from findings.services.authoring import finding_evidence_set, finding_write
from findings.exchange.schema import finding_validate
from findings.models import Evidence, Finding, FindingEvent, Verification
from core.errors import FindingError
from reviews.models import PinnedCommit
from tests.factories import (
    CommitFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    UserFactory,
    VerificationFactory,
    make_sha,
)

pytestmark = pytest.mark.django_db

SNIPPET = {"kind": "snippet", "path": "src/loader.py", "start_line": 7, "end_line": 8, "text": "a = 1\nb = 2"}
PATTERN = {"kind": "pattern", "path": "src/**/*.py", "regex": r"tolerance\s*=\s*0", "expect": "present"}
NOTE = {"kind": "note", "text": "Asked on the review."}


@pytest.fixture
def pull_request():
    pull_request = PullRequestFactory(number=7)
    PinnedCommitFactory(pull_request=pull_request, role=PinnedCommit.Role.REVIEWED,
                        commit=CommitFactory(repository=pull_request.repository, sha=make_sha("reviewed")))
    return pull_request


@pytest.fixture
def reviewer():
    return UserFactory(username="rae", groups=["Reviewer"])


def data(**changes) -> dict:
    return {"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops", "body": "It **loops**.",
            "location": {"path": "src/loader.py", "line": 7}, "evidence": [SNIPPET], **changes}


def write(pull_request, reviewer, finding=None, **changes):
    return finding_write(pull_request=pull_request, item=finding_validate(data(**changes)), actor=reviewer, source="site",
                         finding=finding, default_commit=pull_request.pins.get().commit)


def test_it_creates_a_finding_with_its_evidence_at_the_reviewed_commit_recording_who_once(pull_request, reviewer):
    saved = write(pull_request, reviewer)
    finding = Finding.objects.get()
    assert saved.created and finding.title == "Tolerance 0 never stops" and finding.location == "src/loader.py:7"
    evidence = finding.evidence.get()
    assert (evidence.kind, evidence.start_line, evidence.text) == ("snippet", 7, "a = 1\nb = 2")
    assert evidence.commit == pull_request.pins.get().commit
    event = FindingEvent.objects.get()
    assert (event.kind, event.actor, event.source, event.to_status) == ("created", reviewer, "site", "open")
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.actor, entry.outcome) == ("finding.create", reviewer, "done")
    assert entry.changes["title"] == [None, "Tolerance 0 never stops"]


def test_an_edit_records_the_fields_it_changed_with_before_and_after(pull_request, reviewer):
    saved = write(pull_request, reviewer)
    write(pull_request, reviewer, finding=saved.finding, title="Tolerance 0 loops forever", caught_by="ci")
    event = FindingEvent.objects.get(kind="edited")
    assert event.note == "Changed caught_by, title." and event.actor == reviewer
    entry = AuditEntry.objects.get(action="finding.edit")
    assert entry.changes == {"caught_by": ["none", "ci"], "title": ["Tolerance 0 never stops", "Tolerance 0 loops forever"]}


def test_saving_what_is_already_there_records_nothing(pull_request, reviewer):
    saved = write(pull_request, reviewer)
    write(pull_request, reviewer, finding=saved.finding)
    assert FindingEvent.objects.count() == 1 and AuditEntry.objects.count() == 1


def test_evidence_is_added_changed_reordered_and_removed_as_one_list(pull_request, reviewer):
    finding = write(pull_request, reviewer).finding
    write(pull_request, reviewer, finding=finding, evidence=[SNIPPET, PATTERN, NOTE])
    assert list(finding.evidence.values_list("kind", flat=True)) == ["snippet", "pattern", "note"]
    write(pull_request, reviewer, finding=finding, evidence=[NOTE, {**SNIPPET, "end_line": 9}, PATTERN])
    assert list(finding.evidence.values_list("kind", "end_line")) == [("note", None), ("snippet", 9), ("pattern", None)]
    write(pull_request, reviewer, finding=finding, evidence=[PATTERN])
    assert list(finding.evidence.values_list("kind", flat=True)) == ["pattern"]
    events = list(FindingEvent.objects.filter(kind="edited").values_list("note", flat=True))
    assert events == ["Changed evidence."] * 3
    entry = AuditEntry.objects.filter(action="finding.edit").order_by("id").last()
    assert entry.changes["evidence"][1] == [f"Pattern: /{PATTERN['regex']}/ present in src/**/*.py"]


def test_changed_evidence_drops_the_old_verdicts_and_moves_the_version_on(pull_request, reviewer):
    finding = write(pull_request, reviewer).finding
    VerificationFactory(finding=finding, commit=pull_request.pins.get().commit)
    write(pull_request, reviewer, finding=finding, title="Only the title")
    assert Verification.objects.exists()  # the evidence did not change
    write(pull_request, reviewer, finding=finding, evidence=[{**SNIPPET, "start_line": 6}])
    finding.refresh_from_db()
    assert not Verification.objects.exists() and finding.evidence_version == 2


def test_renumbering_onto_a_taken_number_is_refused_naming_the_number_and_writes_nothing(pull_request, reviewer):
    FindingFactory(pull_request=pull_request, number=2, title="Leaks a file handle")
    finding = write(pull_request, reviewer).finding
    with pytest.raises(FindingError) as error:
        write(pull_request, reviewer, finding=finding, number=2, title="Renamed too")
    assert error.value.field == "number" and "Leaks a file handle" in str(error.value)
    finding.refresh_from_db()
    assert (finding.number, finding.title) == (1, "Tolerance 0 never stops")
    assert AuditEntry.objects.filter(action="finding.edit", outcome="refused").count() == 1
    assert not FindingEvent.objects.filter(kind="edited").exists()


def test_renumbering_to_a_free_number_moves_the_finding(pull_request, reviewer):
    finding = write(pull_request, reviewer).finding
    write(pull_request, reviewer, finding=finding, number=5)
    finding.refresh_from_db()
    assert finding.number == 5 and FindingEvent.objects.get(kind="edited").note == "Changed number."


def test_creating_onto_a_taken_number_is_refused(pull_request, reviewer):
    FindingFactory(pull_request=pull_request, number=1)
    with pytest.raises(FindingError) as error:
        write(pull_request, reviewer)
    assert error.value.field == "number"
    assert Finding.objects.count() == 1


def test_bad_evidence_is_refused_by_the_engines_rules_naming_the_item_and_writes_nothing(pull_request, reviewer):
    with pytest.raises(FindingError) as error:
        write(pull_request, reviewer, evidence=[SNIPPET, {**PATTERN, "regex": "(unclosed"}])
    assert error.value.field == "evidence[1].regex"
    assert "not a valid regular expression" in error.value.message
    assert not Finding.objects.exists() and not Evidence.objects.exists()


def test_evidence_without_a_commit_on_a_pull_request_without_a_reviewed_commit_is_refused(reviewer):
    finding = FindingFactory()
    with pytest.raises(FindingError) as error:
        finding_evidence_set(finding=finding, items=[SNIPPET])
    assert error.value.field == "evidence[0].commit"


def test_a_write_moves_the_pull_requests_generation_once(pull_request, reviewer):
    before = type(pull_request).objects.get(pk=pull_request.pk).generation
    write(pull_request, reviewer, evidence=[SNIPPET, PATTERN, NOTE])
    assert type(pull_request).objects.get(pk=pull_request.pk).generation == before + 1
