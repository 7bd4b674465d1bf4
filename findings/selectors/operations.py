"""Figures for operating the workers: how long verification waits, and how long a push waits for
its verdict. Read by the health page and the Prometheus metrics (recheck.operations)."""
from datetime import datetime

from django.db.models import OuterRef, Subquery

from findings.models import VerificationRun
from reviews.models import PinnedCommit


def oldest_queued_run_at() -> datetime | None:
    """When the verification waiting longest was queued (None: none waits)."""
    return (
        VerificationRun.objects.filter(status=VerificationRun.Status.QUEUED)
        .order_by("created_at").values_list("created_at", flat=True).first()
    )


def push_to_verdict_seconds(*, since: datetime) -> list[float]:
    """For each run of a pushed head that ended done since `since`: seconds from the head's pin
    (the push recorded) to the run's end (its verdicts stored)."""
    pushed_at = PinnedCommit.objects.filter(
        pull_request=OuterRef("pull_request"), commit=OuterRef("commit"), role=PinnedCommit.Role.HEAD
    ).order_by("pinned_at").values("pinned_at")[:1]
    rows = (
        VerificationRun.objects.filter(status=VerificationRun.Status.DONE, finished_at__gte=since, commit__isnull=False)
        .annotate(pushed_at=Subquery(pushed_at))
        .exclude(pushed_at=None)
        .values_list("pushed_at", "finished_at")
    )
    return sorted(max(0.0, (finished - pushed).total_seconds()) for pushed, finished in rows)
