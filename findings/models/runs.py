"""Verification runs: a requested verification of a pull request, its progress while a worker is
busy with it, and which runs are alive."""
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core import vocabulary as v
from findings.models.querysets import _readable
from reviews.models import Commit, PullRequest


def _lapsed(now) -> Q:
    lapse = now - timedelta(seconds=settings.RECHECK_WORKER_LAPSE_SECONDS)
    return Q(status=v.RUN_RUNNING) & ~Q(worker="") & Q(worker_seen_at__lt=lapse)


class VerificationRunQuerySet(models.QuerySet):
    def readable_by(self, user):
        """The runs of pull requests in repositories `user` may read."""
        return _readable(self, user, "pull_request__repository")

    def active(self):
        """Queued or running."""
        return self.filter(status__in=[VerificationRun.Status.QUEUED, VerificationRun.Status.RUNNING])

    def latest_first(self):
        return self.order_by("-created_at", "-id")

    def live(self):
        """Active runs whose worker still shows signs of life: a run without one for longer than
        a task may run (RECHECK_RUN_STALE_SECONDS) is dead, whatever its status says, and is
        waited on by nobody (the verify button, the gate, a new request) until it is reaped.

        A run whose worker stopped vouching for it (`lapsed`) counts as live until the reaper
        fails it, at most one reap interval later: the gate's and the page keys' own queries
        read the same rule."""
        return self.active().filter(heartbeat_at__gte=timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS))

    def lapsed(self, *, now=None):
        """Running runs whose worker stopped saying it is running them: not vouched for (by the
        claim, then by every heartbeat of the worker process carrying them out) for longer than
        RECHECK_WORKER_LAPSE_SECONDS. Its host died, the process was killed or restarted, or the
        pool process running the task was lost. A run with no recorded worker never lapses."""
        return self.filter(_lapsed(now or timezone.now()))

    def dead(self, *, now=None):
        """Active runs without a sign of life for longer than RECHECK_RUN_STALE_SECONDS, and
        running runs whose worker lapsed (`lapsed`)."""
        now = now or timezone.now()
        silent = Q(heartbeat_at__lt=now - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS))
        return self.active().filter(silent | _lapsed(now))

    def covering(self, commit):
        """Runs that will give `commit` its verdicts: at that commit, or at every pin."""
        return self.filter(Q(commit=commit) | Q(commit__isnull=True))


class VerificationRun(models.Model):
    """A requested verification of a pull request (at one commit, or at every pin), with its
    progress, so the site and the API can show it while a worker is busy."""

    class Status(models.TextChoices):
        QUEUED = v.RUN_QUEUED, v.RUN_STATUS_LABELS[v.RUN_QUEUED]
        RUNNING = v.RUN_RUNNING, v.RUN_STATUS_LABELS[v.RUN_RUNNING]
        DONE = v.RUN_DONE, v.RUN_STATUS_LABELS[v.RUN_DONE]
        FAILED = v.RUN_FAILED, v.RUN_STATUS_LABELS[v.RUN_FAILED]
        SUPERSEDED = v.RUN_SUPERSEDED, v.RUN_STATUS_LABELS[v.RUN_SUPERSEDED]

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="verification_runs")
    commit = models.ForeignKey(Commit, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    task_id = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The last sign of life: set when the run is queued, claimed and as it progresses.
    heartbeat_at = models.DateTimeField(default=timezone.now, db_index=True)
    # The Celery worker that claimed it (its node name, `name@host`, as its heartbeat names it), and
    # when that worker's process last said it was running it: at the claim, then at each of its
    # heartbeats while the task is active in it (decision 0032). Blank for a run carried out
    # in-process, without a broker, and for the runs from before.
    worker = models.CharField(max_length=255, blank=True)
    worker_seen_at = models.DateTimeField(null=True, blank=True)
    # The dead run this one was queued again for; a retry that dies too is not retried again.
    retry_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retried_as"
    )
    # The run of a newer head that took this queued one's place (status superseded).
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )

    objects = VerificationRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["pull_request", "status"], name="run_pr_status"),
            # A worker's heartbeat and the reaper look only at running runs, few in a large table.
            models.Index(fields=["worker", "worker_seen_at"], name="run_running_worker",
                         condition=Q(status=v.RUN_RUNNING)),
        ]

    def __str__(self) -> str:
        return f"{self.pull_request} run {self.pk}: {self.status}"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_live(self) -> bool:
        """Active, and its worker showed a sign of life recently (see VerificationRunQuerySet.live)."""
        stale = timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
        return self.is_active and self.heartbeat_at >= stale

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0
