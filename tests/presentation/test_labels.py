"""Labels come from the vocabulary only: one template filter (`label`) names every verdict,
evidence state and status, the templates write none of them by hand, and a note reads the same on
every pull request."""
import re
from pathlib import Path

import pytest
from django.template import Context, Template
from django.urls import reverse

from core import vocabulary
from findings.models import EvidenceResult, Finding, Verdict
from tests.factories import (
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    VerificationFactory,
)

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def rendered(value, kind: str) -> str:
    return Template('{% load recheck %}{{ value|label:kind }}').render(Context({"value": value, "kind": kind}))


@pytest.mark.parametrize("verdict", [*vocabulary.VERDICTS, ""])
def test_every_verdict_renders_as_the_vocabulary_says(verdict):
    assert rendered(verdict, "verdict") == vocabulary.verdict_label(verdict)
    assert rendered(verdict, "verdict") == dict(Verdict.choices).get(verdict, vocabulary.NOT_VERIFIED_LABEL)


@pytest.mark.parametrize("state", [*vocabulary.STATES, vocabulary.MOVED, ""])
def test_every_evidence_state_renders_as_the_vocabulary_says(state):
    assert rendered(state, "state") == vocabulary.STATE_LABELS[state].capitalize()
    if state in EvidenceResult.State.values:  # the admin's choices are the same words
        assert rendered(state, "state") == EvidenceResult.State(state).label
    assert rendered("", "state") == vocabulary.NOT_VERIFIED_LABEL


@pytest.mark.parametrize("status", vocabulary.STATUSES)
def test_every_status_renders_as_the_vocabulary_says(status):
    assert rendered(status, "status") == vocabulary.STATUS_LABELS[status] == Finding.Status(status).label


def test_an_unknown_kind_is_an_error_that_names_the_kinds():
    with pytest.raises(ValueError, match="verdict, state, status"):
        vocabulary.label("colour", "red")


# --- No template writes a label by hand ---------------------------------------------------------


def _label_strings() -> set[str]:
    """Every label of the vocabulary as a badge says it, and the words templates used to write
    instead ("Still there", "Check failed" for a state)."""
    labels = {*vocabulary.VERDICT_LABELS.values(), vocabulary.NOT_VERIFIED_LABEL, "Still there"}
    labels |= {vocabulary.state_label(state) for state in vocabulary.STATE_LABELS}
    return labels


def _template_text(path: Path) -> str:
    """What a template writes itself: its text without comments and template tags."""
    text = re.sub(r"{% comment %}.*?{% endcomment %}|{#.*?#}", "", path.read_text(), flags=re.S)
    return re.sub(r"{%.*?%}|{{.*?}}", " ", text, flags=re.S)


def _writes(label: str, text: str, source: str) -> bool:
    """Whether a template writes `label` itself. A one-word label ("Holds", "Gone") counts only
    standing alone between tags, as a badge's text: the editor's "Holds while it …" is a question."""
    if " " in label:
        return bool(re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", text))
    return bool(re.search(rf"(?:>|%}}|}}}})\s*{re.escape(label)}\s*(?:<|{{%|{{{{)", source))


def test_no_template_writes_a_verdict_state_or_status_label_by_hand():
    written = {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = _template_text(path)
        source = path.read_text()
        found = [label for label in _label_strings() if _writes(label, text, source)]
        # A status or a verdict is named through the filter, not a model's display method or another filter.
        found += [name for name in ("finding.get_status_display", "|verdict_label") if name in source]
        if found:
            written[str(path.relative_to(TEMPLATES))] = sorted(found)
    assert written == {}


def test_the_scan_finds_a_label_written_by_hand(tmp_path):
    planted = tmp_path / "planted.html"
    planted.write_text('{% load recheck %}<span class="badge">Still present</span>{# Check failed #}')
    text = _template_text(planted)
    assert _writes("Still present", text, planted.read_text())
    assert not _writes("Check failed", text, planted.read_text())  # comments are not what a page says
    assert _writes("Gone", "", '{% elif item.state == "gone" %}Gone{% elif %}')
    assert not _writes("Holds", "", "<label>Holds while it</label>")


# --- Pages and the admin --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_note_reads_not_checkable_on_every_pull_request_with_or_without_a_stored_result(client):
    rows = []
    for number, store_result in ((1, True), (2, False)):
        pull_request = PullRequestFactory(number=number)
        pin = PinnedCommitFactory(pull_request=pull_request)
        finding = FindingFactory(pull_request=pull_request, number=1)
        note = EvidenceFactory(finding=finding, kind="note", commit=pin.commit, path="", start_line=None,
                               end_line=None, text="Only a person can judge this.")
        verification = VerificationFactory(finding=finding, commit=pin.commit, verdict="unverifiable")
        if store_result:
            EvidenceResultFactory(verification=verification, evidence=note, state="unchecked", path="",
                                  start_line=None, end_line=None, detail="not checkable by machine")
        html = client.get(finding.get_absolute_url()).content.decode()
        matrix = html.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
        body = matrix.split("<tbody>", 1)[1].split("</tr>", 1)[0]
        rows.append(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))
    assert all("not checkable" in row and "not verified" not in row for row in rows), rows


@pytest.mark.django_db
def test_the_admin_names_a_moved_snippet_as_the_finding_page_does(admin_client, client):
    finding = FindingFactory()
    evidence = EvidenceFactory(finding=finding)
    verification = VerificationFactory(finding=finding)
    PinnedCommitFactory(pull_request=finding.pull_request, commit=verification.commit)
    EvidenceResultFactory(verification=verification, evidence=evidence, start_line=90, end_line=92)
    moved = vocabulary.state_label(vocabulary.MOVED)

    finding_page = client.get(finding.get_absolute_url()).content.decode()
    assert re.search(rf'class="badge state-moved">.*?</span>{moved}</span>', finding_page)
    verification_page = admin_client.get(reverse("admin:findings_verification_change", args=[verification.pk]))
    assert re.search(rf">\s*{moved}\s*<", verification_page.content.decode())
    finding_admin = admin_client.get(reverse("admin:findings_finding_change", args=[finding.pk])).content.decode()
    assert f"<strong>{moved}</strong>" in finding_admin
    assert "<strong>Holds</strong>" not in finding_admin
