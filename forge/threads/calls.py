"""What Recheck says in review threads, through the outbox: rows written in the caller's
transaction, sent by `forge.outbox.sending` with its leases, backoff and Retry-After.

- A verdict reply (`thread_reply`, state `verdict`) is one per thread: created once, then edited
  in place (its id is kept on the thread, at once, so a later failure of the call never makes a
  second one); a reply that was deleted on GitHub (404 on the edit) is made again.
- Any other reply (state `answer`: who may triage) is a new reply, once.
- A reply tried again after GitHub did not answer in time is looked for in the thread first (the
  same text), so it is never made twice.
- A resolution (`thread_resolve`) asks GitHub's GraphQL to resolve or unresolve the thread,
  finding its id first when no webhook has told it yet. Resolving twice is harmless."""
from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.db.models import Max
from django.utils import timezone

from forge.outbox.models import ForgeCall
from forge.threads.models import ReviewThread
from forge.outbox.wake import outbox_wake

VERDICT, ANSWER = "verdict", "answer"
# GitHub's secondary rate limit allows about 80 content-creating requests a minute: thread calls
# are spaced so that a verification of a pull request with many threads stays under it.
PACE = timedelta(seconds=60 / 80)
# Recheck's own replies carry this, so reading them back never takes them for a reviewer's.
REPLY_MARKER = "<!-- recheck:thread-reply -->"


def thread_call_record(*, thread: ReviewThread, kind: str, state: str, body: dict) -> ForgeCall:
    """A call about `thread`, due as soon as the pace allows; the sender is woken once the caller's
    transaction commits."""
    pull_request = thread.pull_request
    if kind == ForgeCall.Kind.THREAD_REPLY and REPLY_MARKER not in body["body"]:
        body = {**body, "body": f"{REPLY_MARKER}\n{body['body']}"}
    call = ForgeCall.objects.create(
        forge=pull_request.repository.forge, due_at=_paced(pull_request.repository), repository_id=pull_request.repository_id, pull_request=pull_request,
        review_thread=thread,
        sha=thread.commit_id or thread.original_commit_id or "", kind=kind, state=state,
        digest=hashlib.sha256(json.dumps([kind, thread.pk, body], sort_keys=True).encode()).hexdigest(), body=body,
    )
    outbox_wake([call])
    return call


def _paced(repository):
    """Now, or one PACE after the last thread call still waiting for the same installation."""
    now = timezone.now()
    waiting = ForgeCall.objects.unfinished().filter(kind__in=ForgeCall.THREAD_KINDS)
    if repository.github_installation_id:
        waiting = waiting.filter(repository__github_installation_id=repository.github_installation_id)
    else:
        waiting = waiting.filter(repository=repository)
    last = waiting.aggregate(last=Max("due_at"))["last"]
    return max(now, last + PACE) if last else now
