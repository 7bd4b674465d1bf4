"""A pull request's inbox of review threads, kept in step with the forge.

`review_threads_sync` reads every review comment of the pull request through its forge
(`forge.interface`: GitHub's review comments, GitLab's diff discussions) and makes the inbox say
what the forge says: one thread per first comment, each comment once by its id, edits applied, comments gone from the forge kept and marked deleted (a thread whose first
comment is gone says so). Reading again changes nothing that did not change. When the forge
cannot be read (404, 410, 422, 5xx, a rate limit), nothing in the inbox changes and the pull
request's `ThreadSync` keeps the forge's own answer, for its page.

A new comment that starts with `/recheck blocker` or `/recheck cleanup` is handed, once, to
`forge.threads.triage.thread_command_handle`."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from access.audit import audit_record, writes
from access.permissions import Action, actor_check
from core.forges import GITHUB
from findings.services.authoring import assign_changed
from forge.outbox.failures import Failure, retry_delay
from forge.interface import forge_of
from forge.threads.calls import REPLY_MARKER
from forge.threads.models import ReviewComment, ReviewThread, ThreadSync
from forge.threads.wire import WireComment, WireThread
from forge.threads.triage import COMMAND_PREFIX, thread_command_handle
from reviews.models import PullRequest


# The fields of a thread taken from its first comment (or, when that is gone, from a reply).
THREAD_FIELDS = ("path", "side", "subject_type", "original_commit_id", "original_start_line", "original_line",
                 "commit_id", "line", "diff_hunk", "html_url", "author_login")


@dataclass
class SyncOutcome:
    pull_request: PullRequest
    ok: bool
    message: str
    created: int = 0
    changed: int = 0
    deleted: int = 0
    commands: list[str] = field(default_factory=list)
    # Seconds after which reading again may work (a rate limit, a 5xx); None when it cannot help.
    retry_in: float | None = None


@writes("review_threads.sync")
def review_threads_sync(*, pull_request: PullRequest, actor=None) -> SyncOutcome:
    """Read the pull request's review threads from the forge into its inbox (see the module).
    `actor` None is the operator or a worker acting on a webhook."""
    repository = pull_request.repository
    actor_check(actor, Action.WRITE, repository, audit_action="review_threads.sync", target=pull_request.reference)
    tried = timezone.now()
    forge = forge_of(repository)
    try:
        comments, threads = forge.review_threads_read(repository=repository, number=pull_request.number)
    except Failure as failure:
        message = _failure_message(failure, forge.label, repository)
        ThreadSync.objects.update_or_create(pull_request=pull_request, defaults={
            "status": ThreadSync.Status.FAILED, "message": message, "response_status": failure.status,
            "tried_at": tried,
        })
        return SyncOutcome(pull_request, ok=False, message=message,
                           retry_in=retry_delay(failure, 1) if failure.retryable else None)
    with transaction.atomic():
        outcome = _apply(pull_request, comments)
        if threads is not None:
            _resolutions_apply(pull_request, threads)
        ThreadSync.objects.update_or_create(pull_request=pull_request, defaults={
            "status": ThreadSync.Status.OK, "message": "", "response_status": 200, "tried_at": tried,
            "synced_at": timezone.now(),
        })
        if outcome.created or outcome.changed or outcome.deleted:
            audit_record(action="review_threads.sync", actor=actor, target=pull_request.reference,
                         repository=repository, message=outcome.message)
    # Each command in its own transaction: one that fails leaves the others and the sync standing.
    for comment in _unhandled_commands(pull_request):
        outcome.commands.append(thread_command_handle(comment=comment))
    return outcome


def _failure_message(failure: Failure, label: str, repository) -> str:
    if failure.rate_limited:
        return f"{label}'s rate limit ({failure.status}): {failure.message}. Nothing was changed; sync again later."
    if failure.status in (404, 410):
        who = "installation" if repository.forge == GITHUB else "token"
        return (f"{label} answered {failure.status} ({failure.message}): the "
                f"{repository.forge_words.pull_request_word} or the repository is not there for Recheck's {who}. "
                "Nothing was changed.")
    return f"{label} answered {failure.status or 'nothing'}: {failure.message}. Nothing was changed."


def _apply(pull_request: PullRequest, comments: list[WireComment]) -> SyncOutcome:
    threads = {thread.root_comment_id: thread for thread in ReviewThread.objects.select_for_update().of(pull_request)}
    known = {comment.github_id: comment for comment in ReviewComment.objects.filter(thread__pull_request=pull_request)}
    by_root: dict[int, list[WireComment]] = {}
    for comment in sorted(comments, key=lambda c: c.id):
        by_root.setdefault(comment.root_id, []).append(comment)
    outcome = SyncOutcome(pull_request, ok=True, message="")
    for root_id, group in by_root.items():
        first = next((comment for comment in group if comment.id == root_id), None)
        thread = threads.get(root_id)
        source = first or group[0]
        values = {name: getattr(source, name) or ("" if name not in _NULLABLE else None) for name in THREAD_FIELDS}
        if thread is None:
            thread = ReviewThread(pull_request=pull_request, root_comment_id=root_id, **values)
            if first is None:
                thread.problem = ReviewThread.Problem.FIRST_DELETED
            thread.save()
            threads[root_id] = thread
            outcome.created += 1
        elif first is not None and assign_changed(thread, values):
            thread.save()
        for wire in group:
            outcome.changed += _comment_upsert(thread, wire, known)
    seen = {comment.id for comment in comments}
    gone = [comment for github_id, comment in known.items() if github_id not in seen and not comment.deleted]
    if gone:
        ReviewComment.objects.filter(pk__in=[comment.pk for comment in gone]).update(deleted=True)
        outcome.deleted = len(gone)
        roots = {threads[comment.github_id].pk for comment in gone if comment.github_id in threads}
        ReviewThread.objects.filter(pk__in=roots).update(problem=ReviewThread.Problem.FIRST_DELETED)
    # A thread whose first comment came back (an earlier read missed it) has no problem of that kind.
    back = [thread.pk for root_id, thread in threads.items() if root_id in seen
            and thread.problem == ReviewThread.Problem.FIRST_DELETED]
    ReviewThread.objects.filter(pk__in=back).update(problem="")
    outcome.message = (f"Read {len(comments)} review comments of {pull_request.reference}: {outcome.created} new "
                       f"threads, {outcome.changed} comments new or edited, {outcome.deleted} deleted.")
    return outcome


_NULLABLE = {"original_start_line", "original_line", "line"}


def _resolutions_apply(pull_request: PullRequest, threads: dict[int, WireThread]) -> None:
    for thread in ReviewThread.objects.of(pull_request).filter(root_comment_id__in=list(threads)):
        wire = threads[thread.root_comment_id]
        if (thread.node_id, thread.resolved) != (wire.node_id, wire.resolved):
            ReviewThread.objects.filter(pk=thread.pk).update(node_id=wire.node_id, resolved=wire.resolved)


def _comment_upsert(thread: ReviewThread, wire: WireComment, known: dict[int, ReviewComment]) -> int:
    values = {
        "in_reply_to_id": wire.in_reply_to_id, "author_login": wire.author_login, "author_id": wire.author_id,
        "body": wire.body, "html_url": wire.html_url, "created_at": wire.created_at, "updated_at": wire.updated_at,
        "deleted": False, "by_recheck": REPLY_MARKER in wire.body or wire.id == thread.reply_comment_id,
    }
    comment = known.get(wire.id)
    if comment is None:
        # A comment id another pull request holds would be GitHub's error: kept where it was first seen.
        comment, created = ReviewComment.objects.get_or_create(github_id=wire.id, defaults={"thread": thread, **values})
        known[wire.id] = comment
        return int(created)
    if comment.thread_id == thread.pk and assign_changed(comment, values):
        comment.save()
        return 1
    return 0


def _unhandled_commands(pull_request: PullRequest) -> list[ReviewComment]:
    return list(
        ReviewComment.objects.filter(thread__pull_request=pull_request, command_handled=False, deleted=False,
                                     by_recheck=False, body__istartswith=COMMAND_PREFIX)
        .select_related("thread__pull_request__repository").order_by("github_id")
    )


@writes("review_thread.resolution", system="what the forge says in a signed webhook delivery")
def review_thread_resolved_record(*, pull_request: PullRequest, root_comment_id: int, node_id: str,
                                  resolved: bool) -> ReviewThread | None:
    """What a `pull_request_review_thread` event says: the thread is resolved or unresolved on the
    forge (and its GraphQL id). A thread not in the inbox yet is left to the next sync."""
    thread = ReviewThread.objects.of(pull_request).filter(root_comment_id=root_comment_id).first()
    if thread is None:
        return None
    ReviewThread.objects.filter(pk=thread.pk).update(resolved=resolved, node_id=node_id or thread.node_id)
    thread.refresh_from_db()
    return thread
