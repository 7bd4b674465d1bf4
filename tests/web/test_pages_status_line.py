"""The sentences the pages compute from the data (plain functions, no database)."""
import pytest

from presentation import wording


@pytest.mark.parametrize("number, word", [(0, "zero"), (1, "one"), (9, "nine"), (10, "10"), (29, "29")])
def test_numbers_under_ten_are_spelled_out(number, word):
    assert wording.number_word(number) == word


def test_the_seed_status_line_reads_as_the_reviewer_wrote_it():
    blockers = wording.blockers_sentence("Open", ["open"] * 9)
    checked = wording.verification_sentence(["present"] * 9, pin=wording.pin_phrase("d044f40", "rebased"))
    assert f"{blockers} {checked}" == (
        "Open — none of the nine blockers are fixed. All re-checked against d044f40 after the rebase; all still present."
    )


def test_some_blockers_closed_are_counted_by_how_they_closed():
    assert wording.blockers_sentence("Open", ["open", "fixed", "dismissed", "open"]) == (
        "Open — two of four blockers are still open; one fixed and one dismissed."
    )
    assert wording.blockers_sentence("Open", ["fixed", "open"]) == "Open — one of two blockers is still open; one fixed."


def test_all_blockers_closed_or_none_recorded():
    assert wording.blockers_sentence("Merged", ["fixed"] * 3) == "Merged — all three blockers are fixed."
    assert wording.blockers_sentence("Open", ["fixed", "dismissed"]) == (
        "Open — both blockers are resolved: one fixed and one dismissed."
    )
    assert wording.blockers_sentence("Open", ["open"]) == "Open — its one blocker is not fixed."
    assert wording.blockers_sentence("Open", []) == "Open — the review recorded no blockers."


def test_mixed_verdicts_are_listed_worst_news_first():
    sentence = wording.verification_sentence(
        ["likely_fixed", "present", "partly_fixed", "present", "error"], pin="abc1234, the head"
    )
    assert sentence == (
        "All re-checked against abc1234, the head: two still present, one likely fixed, "
        "one partly fixed and one could not be checked."
    )


def test_findings_not_verified_at_the_latest_commit_are_counted_out():
    assert wording.verification_sentence(["present", None, "present"], pin="abc1234 after the rebase") == (
        "Two of three re-checked against abc1234 after the rebase; each still present."
    )
    assert wording.verification_sentence([None], pin="abc1234 after the rebase") == (
        "None re-checked against abc1234 after the rebase yet."
    )


def test_without_a_verified_commit_it_says_so():
    assert wording.verification_sentence(["present"], pin=None) == "Not verified against any pinned commit yet."
    assert wording.verification_sentence([], pin="abc") == ""


def test_a_first_check_is_not_called_a_recheck():
    assert wording.verification_sentence(["present"], pin="abc1234, the reviewed commit", rechecked=False) == (
        "Checked against abc1234, the reviewed commit; still present."
    )


def test_cleanups_and_the_blockers_intro():
    assert wording.cleanups_sentence(["open"] * 5) == "Five cleanups can land afterwards."
    assert wording.cleanups_sentence(["fixed"]) == "Its one cleanup is resolved."
    assert wording.cleanups_sentence(["fixed", "dismissed"]) == "Both cleanups are resolved."
    assert wording.cleanups_sentence([]) == ""
    assert wording.blockers_intro(findings=14, cleanups=5, caught_by_ci=3, unchecked=6) == (
        "The review recorded 14 findings. Five are cleanups that can land afterwards. The nine below "
        "stop this from merging: three that a CI job catches, and six that no job checks at all."
    )
    assert wording.blockers_intro(findings=1, cleanups=0, caught_by_ci=1, unchecked=0) == (
        "The review recorded one finding. The one below stops this from merging: a CI job catches it."
    )
    assert wording.blockers_intro(findings=2, cleanups=2, caught_by_ci=0, unchecked=0) == (
        "The review recorded two findings. Two are cleanups that can land afterwards. Nothing stops this from merging."
    )
