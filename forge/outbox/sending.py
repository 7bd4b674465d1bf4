"""Sending the outbox: each call to its forge when it is due, once, in order per target.

A sender (a worker's task, beat, or without a broker `manage.py send_forge_calls`) claims a due
call with a conditional update that also moves its due time a lease ahead, so two senders never
send it together and a sender that dies mid-call leaves it due again once the lease runs out. A
call that fails is due again after the backoff its forge's answer calls for (`retry_delay`: its
Retry-After or rate-limit reset, else an exponential backoff up to hours); a rate limit holds back
every call it covers (the forge says which: `Forge.rate_limit_scope`) until the forge's time. After
RECHECK_GITHUB_MAX_ATTEMPTS, or at once for an answer no retry can change (401, 403, 404, 422), the
call is failed with the forge's message and what to fix (`Forge.failure_hint`), and waits for a
person to resend it from the repository's page.

Before a call goes out, the forge's budget for the whole installation is asked
(`forge.outbox.budget`); a call it cannot take yet goes back to pending, due when the budget says,
its attempt not counted."""
import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import connections, transaction
from django.db.models import F
from django.utils import timezone

from core.rounds import rounds_run_until_stopped
from findings.models import VerificationRun
from forge.outbox.budget import BudgetUnavailable, forge_budget
from forge.outbox.failures import Failure, retry_delay
from forge.interface import forge_named
from forge.outbox.models import ForgeCall
from forge.outbox.services import run_report_calls
from forge.outbox.wake import outbox_wake, sender_event

logger = logging.getLogger(__name__)

SEND_BATCH = 100


def _lease() -> timedelta:
    # Long enough for a report's every request (a token, a lookup, several annotation batches).
    return timedelta(seconds=max(60.0, 20 * float(settings.RECHECK_GITHUB_TIMEOUT)))


def forge_call_send(*, call_id: int, now=None) -> ForgeCall | None:
    """Send one call if it is due and the earlier calls of its target are done. Returns the row
    after the attempt, or None when there was nothing to do (not due yet, claimed by another
    sender, finished, an earlier call goes first and hands on to this one when it is done, or the
    forge's budget holds it back until it is due again)."""
    return _send(call_id=call_id, now=now)[0]


def _send(*, call_id: int, now=None) -> tuple[ForgeCall | None, bool]:
    """`forge_call_send`, and whether the forge's budget held the call back."""
    now = now or timezone.now()
    call = ForgeCall.objects.select_related("repository", "pull_request").filter(pk=call_id).first()
    if call is None or call.is_finished:
        return None, False
    if call.due_at > now:
        outbox_wake([call])  # a task that came early: it is handed on for its time
        return None, False
    if ForgeCall.objects.for_target(call).unfinished().filter(pk__lt=call.pk).exists():
        return None, False
    claimed = ForgeCall.objects.filter(pk=call.pk, status__in=[ForgeCall.Status.PENDING, ForgeCall.Status.SENDING],
                                        due_at__lte=now).update(
        status=ForgeCall.Status.SENDING, attempts=F("attempts") + 1, due_at=now + _lease()
    )
    if claimed != 1:
        return None, False
    call.refresh_from_db()
    if call.kind != ForgeCall.Kind.REPORT:
        try:
            wait = _budget_wait(call)
        except Failure as failure:  # the forge could not say which budget (an installation unknown)
            _failed(call, failure)
            call.refresh_from_db()
            return call, False
        if wait:
            _wait_for_budget(call, wait)
            return None, True
    try:
        if call.kind == ForgeCall.Kind.REPORT:
            github_id, status, wait = _prepare(call), None, None
        else:
            github_id, status, wait = forge_named(call.forge).call_send(call)
    except Failure as failure:
        _failed(call, failure)
    except Exception as error:
        # Not GitHub's answer (an answer githubkit cannot read, a database error): logged for staff,
        # and tried again like a failure, so it counts towards the attempts and is not lost.
        logger.exception("Sending forge call %s failed", call.pk)
        _failed(call, Failure(None, f"Recheck could not send it: {type(error).__name__}: {error}"[:2000],
                              retryable=True))
    else:
        ForgeCall.objects.filter(pk=call.pk).update(
            status=ForgeCall.Status.SENT, sent_at=timezone.now(), github_id=github_id, response_status=status,
            response_message="", hint="",
        )
        if wait:
            _hold_back(call, wait)
    call.refresh_from_db()
    if call.is_finished:
        following = ForgeCall.objects.for_target(call).filter(pk__gt=call.pk, status=ForgeCall.Status.PENDING)
        next_call = following.order_by("id").first()
        if next_call is not None:
            with transaction.atomic():
                outbox_wake([next_call])
    return call, False


def forge_calls_send_due(*, now=None, limit: int = SEND_BATCH) -> int:
    """Send every call that is due (in order per target); returns how many were attempted."""
    attempted = 0
    skipped: set[int] = set()
    # A repository whose budget is spent: its other calls wait too, without each asking. (A budget
    # covers many repositories, an installation's; each of the others asks once and is held too.)
    spent: set[int] = set()
    while attempted < limit:
        moment = now or timezone.now()
        due = ForgeCall.objects.due(moment).exclude(pk__in=skipped).exclude(repository_id__in=spent)
        row = due.order_by("due_at", "id").values_list("pk", "repository_id").first()
        if row is None:
            break
        call, held_back = _send(call_id=row[0], now=moment)
        if held_back:
            spent.add(row[1])
        elif call is None:
            skipped.add(row[0])  # an earlier call of its target goes first, or another sender has it
        else:
            attempted += 1
    return attempted


def forge_calls_next_due():
    """When the next unfinished call falls due, or None when there is none."""
    return ForgeCall.objects.unfinished().order_by("due_at").values_list("due_at", flat=True).first()


def forge_calls_send_forever(*, stop: threading.Event, poll: float | None = None) -> None:
    """The sender of a process without a worker: send what is due, then sleep until the next
    call falls due, new calls are written in this process, or `poll` seconds pass (calls written
    by other processes), until `stop` is set. Errors are logged and the loop goes on."""
    rounds_run_until_stopped(
        stop=stop, wake=sender_event,
        poll=float(settings.RECHECK_GITHUB_SEND_INTERVAL_SECONDS if poll is None else poll),
        round_run=_round, after_round=connections.close_all, what="Sending the due forge calls", logger=logger,
    )


def _round() -> float | None:
    forge_calls_send_due()
    next_due = forge_calls_next_due()
    return None if next_due is None else (next_due - timezone.now()).total_seconds()


def _prepare(call: ForgeCall) -> None:
    """A report that could not be prepared when its run changed: prepare it now."""
    run = VerificationRun.objects.filter(pk=call.body.get("run")).first()
    if run is None:
        return None
    try:
        with transaction.atomic():
            run_report_calls(run)
    except Exception as error:
        logger.exception("Preparing the report of verification run %s failed again", run.pk)
        raise Failure(None, f"Preparing the report failed: {error}", retryable=True) from None
    return None


def _budget_wait(call: ForgeCall) -> float:
    """0 when the budget of the call's installation (or forge server) takes it now, else the
    seconds it must wait."""
    key = forge_named(call.forge).budget_key(call)
    try:
        return forge_budget().acquire(key)
    except BudgetUnavailable as error:
        # Fail closed: every worker sending blind is what gets an installation blocked.
        logger.warning("The forge budget is not answering (%s); call %s waits", error, call.pk)
        return float(settings.RECHECK_FORGE_BUDGET_RETRY_SECONDS)


def _wait_for_budget(call: ForgeCall, seconds: float) -> None:
    """Back to pending, due when the budget allows, the attempt it was claimed with not counted."""
    due_at = timezone.now() + timedelta(seconds=seconds)
    with transaction.atomic():
        ForgeCall.objects.filter(pk=call.pk, status=ForgeCall.Status.SENDING).update(
            status=ForgeCall.Status.PENDING, attempts=F("attempts") - 1, due_at=due_at
        )
        call.due_at = due_at
        outbox_wake([call])


def _failed(call: ForgeCall, failure: Failure) -> None:
    retry = failure.retryable and call.attempts < settings.RECHECK_GITHUB_MAX_ATTEMPTS
    delay = retry_delay(failure, call.attempts) if retry else 0.0
    due_at = timezone.now() + timedelta(seconds=delay)
    with transaction.atomic():
        ForgeCall.objects.filter(pk=call.pk).update(
            status=ForgeCall.Status.PENDING if retry else ForgeCall.Status.FAILED,
            response_status=failure.status,
            response_message=failure.message,
            hint=forge_named(call.forge).failure_hint(call, failure, gave_up=failure.retryable and not retry),
            due_at=due_at,
        )
        if failure.rate_limited:
            _hold_back(call, delay)
        if retry:
            call.due_at = due_at
            outbox_wake([call])


def _hold_back(call: ForgeCall, seconds: float) -> None:
    """Every waiting call the rate limit `call` met covers (its forge says which: a GitHub App's
    counts per installation, a token's per token) waits, and no other forge's."""
    until = timezone.now() + timedelta(seconds=seconds)
    try:
        # Calls another worker claims meanwhile wait too, not only those waiting in the outbox now.
        forge_budget().hold(forge_named(call.forge).budget_key(call), seconds)
    except (BudgetUnavailable, Failure) as error:
        logger.warning("The forge budget is not answering (%s); the rate limit is held in the outbox only", error)
    waiting = ForgeCall.objects.filter(status=ForgeCall.Status.PENDING, due_at__lt=until, forge=call.forge)
    waiting.filter(**forge_named(call.forge).rate_limit_scope(call)).update(due_at=until)
