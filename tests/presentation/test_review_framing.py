"""The review's own framing: its opening and closing words, the counts it gives of what Recheck
does not hold (comments left, cleanups not recorded), a reviewer's own check shown as theirs, and
a snippet whose code could not be read saying why."""
import html
import io
import re

import pytest
from django.core.management import call_command

from findings.exchange.bundle import bundle_export
from findings.services.review_import import review_import
from presentation import wording
from findings.services.verification.run import pull_request_verify
from reviews.models import PullRequest

pytestmark = pytest.mark.django_db


def text_of(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


@pytest.fixture
def demo(settings, tmp_path):
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    call_command("load_demo", "--no-verify", stdout=io.StringIO())
    return PullRequest.objects.get(repository__slug="NVIDIA-NeMo/RL", number=4108)


def test_the_4108_cleanups_page_counts_the_cleanups_the_review_does_not_describe(client, demo):
    page = text_of(client.get(demo.get_absolute_url() + "cleanups/").content.decode())

    assert "The review counts 5 cleanups that are not recorded here." in page
    assert "No cleanups" not in page


def test_the_4108_status_line_and_the_reviewers_own_check_are_apart_and_agree(client, demo):
    page = client.get(demo.get_absolute_url()).content.decode()

    [status_line] = re.findall(r'<p class="status-line">(.*?)</p>', page, flags=re.S)
    assert text_of(status_line) == (
        "Open — none of the nine blockers are fixed. Not verified by Recheck against any pinned commit yet; "
        "the reviewer's own check is below. The review counts 5 cleanups that are not recorded here."
    )
    [attestation] = re.findall(r'<aside class="attestation".*?</aside>', page, flags=re.S)
    words = text_of(attestation)
    assert words.startswith("The reviewer's own check at d044f40")
    assert "All nine re-checked against d044f40 after the rebase; all still present." in words
    assert "— the reviewers of #4108 (as their companion page states it)." in words
    assert "still present" not in text_of(status_line)


def test_the_4108_blockers_page_opens_and_closes_with_the_reviews_words(client, demo):
    page = text_of(client.get(demo.get_absolute_url() + "blockers/").content.decode())

    # One introduction: the review's own, and not Recheck's sentence saying the same beside it.
    assert "The review left 14 comments" not in page
    assert page.count("Fourteen review comments in all.") == 1
    assert page.index("Fourteen review comments in all.") < page.index("The Megatron-Bridge submodule")
    assert page.index("What to do with this.") > page.index("Audio")


def test_the_blockers_intro_uses_the_reviews_counts():
    assert wording.blockers_intro(findings=9, cleanups=0, caught_by_ci=3, unchecked=6, comments_left=9,
                                  cleanups_not_recorded=5) == (
        "The review left nine comments. Five are cleanups that can land afterwards (they are not recorded "
        "here). The nine below stop this from merging: three that a CI job catches, and six that no job "
        "checks at all."
    )
    assert wording.blockers_intro(findings=4, cleanups=2, caught_by_ci=2, unchecked=0,
                                  cleanups_not_recorded=3).startswith(
        "The review recorded four findings. Five are cleanups that can land afterwards (two recorded here)."
    )
    assert wording.not_recorded_sentence(1) == "The review counts 1 cleanup that is not recorded here."
    assert wording.not_recorded_sentence(0) == wording.not_recorded_sentence(None) == ""


BUNDLE = {
    "repository": {"slug": "acme/rl", "clone_url": "https://github.com/acme/rl.git"},
    "pull_request": {
        "number": 7, "title": "Loader", "opening": "Fourteen comments.", "closing": "**What to do.**",
        "comments_left": 14, "cleanups_not_recorded": 5,
        "attestation": {"text": "Re-checked by hand: all present.", "by": "Ada", "at": "2026-11-30T10:00:00Z",
                        "commit": "d044f40"},
    },
    "commits": [{"sha": "d044f40", "role": "reviewed"}],
}


def test_the_framing_round_trips_through_export_and_import():
    review_import(data=BUNDLE)
    pull_request = PullRequest.objects.get(number=7)
    assert (pull_request.attested_by, pull_request.attested_commit.sha, pull_request.cleanups_not_recorded) == (
        "Ada", "d044f40", 5)

    exported = bundle_export(pull_request=pull_request)["pull_request"]

    assert exported["attestation"] == {"text": "Re-checked by hand: all present.", "by": "Ada",
                                       "at": "2026-11-30T10:00:00+00:00", "commit": "d044f40"}
    assert {key: exported[key] for key in ("opening", "closing", "comments_left", "cleanups_not_recorded")} == {
        "opening": "Fourteen comments.", "closing": "**What to do.**", "comments_left": 14, "cleanups_not_recorded": 5}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"attestation": {"text": "All present."}}, "pull_request.attestation.by"),
        ({"attestation": {"by": "Ada"}}, "pull_request.attestation.text"),
        ({"cleanups_not_recorded": -1}, "pull_request.cleanups_not_recorded"),
        ({"attestation": {"text": "x", "by": "Ada", "commit": "HEAD"}}, "pull_request.attestation.commit"),
    ],
)
def test_a_malformed_framing_is_refused_with_its_field_named(change, field):
    from findings.services.review_import import BundleInvalid

    data = {**BUNDLE, "pull_request": {**BUNDLE["pull_request"], **change}}
    with pytest.raises(BundleInvalid) as error:
        review_import(data=data)
    assert error.value.field == field
    assert not PullRequest.objects.exists()


def test_a_snippet_whose_code_could_not_be_read_says_why(client, tmp_path):
    review_import(data={
        "repository": {"slug": "acme/gone", "clone_url": str(tmp_path / "nowhere")},
        "pull_request": {"number": 1, "title": "Gone"},
        "commits": [{"sha": "d044f40", "role": "reviewed"}],
        "findings": [{"number": 1, "kind": "blocker", "title": "Tolerance", "evidence": [
            {"kind": "snippet", "path": "a.py", "start_line": 3, "end_line": 4}]}],
    })
    pull_request = PullRequest.objects.get(number=1)
    before = text_of(client.get(pull_request.get_absolute_url() + "blockers/").content.decode())
    assert "What the review recorded at d044f40 (1 item) — read from the repository at the first verification" in before

    pull_request_verify(pull_request=pull_request, commit=pull_request.pins.get().commit)

    page = text_of(client.get(pull_request.get_absolute_url() + "blockers/").content.decode())
    unreadable = page[page.index("The code could not be read"):]
    assert unreadable.startswith("The code could not be read from the repository at d044f40 : Repository unreachable:")
    # Readers are told that the fetch failed; why (git's own words) is for staff, on the repository.
    assert "the repository could not be fetched" in unreadable[:300]
    assert "does not exist or is not a directory" not in page
    pull_request.repository.refresh_from_db()
    assert "does not exist or is not a directory" in pull_request.repository.fetch_error


def test_the_markdown_export_counts_the_cleanups_not_recorded(demo):
    from findings.exchange.markdown import pull_request_markdown

    markdown = pull_request_markdown(pull_request=demo)

    assert "The review counts 5 cleanups that are not recorded here." in markdown
    assert "No cleanups recorded." not in markdown
