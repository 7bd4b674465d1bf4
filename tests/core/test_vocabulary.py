"""One vocabulary: the engine's constants, the model choices and every reader's wording agree."""
import pytest
from django.urls import reverse

from core import vocabulary
from findings.exchange.markdown import pull_request_markdown
from findings.models import EvidenceResult, Finding, Verdict
from presentation import wording
from engine.verification import results as engine_results
from engine.verification import verdicts as engine_verdicts
from tests.factories import (
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PinnedCommitFactory,
    VerificationFactory,
)


def test_the_engine_s_verdicts_are_the_model_s_choices():
    assert set(engine_verdicts.VERDICTS) == set(Verdict.values) == set(vocabulary.VERDICTS)
    for name in ("PRESENT", "LIKELY_FIXED", "PARTLY_FIXED", "UNVERIFIABLE"):
        assert getattr(engine_verdicts, name) == getattr(Verdict, name).value == getattr(vocabulary, name)
    assert engine_verdicts.ERRORED == Verdict.ERROR == vocabulary.ERROR


def test_the_engine_s_result_states_are_the_model_s_choices():
    assert set(engine_results.STATES) == set(EvidenceResult.State.values) == set(vocabulary.STATES)
    assert (engine_results.HOLDS, engine_results.GONE, engine_results.ERROR, engine_results.UNCHECKED) == (
        vocabulary.HOLDS, vocabulary.GONE, vocabulary.STATE_ERROR, vocabulary.UNCHECKED
    )


def test_every_verdict_and_state_has_a_label_and_a_phrase():
    assert set(vocabulary.VERDICT_LABELS) == set(vocabulary.VERDICT_PHRASES) == set(vocabulary.VERDICTS)
    assert set(vocabulary.STATE_LABELS) == {*vocabulary.STATES, vocabulary.MOVED, ""}
    assert dict(Verdict.choices) == vocabulary.VERDICT_LABELS
    # Two verdicts never read alike: "could not be checked" is an error and nothing else.
    assert len(set(vocabulary.VERDICT_PHRASES.values())) == len(vocabulary.VERDICTS)
    assert len(set(vocabulary.VERDICT_LABELS.values())) == len(vocabulary.VERDICTS)


def test_every_check_outcome_has_a_label_and_a_phrase_and_a_reason_reads_the_same_in_both():
    assert set(vocabulary.CHECK_OUTCOME_LABELS) == set(vocabulary.CHECK_OUTCOME_PHRASES) == set(vocabulary.CHECK_OUTCOMES)
    assert len(set(vocabulary.CHECK_OUTCOME_PHRASES.values())) == len(vocabulary.CHECK_OUTCOMES)
    # A finding's reason and its check item's outcome say the same words (a matrix shows both).
    assert {reason: vocabulary.check_outcome_phrase(reason) for reason in vocabulary.VERDICT_REASONS} == (
        vocabulary.VERDICT_REASON_PHRASES)


@pytest.mark.django_db
@pytest.mark.parametrize("verdict", vocabulary.VERDICTS)
def test_one_phrase_per_verdict_on_the_site_in_the_export_and_in_the_admin(verdict, client, staff_maintainer):
    finding = FindingFactory(kind=Finding.Kind.BLOCKER, title="The tolerance is zero")
    pin = PinnedCommitFactory(pull_request=finding.pull_request, role="head")
    VerificationFactory(finding=finding, commit=pin.commit, verdict=verdict)
    phrase, label = vocabulary.VERDICT_PHRASES[verdict], vocabulary.VERDICT_LABELS[verdict]

    assert wording.verdict_summary([verdict]) == [f"one {phrase}"]
    markdown = pull_request_markdown(pull_request=finding.pull_request)
    assert f"The tolerance is zero** — {phrase} at" in markdown
    assert f": 1 {phrase}" in markdown
    pull_request = finding.pull_request
    page = client.get(
        reverse("findings:blockers", kwargs={"owner": pull_request.repository.owner,
                                             "name": pull_request.repository.name, "number": pull_request.number})
    ).content.decode()
    assert f"{label}" in page
    client.force_login(staff_maintainer)
    admin_list = client.get(reverse("admin:findings_finding_changelist")).content.decode()
    assert f"{label} at {pin.commit.sha[:8]}" in admin_list


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "recorded", "now", "moved"),
    [
        ("pattern", ("src/**/*.py", None), ("src/loader.py", 12), False),
        ("snippet", ("src/loader.py", 40), ("src/loader.py", 52), True),
        ("snippet", ("src/loader.py", 40), ("src/stream.py", 40), True),
        ("snippet", ("src/loader.py", 40), ("src/loader.py", 40), False),
        ("path", ("src/loader.py", None), ("src/loader.py", None), False),
    ],
)
def test_the_api_and_the_site_agree_on_what_moved(kind, recorded, now, moved, client):
    finding = FindingFactory()
    pin = PinnedCommitFactory(pull_request=finding.pull_request, role="head")
    fields = {
        "pattern": {"regex": "x", "expect": "present", "text": ""},
        "path": {"expect": "exists", "text": ""},
        "snippet": {"end_line": recorded[1]},
    }[kind]
    evidence = EvidenceFactory(finding=finding, kind=kind, path=recorded[0], start_line=recorded[1], **fields)
    verification = VerificationFactory(finding=finding, commit=pin.commit)
    EvidenceResultFactory(verification=verification, evidence=evidence, state="holds", path=now[0],
                          start_line=now[1], end_line=now[1])

    api = client.get(reverse("api:verification-detail", kwargs={"pk": verification.pk})).json()
    assert api["results"][0]["moved"] is moved
    pull_request = finding.pull_request
    page = client.get(
        reverse("findings:finding", kwargs={"owner": pull_request.repository.owner,
                                            "name": pull_request.repository.name, "number": pull_request.number,
                                            "finding_number": finding.number})
    ).content.decode()
    assert ('class="cell state-moved"' in page) is moved


def test_a_location_is_written_one_way():
    assert vocabulary.location("a.py", 4, 9) == "a.py:4–9"
    assert vocabulary.location("a.py", 4, 4) == "a.py:4"
    assert vocabulary.location("a.py") == "a.py"
    assert vocabulary.location("") == ""


def test_the_engine_s_successor_kinds_are_the_vocabulary_s_and_each_has_a_label():
    from engine.verification import successors as engine_successors

    assert engine_successors.SUCCESSOR_KINDS == vocabulary.SUCCESSOR_KINDS
    assert set(vocabulary.SUCCESSOR_LABELS) == set(vocabulary.SUCCESSOR_KINDS)


@pytest.mark.parametrize(
    ("kind", "where", "options", "sentence"),
    [
        ("rewritten", "src/x.py:40–44", {}, "Rewritten at abc12345: now src/x.py:40–44"),
        ("rewritten", "src/x.py:40–90", {"larger": True},
         "Rewritten at abc12345: now src/x.py:40–90, more than a rewrite of those lines"),
        ("removed", "src/x.py:40", {}, "Removed at abc12345, at src/x.py:40"),
        ("moved_and_changed", "src/y.py:3–7", {"similarity": 0.83},
         "Moved and changed at abc12345: now src/y.py:3–7 (83% alike)"),
        ("file_deleted", "src/x.py", {}, "File deleted at abc12345: src/x.py"),
    ],
)
def test_each_successor_kind_reads_as_one_sentence(kind, where, options, sentence):
    assert vocabulary.successor_sentence(kind=kind, short_sha="abc12345", where=where, **options) == sentence


def test_the_engine_s_change_origins_are_the_vocabulary_s():
    from engine.verification import history

    assert (history.FROM_REBASE, history.BY_AUTHOR) == vocabulary.CHANGE_ORIGINS
    assert vocabulary.label("change", "rebase") == "From the rebase"
    assert vocabulary.label("change", "author") == "By the author"
    assert vocabulary.label("successor", "moved_and_changed") == "Moved and changed"
