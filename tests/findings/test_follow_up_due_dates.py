"""A follow-up's due date, in a real git repository: set at the merge by the policy for its kind,
and started again when its evidence comes back on the default branch, where the policy says a
regression restarts the clock."""
from datetime import timedelta

import pytest
from django.utils import timezone

from findings.models import FollowUp
from findings.services.policy import repository_policy_update
from tests.findings.follow_up_world import check, merged_world, push_the_move_and_the_fix

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("restarts", [True, False])
def test_a_regression_restarts_the_clock_where_the_policy_says_so(tmp_path, settings, restarts):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    repository_policy_update(repository=world.pull_request.repository, actor=None, cleanup_due_days=5,
                             regression_restarts_clock=restarts)
    check(world)
    assert world.follow_up(3).state == FollowUp.State.VERIFIED_FIXED
    long_ago = timezone.now() - timedelta(days=40)
    FollowUp.objects.filter(pk=world.follow_up(3).pk).update(due_at=long_ago)
    # DEBUG comes back on main: the follow-up is open again.
    repo = world.repo
    repo.write("src/loader.py", repo.read("src/loader.py") + "\nDEBUG = True\n")
    back = repo.commit("DEBUG again")
    before = timezone.now()
    check(world, back)
    follow_up = world.follow_up(3)
    assert follow_up.state == FollowUp.State.OPEN
    if restarts:
        assert timedelta(days=5) <= follow_up.due_at - before < timedelta(days=5, minutes=1)
    else:
        assert follow_up.due_at == long_ago


def test_follow_ups_are_due_by_kind_from_the_merge(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    world = merged_world(tmp_path, merge=False)
    repository_policy_update(repository=world.pull_request.repository, actor=None, cleanup_due_days=9,
                             blocker_due_days=2)
    # The blocker, dismissed: a blocker's period; the cleanups: a cleanup's.
    from findings.services.follow_ups.opening import follow_ups_open_on_merge
    from findings.services.resolution import finding_resolve

    finding_resolve(finding=world.pull_request.findings.get(number=1), status="open", actor=None, source="api")
    finding_resolve(finding=world.pull_request.findings.get(number=1), status="dismissed", actor=None, source="api",
                    note="Not this time.")
    merged_at = timezone.now()
    follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    days = {f.finding.number: round((f.due_at - merged_at) / timedelta(days=1))
            for f in FollowUp.objects.select_related("finding")}
    assert days == {1: 2, 2: 9, 3: 9}
