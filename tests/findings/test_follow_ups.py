"""Follow-ups end to end in a real git repository: opened when a pull request merges, checked at
the default branch's head with the review's relocation, decided by a person."""
import pytest

from access.models import AuditEntry
from access.permissions import ActionRefused
from core.errors import EvidenceStillHolds, ResolutionError
from findings.models import Finding, FollowUp, FollowUpEvent, FollowUpSweep
from findings.services.follow_ups.decisions import follow_up_close, follow_up_mark_fixed
from findings.services.follow_ups.opening import follow_ups_open_on_merge, pull_request_closed_record
from reviews.models import Commit, PullRequest
from tests.factories import UserFactory
from tests.findings.follow_up_world import check, merged_world, push_the_move_and_the_fix

pytestmark = pytest.mark.django_db


def test_a_merged_pull_request_s_open_cleanups_become_follow_ups_at_its_merge_commit(tmp_path):
    world = merged_world(tmp_path)
    follow_ups = FollowUp.objects.filter(pull_request=world.pull_request).order_by("finding__number")
    assert [(f.finding.number, f.origin, f.state) for f in follow_ups] == [
        (2, "open_cleanup", "open"), (3, "open_cleanup", "open")
    ]
    assert {f.merge_commit.sha for f in follow_ups} == {world.merge}
    world.pull_request.refresh_from_db()
    assert world.pull_request.state == "merged"
    assert [e.kind for e in follow_ups[0].events.all()] == ["merged"]
    assert FollowUpSweep.objects.get().sha == world.merge


def test_the_same_merge_reported_twice_opens_nothing_twice(tmp_path):
    world = merged_world(tmp_path)
    again = follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    assert again == []
    assert FollowUp.objects.count() == 2
    assert FollowUpEvent.objects.filter(kind="merged").count() == 2


def test_a_pull_request_closed_without_merging_opens_no_follow_up(tmp_path):
    world = merged_world(tmp_path, merge=False)
    assert pull_request_closed_record(pull_request=world.pull_request, merged=False) == []
    world.pull_request.refresh_from_db()
    assert world.pull_request.state == "closed"
    assert not FollowUp.objects.exists() and not FollowUpSweep.objects.exists()


def test_dismissed_and_fixed_anyway_blockers_are_followed_up_too(tmp_path):
    world = merged_world(tmp_path, merge=False)
    blocker = world.pull_request.findings.get(number=1)
    blocker.status, blocker.resolution_note = "dismissed", "later"
    blocker.save()
    follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    assert FollowUp.objects.get(finding=blocker).origin == "dismissed_blocker"


def test_at_the_merge_commit_both_are_still_present_where_the_review_left_them(tmp_path):
    world = merged_world(tmp_path)
    result = check(world, world.merge)
    assert result.problem == "" and result.changed == {}
    helper = world.follow_up(2)
    assert (helper.verdict, helper.checked_commit.sha, helper.state) == ("present", world.merge, "open")
    assert helper.places[0]["state"] == "holds" and helper.places[0]["location"] == "src/loader.py:13–14"


def test_pushes_that_move_one_and_fix_the_other_show_one_moved_and_one_verified_fixed(tmp_path):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world, world.merge)
    result = check(world)  # the head of main, read after fetching
    assert result.commit.sha == world.fixed
    helper, debug = world.follow_up(2), world.follow_up(3)
    assert (helper.state, helper.verdict) == ("open", "present")
    assert helper.places[0]["state"] == "moved" and helper.places[0]["location"] == "src/helpers.py:3–4"
    assert (debug.state, debug.verdict, debug.fixed_commit.sha) == ("verified_fixed", "likely_fixed", world.fixed)
    assert debug.places[0]["state"] == "gone" and debug.places[0]["last_seen"] == "src/loader.py:16"
    [event] = debug.events.filter(kind="verified")
    assert (event.from_state, event.to_state, event.commit.sha) == ("open", "verified_fixed", world.fixed)
    # A check that changes nothing adds nothing to the history.
    check(world)
    assert debug.events.filter(kind="verified").count() == 1
    # The finding is still open: a person decides it is fixed.
    assert debug.finding.status == "open"


def test_a_file_deleted_on_the_default_branch_says_where_its_evidence_was_last_seen(tmp_path):
    world = merged_world(tmp_path)
    check(world, world.merge)
    world.repo.delete("src/loader.py").commit("drop the loader")
    check(world)
    helper = world.follow_up(2)
    assert helper.places[0]["state"] == "gone"
    assert helper.places[0]["last_seen"] == "src/loader.py:13–14"


def test_a_merge_commit_the_mirror_cannot_fetch_is_an_error_never_fixed(tmp_path):
    world = merged_world(tmp_path)
    result = check(world, "ab" * 20)
    assert "not in the mirror" in result.problem
    for number in (2, 3):
        follow_up = world.follow_up(number)
        assert (follow_up.state, follow_up.verdict) == ("open", "error")


def test_a_renamed_default_branch_is_an_error_until_it_is_recorded(tmp_path):
    world = merged_world(tmp_path)
    world.repo.git("branch", "-m", "main", "trunk")
    result = check(world)
    assert "default branch 'main' is not in" in result.problem
    assert world.follow_up(3).verdict == "error" and world.follow_up(3).state == "open"
    repository = world.pull_request.repository
    repository.default_branch = "trunk"
    repository.save()
    assert check(world).problem == ""


def test_a_force_pushed_default_branch_is_said_in_the_history(tmp_path):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world, world.moved)
    world.repo.git("reset", "--hard", "--quiet", world.merge)
    world.repo.write("src/loader.py", world.repo.read("src/loader.py").replace("\nDEBUG = True\n", ""))
    rewritten = world.repo.commit("no DEBUG, rewritten")
    check(world)
    event = world.follow_up(3).events.get(kind="verified")
    assert event.commit.sha == rewritten and "rewritten" in event.note


def test_evidence_back_reopens_a_verified_follow_up(tmp_path):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world)
    world.repo.write("src/loader.py", world.repo.read("src/loader.py") + "\nDEBUG = True\n").commit("oops")
    check(world)
    debug = world.follow_up(3)
    assert (debug.state, debug.fixed_commit) == ("open", None)
    assert list(debug.events.values_list("to_state", flat=True)) == ["open", "verified_fixed", "open"]


def maintainer():
    return UserFactory(groups=["Maintainer"])


def test_a_maintainer_marks_a_verified_follow_up_fixed_at_the_fixing_commit(tmp_path):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world)
    person = maintainer()
    follow_up = follow_up_mark_fixed(actor=person, follow_up=world.follow_up(3))
    assert (follow_up.state, follow_up.decided_by, follow_up.fixed_commit.sha) == ("fixed", person, world.fixed)
    finding = Finding.objects.get(pk=follow_up.finding_id)
    assert (finding.status, finding.resolved_commit.sha, finding.resolved_by) == ("fixed", world.fixed, person)
    assert AuditEntry.objects.filter(action="follow_up.mark_fixed", actor=person).exists()
    with pytest.raises(ResolutionError, match="already fixed"):
        follow_up_mark_fixed(actor=person, follow_up=follow_up)


def test_marking_fixed_where_the_evidence_still_holds_needs_anyway_and_a_note(tmp_path):
    world = merged_world(tmp_path)
    check(world, world.merge)
    with pytest.raises(EvidenceStillHolds):
        follow_up_mark_fixed(actor=maintainer(), follow_up=world.follow_up(2), commit_sha=world.merge)
    with pytest.raises(ResolutionError, match="Say why"):
        follow_up_mark_fixed(actor=maintainer(), follow_up=world.follow_up(2), commit_sha=world.merge,
                             still_holds_confirmed=True)
    assert world.follow_up(2).state == "open"


def test_an_open_follow_up_without_a_commit_is_not_marked_fixed(tmp_path):
    world = merged_world(tmp_path)
    with pytest.raises(ResolutionError, match="which commit"):
        follow_up_mark_fixed(actor=maintainer(), follow_up=world.follow_up(2))


def test_a_regression_after_the_mark_is_flagged_not_reopened(tmp_path):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world)
    follow_up_mark_fixed(actor=maintainer(), follow_up=world.follow_up(3))
    world.repo.write("src/loader.py", world.repo.read("src/loader.py") + "\nDEBUG = True\n").commit("oops")
    check(world)
    debug = world.follow_up(3)
    assert (debug.state, debug.regressed) == ("fixed", True)
    assert debug.events.last().kind == "regressed"


def test_closing_needs_a_reason_dismisses_the_finding_and_stops_the_checks(tmp_path):
    world = merged_world(tmp_path)
    person = maintainer()
    with pytest.raises(ResolutionError, match="reason"):
        follow_up_close(actor=person, follow_up=world.follow_up(2), reason=" ")
    follow_up = follow_up_close(actor=person, follow_up=world.follow_up(2), reason="Done in #9 instead.")
    assert (follow_up.state, follow_up.reason, follow_up.decided_by) == ("closed", "Done in #9 instead.", person)
    finding = Finding.objects.get(pk=follow_up.finding_id)
    assert (finding.status, finding.resolution_note) == ("dismissed", "Done in #9 instead.")
    check(world)
    assert world.follow_up(2).checked_commit is None


def test_a_reader_may_neither_mark_nor_close_and_the_refusal_is_recorded(tmp_path):
    world = merged_world(tmp_path)
    reader = UserFactory(groups=["Reviewer"])
    with pytest.raises(ActionRefused):
        follow_up_close(actor=reader, follow_up=world.follow_up(2), reason="no")
    with pytest.raises(ActionRefused):
        follow_up_mark_fixed(actor=reader, follow_up=world.follow_up(2), commit_sha=world.merge)
    assert AuditEntry.objects.filter(outcome="refused", actor=reader).count() == 2
    assert world.follow_up(2).state == "open"


def test_the_merge_commit_is_recorded_once_as_a_commit_of_the_repository(tmp_path):
    world = merged_world(tmp_path)
    assert Commit.objects.filter(sha=world.merge).count() == 1
    assert PullRequest.objects.get(pk=world.pull_request.pk).state == "merged"
