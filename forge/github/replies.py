"""What Recheck says in a GitHub pull request's review threads, sent by the outbox: the rows are
written for both forges by `forge.threads.calls` (see there for what each call does); GitLab's are
sent by `forge.gitlab.replies`."""
from __future__ import annotations

from forge.github.threads import (
    review_comments_read,
    thread_node_id,
    thread_reply_create,
    thread_reply_edit,
    thread_resolution_set,
)
from forge.outbox.failures import Failure
from forge.outbox.models import ForgeCall
from forge.threads.calls import VERDICT
from forge.threads.models import ReviewThread


def thread_call_send(call: ForgeCall) -> tuple[int | None, object | None]:
    """Send a thread's call to GitHub (GitLab's: `forge.gitlab.replies`); returns GitHub's id of the reply (None for a resolution) and its answer."""
    thread = ReviewThread.objects.select_related("pull_request__repository").get(pk=call.review_thread_id)
    repository = thread.pull_request.repository
    if call.kind == ForgeCall.Kind.THREAD_RESOLVE:
        return None, _resolve(call, thread)
    body = call.body["body"]
    if call.state == VERDICT and thread.reply_comment_id:
        try:
            return thread_reply_edit(repository, thread.reply_comment_id, body)
        except Failure as failure:
            if failure.status != 404:
                raise
    if call.github_id:  # an earlier attempt made it, and the call failed after
        return call.github_id, None
    made = _made_unanswered(call, thread) if call.attempts > 1 else None
    if made is not None:
        reply_id, answer = made, None
    else:
        reply_id, answer = thread_reply_create(repository, thread.pull_request.number, thread.root_comment_id,
                                               body)
    ForgeCall.objects.filter(pk=call.pk).update(github_id=reply_id)
    if call.state == VERDICT:
        ReviewThread.objects.filter(pk=thread.pk).update(reply_comment_id=reply_id)
    return reply_id, answer


def _made_unanswered(call: ForgeCall, thread: ReviewThread) -> int | None:
    """The reply an earlier attempt of `call` made without Recheck hearing GitHub's answer (it
    answered after the client's timeout): the same text in the same thread."""
    comments = review_comments_read(thread.pull_request.repository, thread.pull_request.number)
    return next((comment.id for comment in comments if comment.in_reply_to_id == thread.root_comment_id
                 and comment.body == call.body["body"]), None)


def _resolve(call: ForgeCall, thread: ReviewThread):
    repository = thread.pull_request.repository
    node_id = thread.node_id
    if not node_id:
        found = thread_node_id(repository, thread.pull_request.number, thread.root_comment_id)
        if found is None:
            raise Failure(404, f"GitHub shows no review thread starting with comment {thread.root_comment_id}.",
                          retryable=False)
        node_id = found[0]
        ReviewThread.objects.filter(pk=thread.pk).update(node_id=node_id)
    resolved = thread_resolution_set(repository, node_id, bool(call.body["resolved"]))
    ReviewThread.objects.filter(pk=thread.pk).update(resolved=resolved)
    return None
