"""Requesting a verification of a pull request, claiming it for a worker and reporting its
progress. The run row is what the site and the API show while a worker is busy."""
import datetime
import logging
import time

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from access.audit import audit_record, audit_refusal, writes
from access.permissions import Action, actor_check
from findings.enqueue import enqueue
from findings.models import VerificationRun
from findings.signals import verification_run_changed
from findings.state.stored import pull_request_state_derive
from findings.state.timeline import timeline_event_write
from core.errors import RecheckError
from core.vocabulary import events as ev
from reviews.mirrors import commit_resolve
from reviews.models import PinnedCommit, PullRequest, Repository
from reviews.selectors import worker_hosts
from reviews.services import commit_get_or_create, commit_sha_checked, pull_request_changed

logger = logging.getLogger(__name__)


def enqueue_errors() -> tuple[type[BaseException], ...]:
    """What publishing a message raises when the broker is down or unreachable. A function, named
    in `except enqueue_errors()`, which Python evaluates only once something was raised: kombu is
    loaded by a process that hands work on, not by every process that imports the services."""
    from kombu.exceptions import OperationalError as BrokerError

    return (BrokerError, OSError)


QUEUE_RETRY_AFTER_SECONDS = 30


# Why a run's own bookkeeping checks no person: a worker does it, for a run that
# `verification_run_request` checked and recorded.
WORKER = "a worker's bookkeeping of a run verification_run_request checked and recorded"


class QueueUnavailable(RecheckError):
    """The work was recorded but could not be handed to a worker: ask again in a moment."""

    retry_after = QUEUE_RETRY_AFTER_SECONDS


class UnknownCommit(RecheckError):
    """A SHA that names no commit of the repository: nothing is verified or reported for it."""


# It fetches the repository's mirror (recording the fetch), for a request or a run that checks
# and records its actor.
@writes("repository.fetch", within=(
    "findings.services.runs.verification_run_request", "findings.services.runs.verification_run_begin",
))
def verification_commit_checked(*, repository: Repository, sha: str, fetch: bool = True) -> str:
    """The full SHA of the commit `sha` (full or abbreviated) names in the repository's mirror,
    fetching the mirror first when it does not know the commit yet (unless not `fetch`).
    UnknownCommit when the repository, fetched just now, has no such commit or cannot be fetched:
    a SHA nobody can show to be a commit gets no run, no commit row and no report on GitHub."""
    sha = commit_sha_checked(sha)
    try:
        return commit_resolve(repository=repository, sha=sha, fetch=False)
    except RecheckError as error:
        if not fetch:
            raise UnknownCommit(f"Commit {sha} cannot be verified in {repository.slug}: {error}") from None
        # not fetched yet, or the commit is newer than the last fetch
    try:
        return commit_resolve(repository=repository, sha=sha, fetch=True)
    except RecheckError as error:
        raise UnknownCommit(f"Commit {sha} cannot be verified in {repository.slug}: {error}") from None


@writes("verification.request")
def verification_run_request(
    *, pull_request: PullRequest, commit_sha: str | None = None, requested_by=None, retry_of=None,
    commit_known: bool = False,
) -> VerificationRun:
    """Queue a verification of `pull_request` at `commit_sha` (or at every pinned commit), or
    return the active run that already covers it: one active run per PR and commit, however many
    people, hooks and beats ask. A new run has `created` set; the task is enqueued once the
    transaction commits, so a worker never sees a run that is not there yet. The audit log records
    each request, the ones an active run answered and the refused ones included.

    When the broker cannot take the task, the run is marked failed and QueueUnavailable is raised
    where the transaction commits, so the caller can answer 503 instead of "queued".

    A `commit_sha` must name a commit of the repository (`verification_commit_checked`), unless
    `commit_known`: the SHA came from the forge (a signed delivery, the fetched head ref), which
    vouches for it, or is an earlier run's; the verification fetches it (a webhook must answer
    without waiting for a fetch).

    A person's request needs the Reviewer role on the repository; a retry the reaper queues for a
    run that died is the server's own, whoever asked first."""
    if retry_of is None:
        actor_check(requested_by, Action.VERIFY, pull_request.repository, audit_action="verification.request",
                    target=_run_target(pull_request, commit_sha))
    try:
        if commit_sha and not commit_known:
            commit_sha = verification_commit_checked(repository=pull_request.repository, sha=commit_sha)
        return _verification_run_request(
            pull_request=pull_request, commit_sha=commit_sha, requested_by=requested_by, retry_of=retry_of
        )
    except RecheckError as error:
        audit_refusal(
            action="verification.request", actor=requested_by, target=_run_target(pull_request, commit_sha),
            repository=pull_request.repository, message=str(error),
        )
        raise


def _run_target(pull_request: PullRequest, commit_sha: str | None) -> str:
    return f"{pull_request.reference} at {commit_sha}" if commit_sha else f"{pull_request.reference} at every pinned commit"


@transaction.atomic
def _verification_run_request(*, pull_request, commit_sha, requested_by, retry_of) -> VerificationRun:
    # Concurrent requests for one PR queue behind this lock, so two of them cannot both see no
    # active run and both create one.
    PullRequest.objects.select_for_update().filter(pk=pull_request.pk).first()
    commit = commit_get_or_create(repository=pull_request.repository, sha=commit_sha) if commit_sha else None
    # A dead run (its worker killed) covers nothing: the reaper will fail it, and this request
    # must not wait on it.
    active = VerificationRun.objects.live().filter(pull_request=pull_request, commit=commit).latest_first().first()
    target = _run_target(pull_request, commit.sha if commit else None)
    if active is not None:
        active.created = False
        audit_record(
            action="verification.request", actor=requested_by, target=target, repository=pull_request.repository,
            message=f"Run {active.pk} already covers it.",
        )
        return active
    run = VerificationRun.objects.create(
        pull_request=pull_request, commit=commit, requested_by=requested_by, retry_of=retry_of
    )
    run.created = True
    audit_record(
        action="verification.request", actor=requested_by, target=target, repository=pull_request.repository,
        message=f"Run {run.pk} queued.",
    )
    # Before the verification is enqueued, so GitHub hears "in progress" before "completed".
    verification_run_changed.send(sender=VerificationRun, run=run)

    def send():
        try:
            result = enqueue("findings.tasks.run_verification", run.pk)
        except enqueue_errors() as error:
            # The broker's own message names hosts and ports: logged for staff, not shown.
            logger.error("Verification run %s could not be queued: %s", run.pk, error)
            failed = VerificationRun.objects.active().filter(pk=run.pk).update(
                status=VerificationRun.Status.FAILED,
                finished_at=timezone.now(),
                message="The verification could not be queued: the task queue is not answering. "
                "Request it again in a moment (staff: check that CELERY_BROKER_URL is reachable).",
            )
            pull_request_changed(pull_request_id=run.pull_request_id)
            if failed:
                verification_run_changed.send(sender=VerificationRun, run=run)
            raise QueueUnavailable(
                f"Verification run {run.pk} could not be queued: the task queue is not answering. "
                f"Nothing runs until it is requested again; retry in {QUEUE_RETRY_AFTER_SECONDS} seconds."
            ) from None
        except Exception:
            # Run in-process (no broker configured), the task itself failed and recorded why.
            logger.exception("Verification run %s failed", run.pk)
            return
        VerificationRun.objects.filter(pk=run.pk, task_id="").update(task_id=result.id or "")

    transaction.on_commit(send)
    return run


@writes("verification.run", system=WORKER)
def verification_run_claim(run_id: int, *, worker: str = "", task_id: str = "") -> VerificationRun | None:
    """Move a queued run to running and return it, or None when it is not queued any more: a
    redelivered or duplicated message finds the run claimed and does nothing twice.

    `worker` is the Celery worker claiming it (its node name) and `task_id` the task carrying it
    out, recorded in the same update: that worker's heartbeats then vouch for the run while the
    task is active in its process (`verification_runs_vouch`), and the reaper fails it once they
    stop (decision 0032). None for a run carried out in-process: it keeps the time rule alone."""
    now = timezone.now()
    claim = {"status": VerificationRun.Status.RUNNING, "started_at": now, "heartbeat_at": now,
             "worker": worker, "worker_seen_at": now if worker else None}
    if task_id:
        claim["task_id"] = task_id
    claimed = VerificationRun.objects.filter(pk=run_id, status=VerificationRun.Status.QUEUED).update(**claim)
    if claimed != 1:
        return None
    return VerificationRun.objects.select_related("pull_request__repository", "commit").get(pk=run_id)


@writes("verification.run", system=WORKER)
def verification_runs_vouch(*, worker: str, task_ids) -> int:
    """A heartbeat of the worker `worker`: the runs it claimed whose tasks (`task_ids`) are active
    in its process now are still being carried out. A run claimed by an earlier process of the
    same name, or whose pool process was lost, is not among them, and lapses. Returns how many."""
    task_ids = list(task_ids)
    if not task_ids:
        return 0
    return VerificationRun.objects.filter(
        status=VerificationRun.Status.RUNNING, worker=worker, task_id__in=task_ids
    ).update(worker_seen_at=timezone.now())


# Why superseding checks no person: it follows a newer head the forge reported (a signed webhook,
# or beat's tracking), whose run verification_run_request recorded.
NEWER_HEAD = "a newer head reported by the forge takes the place of runs queued for older ones"


@writes("verification.supersede", system=NEWER_HEAD)
def verification_runs_supersede(*, run: VerificationRun) -> list[int]:
    """A burst of pushes verifies the newest head: the runs still queued (not claimed by a worker)
    for heads of `run`'s pull request pinned before `run`'s commit are superseded by `run`, each
    with a conditional update, so a worker that claimed one first keeps it. Returns their ids.
    A run over every pin, or a person's run at a commit that is not a head, is never superseded."""
    if run.commit_id is None:
        return []
    heads = PinnedCommit.objects.filter(pull_request_id=run.pull_request_id).heads()
    newest = heads.filter(commit_id=run.commit_id).first()
    if newest is None:
        return []
    older = heads.filter(Q(pinned_at__lt=newest.pinned_at) | Q(pinned_at=newest.pinned_at, pk__lt=newest.pk))
    queued = VerificationRun.objects.filter(
        pull_request_id=run.pull_request_id, status=VerificationRun.Status.QUEUED,
        commit_id__in=older.values("commit_id"),
    )
    sha = run.commit.short_sha if run.commit else ""
    superseded = queued.update(
        status=VerificationRun.Status.SUPERSEDED, superseded_by=run, finished_at=timezone.now(),
        message=f"Superseded by run {run.pk} of the newer head {sha} before a worker took it.",
    )
    if not superseded:
        return []
    replaced = list(VerificationRun.objects.filter(superseded_by=run).order_by("pk"))
    ids = [older.pk for older in replaced]
    for older in replaced:
        # Its head's "in progress" on the forge is ended as superseded, not left running for ever.
        verification_run_changed.send(sender=VerificationRun, run=older)
    audit_record(
        action="verification.supersede", actor=None, target=_run_target(run.pull_request, sha),
        repository=run.pull_request.repository, message=f"Run {run.pk} supersedes queued run(s) {', '.join(map(str, ids))}.",
    )
    pull_request_changed(pull_request_id=run.pull_request_id)
    return ids


@writes("verification.run", system=WORKER)
def verification_run_begin(
    *, pull_request: PullRequest, commit=None, commit_sha: str | None = None, requested_by=None, fetch: bool = True,
) -> VerificationRun:
    """A run that its caller carries out itself (the `verify` command), claimed as it is created,
    at `commit` (a recorded commit), at `commit_sha` (checked as `verification_run_request` checks
    it, before anything is written; the mirror is fetched for it only with `fetch`) or at every
    pinned commit."""
    if commit_sha:
        try:
            full = verification_commit_checked(repository=pull_request.repository, sha=commit_sha, fetch=fetch)
        except RecheckError as error:
            audit_refusal(
                action="verification.request", actor=requested_by, target=_run_target(pull_request, commit_sha),
                repository=pull_request.repository, message=str(error),
            )
            raise
        commit = commit_get_or_create(repository=pull_request.repository, sha=full)
    with transaction.atomic():
        run = VerificationRun.objects.create(
            pull_request=pull_request, commit=commit, requested_by=requested_by,
            status=VerificationRun.Status.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now(),
        )
        audit_record(
            action="verification.request", actor=requested_by,
            target=_run_target(pull_request, commit.sha if commit else None), repository=pull_request.repository,
            message=f"Run {run.pk} carried out at once.",
        )
    return run


@writes("verification.run", system=WORKER)
def verification_run_start(run: VerificationRun, *, total: int) -> None:
    """Record how much work the claimed run has ahead of it."""
    VerificationRun.objects.filter(pk=run.pk).update(total=total, done=0, heartbeat_at=timezone.now())


@writes("verification.run", system=WORKER)
def verification_run_advance(run: VerificationRun, *, by: int = 1) -> None:
    """Count progress and show a sign of life. Best-effort: the results are the record, so a
    database blip while reporting progress never aborts the work."""
    try:
        VerificationRun.objects.filter(pk=run.pk).update(done=F("done") + by, heartbeat_at=timezone.now())
    except DatabaseError as error:
        logger.warning("Progress of run %s not recorded: %s", run.pk, error)


@writes("verification.run", system=WORKER)
def verification_run_finish(run: VerificationRun, *, message: str = "", failed: bool = False) -> None:
    """End the run, and say so (`verification_run_changed`: the forge tells GitHub what the gate now says, when the repository publishes).
    Written through a reconnect: a database that restarts while the run ends must not leave it
    `running`."""
    ended = persistently(
        lambda: VerificationRun.objects.active().filter(pk=run.pk).update(
            status=VerificationRun.Status.FAILED if failed else VerificationRun.Status.DONE,
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
            message=message,
        )
    )
    if not ended:
        # Ended already: reaped meanwhile (its worker was cut off for longer than the lapse window,
        # then came back). The run stays failed, as the reaper said, and its retry is what ends it.
        logger.warning("Run %s ended after it was reaped; its end is not recorded over the reaper's", run.pk)
        pull_request_changed(pull_request_id=run.pull_request_id)
        return
    if failed:
        try:
            _run_event(run, kind=ev.RUN_FAILED, message=message)
        except DatabaseError as error:
            logger.warning("Failure of run %s not put on the timeline: %s", run.pk, error)
    # The gate stops reporting the run as under way.
    pull_request_changed(pull_request_id=run.pull_request_id)
    # Derived now, in the task that verified, so the merge bot asking next reads it stored.
    # Best effort: a reader that finds no state for the generation derives it itself.
    try:
        pull_request_state_derive(pull_request_id=run.pull_request_id)
    except DatabaseError as error:
        logger.warning("State of pull request %s not stored after run %s: %s", run.pull_request_id, run.pk, error)
    verification_run_changed.send(sender=VerificationRun, run=run)


@writes("verification.run", system=WORKER)
def verification_run_release(run_id: int, *, message: str) -> bool:
    """Hand a claimed run back to the queue (running -> queued), for a task that retries after a
    database error. False when the run is not running any more."""
    return bool(
        persistently(
            lambda: VerificationRun.objects.filter(pk=run_id, status=VerificationRun.Status.RUNNING).update(
                status=VerificationRun.Status.QUEUED, heartbeat_at=timezone.now(), message=message
            )
        )
    )


@writes("verification.run", system=WORKER)
def verification_runs_reap(*, now=None) -> list[tuple[int, int | None]]:
    """Fail every dead run and queue it again once: a run with no sign of life for longer than a
    task may run (its worker was killed, or its message lost with the broker), and a running run
    whose worker stopped vouching for it for longer than RECHECK_WORKER_LAPSE_SECONDS (its host
    died, its process was killed or restarted: decision 0032). Returns (dead run, new run or None)
    pairs. Safe to run twice and beside a live worker: each run is failed with a conditional
    update that only matches while it is still active and still dead by those rules."""
    now = now or timezone.now()
    reaped = []
    dead = list(VerificationRun.objects.dead(now=now).select_related("pull_request", "commit").order_by("id"))
    lapsed = set(VerificationRun.objects.lapsed(now=now).filter(pk__in=[run.pk for run in dead]).values_list("pk", flat=True))
    alive = {host.hostname for host in worker_hosts(within_seconds=settings.RECHECK_WORKER_LAPSE_SECONDS, now=now)}
    for run in dead:
        gone = _gone(run, lapsed=run.pk in lapsed, worker_alive=run.worker in alive)
        try:
            # One transaction: whoever sees the dead run failed also sees its retry.
            with transaction.atomic():
                failed = VerificationRun.objects.dead(now=now).filter(pk=run.pk).update(
                    status=VerificationRun.Status.FAILED, finished_at=now
                )
                if failed != 1:
                    continue
                retry = None
                if run.retry_of_id is None:
                    retry = verification_run_request(
                        pull_request=run.pull_request,
                        commit_sha=run.commit.sha if run.commit else None,
                        commit_known=True,
                        requested_by=run.requested_by,
                        retry_of=run,
                    )
                message = _reaped_message(gone, retry)
                VerificationRun.objects.filter(pk=run.pk).update(message=message)
                _run_event(run, kind=ev.RUN_REAPED, message=message, retry=retry.pk if retry else None)
            verification_run_changed.send(sender=VerificationRun, run=run)
        except QueueUnavailable:
            # Committed: the retry is marked failed with its own message, saying to ask again.
            logger.error("Dead run %s was queued again as a retry, but the broker did not take it", run.pk)
        logger.warning("Reaped dead verification run %s: %s", run.pk, message)
        reaped.append((run.pk, retry.pk if retry else None))
    return reaped


def _run_event(run: VerificationRun, *, kind: str, message: str, retry: int | None = None) -> None:
    """The run's failure on its PR's timeline, once (keyed by the run)."""
    sha = run.commit.sha if run.commit_id else ""
    timeline_event_write(
        repository_id=run.pull_request.repository_id, pull_request_id=run.pull_request_id, kind=kind,
        key=f"{kind}:{run.pk}", sha=sha,
        payload={"run": run.pk, "message": message, "retry": retry, "commit": sha or None},
    )


def _at(moment) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _gone(run: VerificationRun, *, lapsed: bool, worker_alive: bool) -> str:
    """Why the run is dead: its worker's name when that worker stopped vouching for it (and
    whether the worker of that name is still alive), else the run's own silence."""
    if not lapsed:
        return f"The worker stopped showing signs of life (last at {_at(run.heartbeat_at)})"
    if worker_alive:
        # The name beats on: a new process of it (a restart), or a process that lost the pool
        # process carrying the task out.
        return (f"The worker {run.worker} stopped saying it is running this verification (last at "
                f"{_at(run.worker_seen_at)}): it was restarted, or lost the process running it")
    return f"The worker {run.worker} stopped saying it is alive (last at {_at(run.worker_seen_at)})"


def _reaped_message(gone: str, retry: VerificationRun | None) -> str:
    if retry is None:
        return f"{gone} and this run was a retry already; request a verification again."
    if retry.created:
        return f"{gone}; queued again as run {retry.pk}."
    return f"{gone}; run {retry.pk}, requested meanwhile, covers it."


def persistently(write, *, attempts: int = 6, first_wait: float = 0.5):
    """Run `write` (one query, idempotent) until the database takes it, reconnecting in between
    with a doubling wait (0.5 s to 16 s, about half a minute in all: a database restart)."""
    wait = first_wait
    for attempt in range(attempts):
        try:
            return write()
        except (OperationalError, InterfaceError) as error:
            if attempt == attempts - 1 or connection_in_atomic_block():
                raise
            logger.warning("Database write failed (%s); retrying in %.1f s", error, wait)
            for connection in connections.all(initialized_only=True):
                connection.close()
            time.sleep(wait)
            wait *= 2
    return None


def connection_in_atomic_block() -> bool:
    # Inside a transaction a reconnect would lose the transaction's earlier writes silently.
    return any(connection.in_atomic_block for connection in connections.all(initialized_only=True))
