import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from findings.models import Evidence, Finding, Verification
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db


def test_it_refuses_a_second_finding_with_the_same_number_on_a_pull_request():
    finding = FindingFactory(number=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        FindingFactory(pull_request=finding.pull_request, number=3)


def test_a_closed_finding_must_say_when_it_was_closed():
    finding = FindingFactory()
    finding.status = Finding.Status.FIXED
    with pytest.raises(IntegrityError), transaction.atomic():
        finding.save()


def test_an_open_finding_carries_no_resolution():
    with pytest.raises(IntegrityError), transaction.atomic():
        FindingFactory(resolved_at=timezone.now())


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "snippet", "start_line": None},
        {"kind": "snippet", "end_line": None},
        {"kind": "snippet", "path": ""},
        {"kind": "snippet", "start_line": 10, "end_line": 9},
        {"kind": "snippet", "commit": None},
        {"kind": "pattern", "regex": "", "expect": "present"},
        {"kind": "pattern", "regex": "x", "expect": "exists"},
        {"kind": "path", "expect": "present"},
        {"kind": "path", "expect": ""},
        {"kind": "gitlink", "sha": ""},
        {"kind": "gitlink", "sha": "not-hex"},
        {"kind": "note", "text": ""},
    ],
)
def test_evidence_missing_a_field_its_kind_needs_is_rejected(fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        EvidenceFactory(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "snippet"},
        {"kind": "pattern", "regex": "tolerance.*0", "expect": "absent", "path": "**/*.py"},
        {"kind": "path", "expect": "missing"},
        {"kind": "gitlink", "sha": "3961f399", "path": "3rdparty/Megatron-Bridge"},
        {"kind": "note", "text": "Three of us ran the suite.", "commit": None, "path": ""},
    ],
)
def test_evidence_with_its_kinds_fields_is_accepted(fields):
    assert EvidenceFactory(**fields).pk


def test_one_verification_per_finding_and_commit():
    verification = VerificationFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Verification.objects.create(
            finding=verification.finding, commit=verification.commit, verdict="present", checked_at=timezone.now()
        )


def test_a_verdict_outside_the_choices_is_rejected():
    with pytest.raises(IntegrityError), transaction.atomic():
        VerificationFactory(verdict="fixed")


def test_a_result_knows_when_its_evidence_moved():
    result = EvidenceResultFactory()
    assert not result.moved
    result.start_line = result.evidence.start_line + 3
    assert result.moved


def test_queryset_methods_read_as_the_question():
    finding = FindingFactory(kind="blocker")
    FindingFactory(pull_request=finding.pull_request, kind="cleanup")
    FindingFactory(
        pull_request=finding.pull_request, kind="blocker", status="dismissed", resolved_at=timezone.now()
    )
    assert list(Finding.objects.open().blockers().for_pull_request(finding.pull_request)) == [finding]


def test_evidence_permalinks_use_the_commit_it_was_recorded_at():
    sha = "d044f40" + "0" * 33
    evidence = EvidenceFactory(commit=CommitFactory(sha=sha), path="a/b.py", start_line=3, end_line=5)
    repository = evidence.finding.pull_request.repository
    assert evidence.permalink() == f"{repository.web_url}/blob/{sha}/a/b.py#L3-L5"
    assert Evidence.objects.get(pk=evidence.pk).describe() == "a/b.py:3-5"


def test_evidence_at_a_commit_no_fetch_has_resolved_links_nowhere():
    # Its path is as the review wrote it, often shortened, and was never checked in the repository.
    evidence = EvidenceFactory(commit=CommitFactory(sha="d044f40"), path="b.py", start_line=3, end_line=5)
    assert evidence.permalink() == ""
