"""The follow-ups' work in the background: a sweep queued by a merge, a push or beat, claimed by
one worker with a conditional update, and head tracking that notices a merge no webhook told of."""
import pytest

from findings.models import FollowUp, FollowUpSweep
from findings.services.follow_ups.sweeps import follow_up_sweep_claim, follow_up_sweep_request
from findings.services.tracking import pull_request_track_head
from findings.tasks import check_follow_ups, check_follow_ups_everywhere
from tests.findings.follow_up_world import merged_world, push_the_move_and_the_fix

pytestmark = pytest.mark.django_db


def test_the_merge_queues_a_check_at_its_merge_commit_that_a_worker_runs(tmp_path, eager_tasks,
                                                                         django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        world = merged_world(tmp_path)
    sweep = FollowUpSweep.objects.get()
    assert (sweep.status, sweep.sha, sweep.reason) == ("done", world.merge, "merge")
    assert world.follow_up(2).checked_commit.sha == world.merge


def test_a_duplicated_message_checks_nothing_twice(tmp_path):
    world = merged_world(tmp_path)
    sweep = FollowUpSweep.objects.get()
    assert follow_up_sweep_claim(sweep.pk) is not None
    assert follow_up_sweep_claim(sweep.pk) is None
    assert check_follow_ups(sweep.pk) == {"sweep": sweep.pk, "status": "claimed elsewhere"}
    assert world.follow_up(2).checked_commit is None


def test_a_push_named_twice_queues_one_sweep(tmp_path):
    world = merged_world(tmp_path)
    repository = world.pull_request.repository
    first = follow_up_sweep_request(repository=repository, sha="ab" * 20, reason="push")
    second = follow_up_sweep_request(repository=repository, sha="ab" * 20, reason="push")
    assert first.pk == second.pk
    assert FollowUpSweep.objects.filter(sha="ab" * 20).count() == 1


def test_a_repository_without_follow_ups_queues_nothing(tmp_path):
    world = merged_world(tmp_path, merge=False)
    assert follow_up_sweep_request(repository=world.pull_request.repository, reason="beat") is None


def test_beat_checks_every_repository_with_follow_ups_at_its_head(tmp_path, eager_tasks,
                                                                  django_capture_on_commit_callbacks):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    FollowUpSweep.objects.update(status="done")
    with django_capture_on_commit_callbacks(execute=True):
        assert check_follow_ups_everywhere() == 1
    assert world.follow_up(3).state == "verified_fixed"
    assert FollowUpSweep.objects.filter(reason="beat", status="done").count() == 1


def test_head_tracking_that_finds_the_head_on_the_default_branch_records_the_merge(tmp_path):
    world = merged_world(tmp_path, merge=False)
    head = world.repo.git("rev-parse", "feature")
    world.repo.update_ref("refs/pull/7/head", head)
    result = pull_request_track_head(pull_request=world.pull_request)
    assert "was merged into main; 2 follow-up(s) opened" in result["detail"]
    world.pull_request.refresh_from_db()
    assert world.pull_request.state == "merged"
    assert FollowUp.objects.count() == 2
    assert FollowUpSweep.objects.get().sha == ""


def test_head_tracking_of_an_unmerged_head_pins_it_as_before(tmp_path):
    world = merged_world(tmp_path, merge=False)
    world.repo.git("reset", "--hard", "--quiet", "HEAD~1")  # main without the merge
    world.repo.update_ref("refs/pull/7/head", world.repo.git("rev-parse", "feature"))
    result = pull_request_track_head(pull_request=world.pull_request)
    assert "Pinned" in result["detail"] or "already" in result["detail"]
    assert not FollowUp.objects.exists()


def test_a_sweep_whose_worker_died_is_failed_by_beat(tmp_path):
    from datetime import timedelta

    from django.utils import timezone

    merged_world(tmp_path)
    sweep = FollowUpSweep.objects.get()
    follow_up_sweep_claim(sweep.pk)
    FollowUpSweep.objects.filter(pk=sweep.pk).update(started_at=timezone.now() - timedelta(hours=2))
    check_follow_ups_everywhere()
    sweep.refresh_from_db()
    assert sweep.status == "failed" and "stopped" in sweep.message
