"""Asking for a check of a repository's follow-ups at its default branch's head (a push, a
merge, beat) and claiming it for a worker (decision record 0003: a conditional update)."""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from access.audit import writes
from findings.enqueue import enqueue
from findings.models import FollowUp, FollowUpSweep
from reviews.models import Repository

logger = logging.getLogger(__name__)

# Why a sweep checks no person: it is asked for by the forge (a signed push or merge webhook),
# by beat, or by a worker, and reads only what the repository already publishes.
SWEEP = "a check of the default branch asked for by the forge, beat or a worker"
REASONS = ("push", "merge", "beat", "tracking")


@writes("follow_up.sweep", system=SWEEP)
def follow_up_sweep_request(*, repository: Repository, sha: str = "", reason: str) -> FollowUpSweep | None:
    """Queue a check of the repository's follow-ups at `sha` (a push's head, a merge commit) or,
    without one, at the default branch's head once fetched. None when the repository has nothing
    to check. A sweep already queued for the same head is returned instead of a second one; the
    task is enqueued once the transaction commits."""
    if reason not in REASONS:
        raise ValueError(f"Unknown reason {reason!r}")
    if not FollowUp.objects.for_repository(repository).checked_on_the_default_branch().exists():
        return None
    sha = sha.strip().lower()
    try:
        with transaction.atomic():
            sweep = FollowUpSweep.objects.create(repository=repository, sha=sha, reason=reason)
    except IntegrityError:
        # The unique index on queued sweeps: one for this head is waiting already.
        return FollowUpSweep.objects.filter(repository=repository, sha=sha, status=FollowUpSweep.Status.QUEUED).first()
    transaction.on_commit(lambda: enqueue("findings.tasks.check_follow_ups", sweep.pk))
    return sweep


@writes("follow_up.sweep", system=SWEEP)
def follow_up_sweep_claim(sweep_id: int) -> FollowUpSweep | None:
    """Move a queued sweep to running and return it; None when another worker has it already (a
    duplicated or redelivered message)."""
    claimed = FollowUpSweep.objects.filter(pk=sweep_id, status=FollowUpSweep.Status.QUEUED).update(
        status=FollowUpSweep.Status.RUNNING, started_at=timezone.now()
    )
    if claimed != 1:
        return None
    return FollowUpSweep.objects.select_related("repository").get(pk=sweep_id)


@writes("follow_up.sweep", system=SWEEP)
def follow_up_sweep_finish(sweep: FollowUpSweep, *, message: str, failed: bool = False) -> None:
    status = FollowUpSweep.Status.FAILED if failed else FollowUpSweep.Status.DONE
    FollowUpSweep.objects.filter(pk=sweep.pk).update(status=status, message=message[:2000], finished_at=timezone.now())


@writes("follow_up.sweep", system=SWEEP)
def follow_up_sweeps_reap(*, now=None) -> int:
    """Fail the sweeps a worker claimed and never finished (it died): longer running than any task
    may run. Their follow-ups are checked again by the next push or beat."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
    return FollowUpSweep.objects.filter(status=FollowUpSweep.Status.RUNNING, started_at__lt=stale).update(
        status=FollowUpSweep.Status.FAILED, finished_at=now, message="The worker stopped before it finished.")


@writes("follow_up.sweep", system=SWEEP)
def follow_up_sweeps_request_all() -> int:
    """Beat's job: a check at the head of every repository that has follow-ups to check (and the
    sweeps whose worker died are failed first)."""
    follow_up_sweeps_reap()
    repositories = Repository.objects.filter(
        pk__in=FollowUp.objects.checked_on_the_default_branch().values("repository_id")
    )
    count = 0
    for repository in repositories:
        if follow_up_sweep_request(repository=repository, reason="beat") is not None:
            count += 1
    return count
